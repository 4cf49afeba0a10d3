package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/seqd/seqd/counters"
)

// unusedSequencer is a Sequencer that nothing in the test calls.
type unusedSequencer struct{ counters.Sequencer }

func (unusedSequencer) Strategy() string { return counters.StrategyCounter }

// TestRequestIDPanicIsRecovered makes the request id generator panic, as objectid
// does on a clock reading past 2106: the request gets a 500 JSON error, and the
// panic does not reach net/http, which would drop the connection.
func TestRequestIDPanicIsRecovered(t *testing.T) {
	orig := newRequestID
	newRequestID = func() string { panic("objectid: timestamp would pass 2106-02-07T06:28:15Z") }
	t.Cleanup(func() { newRequestID = orig })

	h, err := New(Config{
		Sequencers: []counters.Sequencer{unusedSequencer{}},
		Ping:       func(context.Context) error { return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{"/healthz", "/oid"} {
		rec := httptest.NewRecorder()
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Fatalf("GET %s: panic escaped the handler: %v", target, p)
				}
			}()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
		}()
		var body errorBody
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || rec.Code != http.StatusInternalServerError || body.Error.Code != "internal" {
			t.Errorf("GET %s = %d %q, want 500 with code internal", target, rec.Code, rec.Body)
		}
	}

	// A request that brings its own id needs no new one.
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/healthz", nil)
	req.Header.Set("X-Request-Id", "client-1")
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || rec.Header().Get("X-Request-Id") != "client-1" {
		t.Errorf("GET /healthz with X-Request-Id = %d, id %q, want 200 and the client's id", rec.Code, rec.Header().Get("X-Request-Id"))
	}
}
