package httpapi_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/seqd/seqd/counters"
	"github.com/seqd/seqd/httpapi"
	"github.com/seqd/seqd/internal/memseq"
	"github.com/seqd/seqd/objectid"
	"github.com/seqd/seqd/snowflake"
)

func TestNewConfig(t *testing.T) {
	seq := memseq.New(counters.StrategyCounter)
	ping := func(context.Context) error { return nil }
	tests := []struct {
		name string
		cfg  httpapi.Config
		ok   bool
	}{
		{"minimal", httpapi.Config{Sequencers: []counters.Sequencer{seq}, Ping: ping}, true},
		{"no sequencers", httpapi.Config{Ping: ping}, false},
		{"no ping", httpapi.Config{Sequencers: []counters.Sequencer{seq}}, false},
		{"nil sequencer", httpapi.Config{Sequencers: []counters.Sequencer{seq, nil}, Ping: ping}, false},
		{"two for one strategy", httpapi.Config{
			Sequencers: []counters.Sequencer{seq, memseq.New(counters.StrategyCounter)}, Ping: ping,
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := httpapi.New(tt.cfg)
			if tt.ok != (err == nil) || tt.ok != (h != nil) {
				t.Errorf("New: handler %v, error %v; want ok=%v", h != nil, err, tt.ok)
			}
		})
	}
}

func TestRouting(t *testing.T) {
	s := newServer(t, withTokens(clientToken))
	tests := []struct {
		method, target string
		status         int
		code           string
	}{
		{"GET", "/nope", 404, "not_found"},
		{"GET", "/", 404, "not_found"},
		{"GET", "/oids", 404, "not_found"},
		{"GET", "/seq/orders/next/more", 404, "not_found"},
		{"GET", "/seq/orders/prev", 404, "not_found"},
		{"POST", "/nope", 404, "not_found"},
		{"DELETE", "/oid", 405, "method_not_allowed"},
		{"POST", "/oid", 405, "method_not_allowed"},
		{"PUT", "/oid", 405, "method_not_allowed"},
		{"POST", "/oid/5a17b9d9ab102555b9c38874", 405, "method_not_allowed"},
		{"DELETE", "/seq/orders", 405, "method_not_allowed"},
		{"PATCH", "/seq/orders", 405, "method_not_allowed"},
		{"POST", "/seq/orders", 405, "method_not_allowed"},
		{"PUT", "/seq/orders/next", 405, "method_not_allowed"},
		{"DELETE", "/seq", 405, "method_not_allowed"},
		{"POST", "/healthz", 405, "method_not_allowed"},
		{"POST", "/metrics", 405, "method_not_allowed"},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.target, func(t *testing.T) {
			rec := s.serve(t, newRequest(tt.method, tt.target, ""))
			wantError(t, rec, tt.status, tt.code)
		})
	}
	t.Run("Allow", func(t *testing.T) {
		allow := s.serve(t, newRequest("DELETE", "/seq/orders", "")).Header().Get("Allow")
		for _, m := range []string{"GET", "PUT"} {
			if !strings.Contains(allow, m) {
				t.Errorf("405 on /seq/orders: Allow %q lacks %s", allow, m)
			}
		}
	})
}

// TestHead checks that HEAD, which the API does not route, never yields a body
// or a server error, whatever the path.
func TestHead(t *testing.T) {
	s := newServer(t, withTokens(clientToken), withAdmin(adminToken))
	s.counter.FailWith(errors.New("HEAD must not reach the sequencer"))
	for _, target := range []string{
		"/oid", "/oid?count=5", "/oid/5a17b9d9ab102555b9c38874", "/oid/at/0",
		"/seq", "/seq/orders", "/seq/orders/next", "/seq/-bad-/next",
		"/healthz", "/readyz", "/metrics", "/openapi.json", "/nope",
	} {
		for _, auth := range []string{"", "Bearer " + clientToken} {
			var header []string
			if auth != "" {
				header = []string{"Authorization", auth}
			}
			s.serve(t, newRequest(http.MethodHead, target, "", header...)) // checkInvariants asserts
		}
	}
	if calls := s.counter.Calls(); len(calls) != 0 {
		t.Errorf("HEAD reached the sequencer: %+v", calls)
	}
}

