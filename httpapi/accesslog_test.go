package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/seqd/seqd/counters"
)

// logLines decodes the server's JSON log, one object a line.
func logLines(t testing.TB, s *server) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(s.logs.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

// linesWith returns the log lines whose msg is msg.
func linesWith(lines []map[string]any, msg string) []map[string]any {
	var out []map[string]any
	for _, l := range lines {
		if l["msg"] == msg {
			out = append(out, l)
		}
	}
	return out
}

// An access log line gives the duration in milliseconds, and a failed request's line
// its error code, so that 4xx lines can be told apart without the response.
func TestAccessLog(t *testing.T) {
	s := newServer(t)
	s.get(t, "/oid")
	s.get(t, "/seq/nope")
	s.get(t, "/seq/orders/next?count=0")
	s.serve(t, newRequest(http.MethodDelete, "/oid", ""))

	want := []struct {
		path   string
		status float64
		code   any // nil: no code field
	}{
		{"/oid", 200, nil},
		{"/seq/nope", 404, "sequence_not_found"},
		{"/seq/orders/next", 400, "invalid_count"},
		{"/oid", 405, "method_not_allowed"},
	}
	lines := linesWith(logLines(t, s), "request")
	if len(lines) != len(want) {
		t.Fatalf("%d request lines, want %d:\n%s", len(lines), len(want), s.logs)
	}
	for i, w := range want {
		l := lines[i]
		if l["path"] != w.path || l["status"] != w.status || l["code"] != w.code {
			t.Errorf("line %d: path %v status %v code %v, want %s %v %v", i, l["path"], l["status"], l["code"], w.path, w.status, w.code)
		}
		d, ok := l["duration_ms"].(float64)
		if !ok || d < 0 || d > float64(time.Minute/time.Millisecond) {
			t.Errorf("line %d: duration_ms %v, want a number of milliseconds", i, l["duration_ms"])
		}
		if _, ok := l["duration"]; ok {
			t.Errorf("line %d: a duration without its unit: %v", i, l)
		}
	}
}

// Every 503 is logged the same way: "err" is the text of what failed, whether the
// backend answered with an error or did not answer within the request deadline
// (which Echo's timeout middleware wraps in its own error).
func TestUnavailableLogShape(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(s *server)
		want  string
	}{
		{"error", func(s *server) {
			s.counter.FailWith(fmt.Errorf("counters: next %q: %w: connection refused", "orders", counters.ErrUnavailable))
		}, `counters: next "orders": backend unavailable: connection refused`},
		{"deadline", func(s *server) { s.counter.BlockUntilDone() }, "context deadline exceeded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, withTimeout(20*time.Millisecond))
			tc.setup(s)
			wantError(t, s.get(t, "/seq/orders/next"), http.StatusServiceUnavailable, "unavailable")
			failed := linesWith(logLines(t, s), "request failed")
			if len(failed) != 1 {
				t.Fatalf("%d request failed lines, want 1:\n%s", len(failed), s.logs)
			}
			if got, ok := failed[0]["err"].(string); !ok || got != tc.want {
				t.Errorf("err %#v, want %q", failed[0]["err"], tc.want)
			}
			if failed[0]["code"] != "unavailable" {
				t.Errorf("code %v, want unavailable", failed[0]["code"])
			}
		})
	}
}

// A long path is cut in the access log.
func TestAccessLogPathCut(t *testing.T) {
	s := newServer(t)
	s.get(t, "/"+strings.Repeat("p", 100_000))
	lines := linesWith(logLines(t, s), "request")
	if len(lines) != 1 {
		t.Fatalf("%d request lines, want 1", len(lines))
	}
	if p, _ := lines[0]["path"].(string); len(p) > 256 || !strings.HasPrefix(p, "/ppp") {
		t.Errorf("logged path of %d bytes, want its start, at most 256", len(p))
	}
}
