package main

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/seqd/seqd/objectid"
)

// Decoding a 2xx body either appends every value of the response or appends nothing and
// returns an error: a response that breaks the API's promises counts as "invalid".

// decodeObjectIDs appends the ids of a GET /oid body. list says the request carried a
// count parameter, so the body is {"oids":[…]} with want ids; otherwise it is {"oid":…}.
func decodeObjectIDs(dst []objectid.ID, body []byte, list bool, want int) ([]objectid.ID, error) {
	if list {
		if out, ok := appendOIDList(dst, body, want); ok {
			return out, nil
		}
	}
	return decodeIDs(dst, body, list, want, "oid", parseObjectID)
}

// decodeIDs reads, the slow way, the body of a route that hands out ids of one
// kind: {"<one>":…} without a count, {"<one>s":[…]} with want ids with one. It
// appends every id, each of the wire type W made a T by parse, or none.
func decodeIDs[T, W any](dst []T, body []byte, list bool, want int, one string, parse func(W) (T, error)) ([]T, error) {
	var resp map[string]json.RawMessage
	if err := json.Unmarshal(body, &resp); err != nil {
		return dst, fmt.Errorf("%s body: %w", one, err)
	}
	var ids []W
	if raw := resp[one+"s"]; list {
		if raw == nil || string(raw) == "null" {
			return dst, fmt.Errorf(`%s body: no "%ss" list`, one, one)
		}
		if err := json.Unmarshal(raw, &ids); err != nil {
			return dst, fmt.Errorf("%s body: %w", one, err)
		}
	} else {
		raw := resp[one]
		if raw == nil || string(raw) == "null" {
			return dst, fmt.Errorf(`%s body: no "%s"`, one, one)
		}
		ids = make([]W, 1)
		if err := json.Unmarshal(raw, &ids[0]); err != nil {
			return dst, fmt.Errorf("%s body: %w", one, err)
		}
	}
	if len(ids) != want {
		return dst, fmt.Errorf("%s body: %d ids, want %d", one, len(ids), want)
	}
	n := len(dst)
	for _, w := range ids {
		id, err := parse(w)
		if err != nil {
			return dst[:n], err
		}
		dst = append(dst, id)
	}
	return dst, nil
}

// appendOIDList reads a body of exactly the form seqd writes, {"oids":["…",…]} with
// want ids of 24 lowercase hex digits and no white space but a final newline, without
// reflection or allocation: at a million ids a second, encoding/json would make
// seqload, not the server, the bottleneck. ok is false for anything else, which the
// caller then reads, and judges, the slow way.
func appendOIDList(dst []objectid.ID, body []byte, want int) (_ []objectid.ID, ok bool) {
	const head, tail = `{"oids":[`, "]}"
	b, found := bytes.CutPrefix(body, []byte(head))
	if !found {
		return dst, false
	}
	b = bytes.TrimSuffix(b, []byte("\n"))
	if len(b) != want*27-1+len(tail) || !bytes.HasSuffix(b, []byte(tail)) {
		return dst, false
	}
	n := len(dst)
	for i := range want {
		item := b[i*27:]
		if item[0] != '"' || item[25] != '"' || i < want-1 && item[26] != ',' {
			return dst[:n], false
		}
		var id objectid.ID
		for j := range id {
			hi, okHi := lowerHex(item[1+2*j])
			lo, okLo := lowerHex(item[2+2*j])
			if !okHi || !okLo {
				return dst[:n], false
			}
			id[j] = hi<<4 | lo
		}
		dst = append(dst, id)
	}
	return dst, true
}

func lowerHex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}

// seqWant is what a /seq/{name}/next response must match.
type seqWant struct {
	name     string
	count    int64
	strategy string // "" accepts whichever strategy the server picked
}

// decodeSequence returns the values first..last of a /seq/{name}/next body: a range, so
// that a request for many values costs no more to record than one for a single value.
func decodeSequence(body []byte, want seqWant) (first, last int64, err error) {
	var resp struct {
		Name     string `json:"name"`
		Value    *int64 `json:"value"`
		First    *int64 `json:"first"`
		Count    int64  `json:"count"`
		Strategy string `json:"strategy"`
	}
	if err := json.Unmarshal(body, &resp); err != nil {
		return 0, 0, fmt.Errorf("seq body: %w", err)
	}
	switch {
	case resp.Value == nil || resp.First == nil:
		return 0, 0, fmt.Errorf(`seq body: "value" or "first" missing`)
	case resp.Name != want.name:
		return 0, 0, fmt.Errorf("seq body: name %q, want %q", resp.Name, want.name)
	case want.strategy != "" && resp.Strategy != want.strategy:
		return 0, 0, fmt.Errorf("seq body: strategy %q, want %q", resp.Strategy, want.strategy)
	case resp.Count != want.count:
		return 0, 0, fmt.Errorf("seq body: count %d, want %d", resp.Count, want.count)
	case *resp.Value < *resp.First || *resp.Value-*resp.First != resp.Count-1:
		return 0, 0, fmt.Errorf("seq body: first %d..value %d is not %d values", *resp.First, *resp.Value, resp.Count)
	}
	return *resp.First, *resp.Value, nil
}