// Load balancers probe /healthz and /readyz with HEAD: they get the status GET would
// get, without a body. Routes that hand out values refuse HEAD, and a HEAD never
// reaches a sequencer.
func TestHeadProbes(t *testing.T) {
	s := newServer(t)
	head := func(target string) *httptest.ResponseRecorder {
		t.Helper()
		return s.serve(t, newRequest(http.MethodHead, target, "")) // checkInvariants: no body
	}
	if rec := head("/healthz"); rec.Code != http.StatusOK {
		t.Errorf("HEAD /healthz: %d, want 200", rec.Code)
	}
	if rec := head("/readyz"); rec.Code != http.StatusOK {
		t.Errorf("HEAD /readyz: %d, want 200", rec.Code)
	}
	s.ping.setFail(func(context.Context) error { return errors.New("down") })
	if rec := head("/readyz"); rec.Code != http.StatusServiceUnavailable {
		t.Errorf("HEAD /readyz with the backend down: %d, want 503", rec.Code)
	}
	if rec := head("/healthz"); rec.Code != http.StatusOK {
		t.Errorf("HEAD /healthz with the backend down: %d, want 200", rec.Code)
	}

	s.counter.FailWith(errors.New("HEAD must not reach the sequencer"))
	for _, target := range []string{"/oid", "/oid?count=3", "/seq/orders/next", "/seq/orders", "/seq"} {
		if rec := head(target); rec.Code != http.StatusMethodNotAllowed {
			t.Errorf("HEAD %s: %d, want 405", target, rec.Code)
		}
	}
	if calls := s.counter.Calls(); len(calls) != 0 {
		t.Errorf("HEAD reached the sequencer: %+v", calls)
	}
}

func TestHealthz(t *testing.T) {
	s := newServer(t)
	s.ping.setFail(func(context.Context) error { return errors.New("down") })
	// Liveness does not depend on the backend.
	if got := decode[healthResponse](t, s.get(t, "/healthz"), http.StatusOK); got.Status != "ok" || got.Snowflake.Layout != "twitter" || got.Snowflake.Worker != nil {
		t.Errorf("healthz %+v, want ok and the twitter layout, no worker id", got)
	}
}

// TestHealthzSnowflakeLease: /healthz names the snowflake layout, and the
// worker id held and until when.
func TestHealthzSnowflakeLease(t *testing.T) {
	until := time.Date(2026, 11, 26, 20, 0, 0, 0, time.UTC)
	s := newServer(t, withSnowflake(t, snowflake.JS53, 3), func(c *httpapi.Config) {
		c.SnowflakeLease = func() snowflake.LeaseStatus { return snowflake.LeaseStatus{Held: true, Worker: 3, Until: until} }
	})
	got := decode[healthResponse](t, s.get(t, "/healthz"), http.StatusOK)
	if got.Snowflake.Layout != "js53" || got.Snowflake.Worker == nil || *got.Snowflake.Worker != 3 || got.Snowflake.Until != "2026-11-26T20:00:00.000Z" {
		t.Errorf("healthz %+v, want js53, worker id 3 until 2026-11-26T20:00:00.000Z", got)
	}
}

func TestReadyz(t *testing.T) {
	s := newServer(t)
	if got := decode[statusResponse](t, s.get(t, "/readyz"), http.StatusOK); got.Status != "ready" {
		t.Errorf("readyz status %q, want ready", got.Status)
	}

	const secret = "dial tcp 10.9.8.7:27017: connection refused"
	var sawDeadline bool
	s.ping.setFail(func(ctx context.Context) error {
		_, sawDeadline = ctx.Deadline()
		return errors.New(secret)
	})
	e := wantError(t, s.get(t, "/readyz"), http.StatusServiceUnavailable, "unavailable")
	if strings.Contains(e.Message, "10.9.8.7") {
		t.Errorf("readyz leaks the ping error: %q", e.Message)
	}
	if !sawDeadline {
		t.Error("Ping was called without a deadline")
	}

	s.ping.setFail(nil)
	decode[statusResponse](t, s.get(t, "/readyz"), http.StatusOK)
}

// Every response carries X-Request-Id: the client's own when it is short and plain,
// else a new ObjectId, so that nothing odd or long reaches the logs.
func TestRequestID(t *testing.T) {
	s := newServer(t)
	for _, tc := range []struct{ sent, want string }{
		{"abc-123.x_y:z", "abc-123.x_y:z"},
		{"", ""},
		{strings.Repeat("a", 65), ""},
		{"has space", ""},
		{"quote\"", ""},
	} {
		var header []string
		if tc.sent != "" {
			header = []string{"X-Request-Id", tc.sent}
		}
		got := s.get(t, "/healthz", header...).Header().Get("X-Request-Id")
		switch {
		case tc.want != "" && got != tc.want:
			t.Errorf("sent %q: X-Request-Id %q, want it kept", tc.sent, got)
		case tc.want == "":
			if _, err := objectid.Parse(got); err != nil {
				t.Errorf("sent %q: X-Request-Id %q, want a new ObjectId: %v", tc.sent, got, err)
			}
		}
	}
}
