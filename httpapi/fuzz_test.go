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

	"github.com/seqd/seqd/httpapi"
)

// FuzzSetBody checks that readSetBody never panics and either accepts a body that
// is exactly {"value":N} with 0 ≤ N, or refuses it with a 4xx *Error.
func FuzzSetBody(f *testing.F) {
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
		{"application/json", `{"value":1} x`},
		{"application/json", `{"value":1}}`},
		{"application/json", `{"value":1}{"value":2}`},
		{"application/json", ``},
		{"application/json", `null`},
		{"application/json", "\xff\xfe"},
		{"text/plain", `{"value":1}`},
		{"application/json;;", `{"value":1}`},
	} {
		f.Add(seed.contentType, []byte(seed.body))
	}
	f.Fuzz(func(t *testing.T, contentType string, body []byte) {
		req := httptest.NewRequest(http.MethodPut, "/seq/x", bytes.NewReader(body))
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		n, err := httpapi.ReadSetBody(req)
		if err != nil {
			var apiErr *httpapi.Error
			if !errors.As(err, &apiErr) || httpapi.StatusOf(apiErr.Code) < 400 || httpapi.StatusOf(apiErr.Code) > 499 || apiErr.Code == "" {
				t.Fatalf("ReadSetBody(%q, %q) = %v (%T), want a 4xx *Error", contentType, body, err, err)
			}
			return
		}
		if n < 0 {
			t.Fatalf("ReadSetBody(%q, %q) = %d", contentType, body, n)
		}
		if contentType != "" {
			if mt, _, err := mime.ParseMediaType(contentType); err != nil || mt != "application/json" {
				t.Fatalf("ReadSetBody accepted Content-Type %q", contentType)
			}
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(body, &fields); err != nil || len(fields) != 1 {
			t.Fatalf("ReadSetBody(%q) = %d, but the body is not a one-field object (%v)", body, n, err)
		}
		if v, err := strconv.ParseInt(string(fields["value"]), 10, 64); err != nil || v != n {
			t.Fatalf("ReadSetBody(%q) = %d, but value is %s", body, n, fields["value"])
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
