package httpapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/seqd/seqd/counters"
)

// Messages are written for the API's users: the domain's words and details, without
// the Go package and operation in front (checkInvariants checks every answer for them).
func TestErrorMessages(t *testing.T) {
	s := newServer(t, withAdmin(adminToken))
	s.counter.Store("orders", 10)
	for _, tc := range []struct {
		req     *http.Request
		status  int
		message string
	}{
		{newRequest(http.MethodGet, "/seq/nope", ""), 404, "sequence not found"},
		{newRequest(http.MethodGet, "/oid/5a17b9d9ab102555b9c3887", ""), 400,
			"invalid ObjectId: length 23, want 24 hex characters"},
		{newRequest(http.MethodGet, "/oid/5a17b9d9ab102555b9c3887g", ""), 400,
			"invalid ObjectId: invalid character 'g' at index 23"},
		{newRequest(http.MethodPut, "/seq/orders", `[1]`, "Content-Type", "application/json", "Authorization", "Bearer "+adminToken), 400,
			`the body must be a JSON object of value, mode, min_block, max_block, period, time_zone, format: got a JSON array`},
		{newRequest(http.MethodPut, "/seq/orders", `"x"`, "Content-Type", "application/json", "Authorization", "Bearer "+adminToken), 400,
			`the body must be a JSON object of value, mode, min_block, max_block, period, time_zone, format: got a JSON string`},
		{newRequest(http.MethodPut, "/seq/orders", `{"value":1,"value":2}`, "Content-Type", "application/json", "Authorization", "Bearer "+adminToken), 400,
			`the body must be a JSON object of value, mode, min_block, max_block, period, time_zone, format: "value" given twice`},
		{newRequest(http.MethodPut, "/seq/orders", `{"value":1`, "Content-Type", "application/json", "Authorization", "Bearer "+adminToken), 400,
			`the body must be a JSON object of value, mode, min_block, max_block, period, time_zone, format: the body ends early`},
		{newRequest(http.MethodPut, "/seq/orders", `{"mode":"fast"}`, "Content-Type", "application/json", "Authorization", "Bearer "+adminToken), 400,
			`mode must be "strict" or "cached", got "fast"`},
		{newRequest(http.MethodPut, "/seq/orders", ``, "Content-Type", "application/json", "Authorization", "Bearer "+adminToken), 400,
			`the body must be a JSON object of value, mode, min_block, max_block, period, time_zone, format: the body is empty`},
	} {
		rec := s.serve(t, tc.req)
		if rec.Code != tc.status {
			t.Errorf("%s %s: status %d, want %d", tc.req.Method, tc.req.URL, rec.Code, tc.status)
		}
		if e := decodeError(t, "", rec); e.Message != tc.message {
			t.Errorf("%s %s: message %q, want %q", tc.req.Method, tc.req.URL, e.Message, tc.message)
		}
	}
}

// What a sequencer says after the sentinel reaches the client; what it says before
// (package, operation, arguments) does not.
func TestDomainErrorDetail(t *testing.T) {
	s := newServer(t, withAdmin(adminToken))
	s.counter.FailWith(fmt.Errorf("counters: set %q to %d: %w: at 10, asked for 5", "orders", 5, counters.ErrBackwards))
	e := wantError(t, s.put(t, "/seq/orders", `{"value":5}`), http.StatusConflict, "backwards")
	if !strings.HasPrefix(e.Message, "the sequence would move backwards") || !strings.HasSuffix(e.Message, ": at 10, asked for 5") {
		t.Errorf("message %q: want the domain's words and its detail", e.Message)
	}
	if strings.Contains(e.Message, "orders") {
		t.Errorf("message %q repeats the operation's arguments", e.Message)
	}
}

// Invalid input is echoed as a short prefix, in the answer and in the log: a name of
// 900,000 characters does not come back whole.
func TestLongInputEchoedShort(t *testing.T) {
	long := strings.Repeat("n", 900_000)
	for _, target := range []string{
		"/seq/" + long + "!/next",
		"/seq/orders/next?strategy=" + long,
		"/seq/orders/next?count=" + long,
		"/seq/orders/next?" + long + "=1",
		"/oid?layout=" + long,
		"/oid/at/" + long + "x",
		"/oid/at/1" + strings.Repeat("0", 900_000),
	} {
		s := newServer(t)
		req := newRequest(http.MethodGet, target, "")
		rec := s.serve(t, req)
		what := fmt.Sprintf("GET %.40s…", target)
		if rec.Code != http.StatusBadRequest {
			t.Errorf("%s: status %d, want 400", what, rec.Code)
		}
		if rec.Body.Len() > 1024 {
			t.Errorf("%s: a body of %d bytes, want a short one", what, rec.Body.Len())
		}
		if e := decodeError(t, what, rec); !strings.Contains(e.Message, `…`) || !strings.Contains(e.Message, "bytes)") {
			t.Errorf("%s: message %q, want a cut echo that says how long the input was", what, e.Message)
		}
		for _, line := range strings.Split(strings.TrimSpace(s.logs.String()), "\n") {
			if len(line) > 2048 {
				t.Errorf("%s: a log line of %d bytes: %.200s…", what, len(line), line)
			}
		}
	}
}
