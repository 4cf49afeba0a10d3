package httpapi_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"mime"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/seqd/seqd"
	"github.com/seqd/seqd/httpapi"
)

// FuzzPutBody checks that readPutBody never panics and either refuses a body with
// a 4xx *Error, or accepts one that is a JSON object of value, mode, min_block and
// max_block, at least one, and returns what it holds: a value from 0, a mode of
// strict or cached, bounds only with it, both 0 or 1 ≤ min ≤ max ≤ 1,000,000.
func FuzzPutBody(f *testing.F) {
	for _, seed := range []struct{ contentType, body string }{
		{"application/json", `{"value":42}`},
		{"", `{"value":0}`},
		{"application/json; charset=utf-8", `{"value":9223372036854775807}`},
		{"application/json", `{"value":9223372036854775808}`},
		{"application/json", `{"value":-1}`},
		{"application/json", `{"value":1.5}`},
		{"application/json", `{"value":"1"}`},
		{"application/json", `{"value":1e3}`},
		{"application/json", `{"value":null}`},
		{"application/json", `{"Value":1}`},
		{"application/json", `{"value":1,"x":2}`},
		{"application/json", `{"value":1,"value":2}`},
		{"application/json", `{"value":1} x`},
		{"application/json", `{"value":1}}`},
		{"application/json", `{"value":1}{"value":2}`},
		{"application/json", ``},
		{"application/json", `{}`},
		{"application/json", `null`},
		{"application/json", "\xff\xfe"},
		{"text/plain", `{"value":1}`},
		{"application/json;;", `{"value":1}`},
		{"application/json", `{"mode":"cached"}`},
		{"application/json", `{"value":5,"mode":"strict","min_block":1,"max_block":1000000}`},
		{"application/json", `{"mode":"cached","min_block":0,"max_block":0}`},
		{"application/json", `{"mode":"cached","min_block":5,"max_block":4}`},
		{"application/json", `{"mode":"cached","min_block":"5","max_block":10}`},
		{"application/json", `{"mode":"cached","max_block":10}`},
		{"application/json", `{"min_block":1,"max_block":10}`},
		{"application/json", `{"mode":"CACHED"}`},
		{"application/json", `{"mode":1}`},
		{"application/json", `{"mode":"cached","mode":"strict"}`},
		{"application/json", `{"mode":"\u0063ached"}`},
	} {
		f.Add(seed.contentType, []byte(seed.body))
	}
	f.Fuzz(func(t *testing.T, contentType string, body []byte) {
		req := httptest.NewRequest(http.MethodPut, "/seq/x", bytes.NewReader(body))
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		got, err := httpapi.ReadPutBody(req)
		if err != nil {
			var apiErr *httpapi.Error
			if !errors.As(err, &apiErr) || httpapi.StatusOf(apiErr.Code) < 400 || httpapi.StatusOf(apiErr.Code) > 499 || apiErr.Code == "" {
				t.Fatalf("ReadPutBody(%q, %q) = %v (%T), want a 4xx *Error", contentType, body, err, err)
			}
			return
		}
		if contentType != "" {
			if mt, _, err := mime.ParseMediaType(contentType); err != nil || mt != "application/json" {
				t.Fatalf("ReadPutBody accepted Content-Type %q", contentType)
			}
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(body, &fields); err != nil || len(fields) == 0 {
			t.Fatalf("ReadPutBody(%q) = %+v, but the body is not an object with fields (%v)", body, got, err)
		}
		want := httpapi.PutBody{}
		for k, raw := range fields {
			switch k {
			case "value":
				v, ok := bodyInteger(raw)
				if !ok || v < 0 || (raw[0] != '"' && v > 1<<53-1) {
					t.Fatalf("ReadPutBody(%q) accepted value %s", body, raw)
				}
				want.Value = &v
			case "mode":
				if err := json.Unmarshal(raw, &want.Mode); err != nil || (want.Mode != seqd.ModeStrict && want.Mode != seqd.ModeCached) {
					t.Fatalf("ReadPutBody(%q) accepted mode %s", body, raw)
				}
			case "min_block", "max_block":
				n, ok := bodyInteger(raw)
				if !ok {
					t.Fatalf("ReadPutBody(%q) accepted %s %s", body, k, raw)
				}
				if k == "min_block" {
					want.MinBlock = n
				} else {
					want.MaxBlock = n
				}
			default:
				t.Fatalf("ReadPutBody(%q) accepted field %q", body, k)
			}
		}
		_, hasMin := fields["min_block"]
		_, hasMax := fields["max_block"]
		if hasMin != hasMax || (hasMin && want.Mode == "") {
			t.Fatalf("ReadPutBody(%q) accepted bounds without their pair or without mode", body)
		}
		if b := want; !(b.MinBlock == 0 && b.MaxBlock == 0) && !(1 <= b.MinBlock && b.MinBlock <= b.MaxBlock && b.MaxBlock <= 1_000_000) {
			t.Fatalf("ReadPutBody(%q) accepted bounds %d..%d", body, b.MinBlock, b.MaxBlock)
		}
		if (got.Value == nil) != (want.Value == nil) || (got.Value != nil && *got.Value != *want.Value) ||
			got.Mode != want.Mode || got.MinBlock != want.MinBlock || got.MaxBlock != want.MaxBlock {
			t.Fatalf("ReadPutBody(%q) = %+v, want %+v", body, got, want)
		}
	})
}

// FuzzQueryCount checks that no count, nor anything else in the query string,
// makes /oid or /seq/{name}/next fail on the server side, and that intParam keeps
// to its bounds.
func FuzzQueryCount(f *testing.F) {
	for _, seed := range []string{
		"1", "0", "-1", "10000", "10001", "1000000", "1000001", "abc", "1.5", "", "+5", "0x10",
		"9223372036854775807", "9223372036854775808", "1&count=2", "1&layout=legacy",
		"1&strategy=optimistic", "%zz", "1;2", "1%00", "٣",
	} {
		f.Add(seed)
	}
	s := newServer(f, withoutLogs)
	f.Fuzz(func(t *testing.T, count string) {
		n, err := httpapi.IntParam(map[string]string{"count": count}, "count", 0, 1, 10000)
		if err != nil {
			var apiErr *httpapi.Error
			if !errors.As(err, &apiErr) || httpapi.StatusOf(apiErr.Code) != http.StatusBadRequest || apiErr.Code != "invalid_count" {
				t.Fatalf("intParam(%q) = %v, want a 400 invalid_count", count, err)
			}
		} else if v, perr := strconv.ParseInt(count, 10, 64); perr != nil || v != n || n < 1 || n > 10000 {
			t.Fatalf("intParam(%q) = %d", count, n)
		}

		for _, path := range []string{"/oid", "/seq/fuzz/next"} {
			req := httptest.NewRequest(http.MethodGet, path, nil)
			req.URL.RawQuery = "count=" + count // as sent, unescaped
			rec := s.serve(t, req)
			switch rec.Code {
			case http.StatusOK, http.StatusBadRequest:
			default:
				t.Fatalf("GET %s?count=%s: status %d, body %s", path, count, rec.Code, rec.Body)
			}
			if rec.Code == http.StatusOK && path == "/oid" {
				var r oidsResponse
				if err := strictDecode(rec.Body.Bytes(), &r); err != nil || len(r.OIDs) < 1 || len(r.OIDs) > 10000 {
					t.Fatalf("GET /oid?count=%s: %d ids, %v", count, len(r.OIDs), err)
				}
			}
		}
	})
}

// bodyInteger reads an integer of a PUT body as the API documents it: a JSON
// integer, or its decimal string written as strconv.FormatInt writes it.
func bodyInteger(raw json.RawMessage) (int64, bool) {
	s := string(raw)
	quoted := len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"'
	if quoted {
		s = s[1 : len(s)-1]
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil && (!quoted || strconv.FormatInt(n, 10) == s)
}
