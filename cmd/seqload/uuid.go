package main

import (
	"bytes"
	"fmt"

	"github.com/seqd/seqd/uuidv7"
)

// parseUUID decodes the wire form. Upper-case digits are refused: the API promises
// lower case, and text order equals byte order only when every id is written the same
// way.
func parseUUID(s string) (uuidv7.UUID, error) {
	u, err := uuidv7.Parse(s)
	if err != nil {
		return u, fmt.Errorf("uuid %q: %w", s, err)
	}
	if u.String() != s {
		return u, fmt.Errorf("uuid %q: not lowercase", s)
	}
	if !u.IsV7() {
		return u, fmt.Errorf("uuid %q: version %d, want 7 of variant 10", s, u.Version())
	}
	return u, nil
}

// decodeUUIDs appends the ids of a GET /uuid body, as decodeObjectIDs does for /oid:
// {"uuids":[…]} with want ids when the request carried a count, else {"uuid":…}.
func decodeUUIDs(dst []uuidv7.UUID, body []byte, list bool, want int) ([]uuidv7.UUID, error) {
	if list {
		if out, ok := appendUUIDList(dst, body, want); ok {
			return out, nil
		}
	}
	return decodeIDs(dst, body, list, want, "uuid", parseUUID)
}

// appendUUIDList reads a body of exactly the form seqd writes, {"uuids":["…",…]} with
// want lowercase version 7 UUIDs and no white space but a final newline, without
// reflection or allocation, like appendOIDList. ok is false for anything else, which
// the caller then reads, and judges, the slow way.
func appendUUIDList(dst []uuidv7.UUID, body []byte, want int) (_ []uuidv7.UUID, ok bool) {
	const head, tail, item = `{"uuids":[`, "]}", 36 + 3 // quotes and comma
	b, found := bytes.CutPrefix(body, []byte(head))
	if !found {
		return dst, false
	}
	b = bytes.TrimSuffix(b, []byte("\n"))
	if len(b) != want*item-1+len(tail) || !bytes.HasSuffix(b, []byte(tail)) {
		return dst, false
	}
	n := len(dst)
	var canonical [36]byte
	for i := range want {
		it := b[i*item:]
		if it[0] != '"' || it[37] != '"' || i < want-1 && it[38] != ',' {
			return dst[:n], false
		}
		var u uuidv7.UUID
		if u.UnmarshalText(it[1:37]) != nil || !u.IsV7() {
			return dst[:n], false
		}
		if out, _ := u.AppendText(canonical[:0]); !bytes.Equal(out, it[1:37]) { // lower case only
			return dst[:n], false
		}
		dst = append(dst, u)
	}
	return dst, true
}
