package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

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

// TestLazyDeadline checks that a request's deadline behaves as
// context.WithDeadline's: Deadline at once, Done and Err at the deadline, with
// or without a wait begun before it, a parent's cancel passed on, to derived
// contexts too, and Canceled once released; and that a request that never
// waits starts no timer.
func TestLazyDeadline(t *testing.T) {
	waitDone := func(t *testing.T, ctx context.Context, want error) {
		t.Helper()
		select {
		case <-ctx.Done():
		case <-time.After(5 * time.Second): // a hang guard, not a speed test
			t.Fatal("not done 5 s after its deadline")
		}
		if err := ctx.Err(); err != want {
			t.Errorf("Err() = %v, want %v", err, want)
		}
	}
	newCtx := func(parent context.Context, timeout time.Duration) *lazyDeadline {
		return &lazyDeadline{Context: parent, deadline: time.Now().Add(timeout)}
	}

	t.Run("no wait, no timer", func(t *testing.T) {
		before := time.Now()
		ctx := newCtx(t.Context(), time.Hour)
		if d, ok := ctx.Deadline(); !ok || d.Before(before.Add(time.Hour)) {
			t.Errorf("Deadline() = %v, %t, want an hour from now", d, ok)
		}
		if err := ctx.Err(); err != nil {
			t.Errorf("Err() = %v", err)
		}
		if ctx.armed.Load() != nil {
			t.Error("a timer started before anything waited")
		}
		ctx.release()
		waitDone(t, ctx, context.Canceled)
	})
	t.Run("past deadline, nobody waiting", func(t *testing.T) {
		ctx := newCtx(t.Context(), -time.Second)
		if err := ctx.Err(); err != context.DeadlineExceeded {
			t.Errorf("Err() = %v, want DeadlineExceeded", err)
		}
		waitDone(t, ctx, context.DeadlineExceeded)
		ctx.release()
	})
	t.Run("waiting for the deadline", func(t *testing.T) {
		ctx := newCtx(t.Context(), 20*time.Millisecond)
		child, cancel := context.WithCancel(ctx)
		defer cancel()
		waitDone(t, ctx, context.DeadlineExceeded)
		waitDone(t, child, context.DeadlineExceeded)
		ctx.release()
		if err := ctx.Err(); err != context.DeadlineExceeded {
			t.Errorf("Err() after release = %v, want DeadlineExceeded still", err)
		}
	})
	t.Run("parent canceled", func(t *testing.T) {
		parent, cancel := context.WithCancel(context.WithValue(t.Context(), ctxKey{}, "v"))
		ctx := newCtx(parent, time.Hour)
		defer ctx.release()
		if ctx.Value(ctxKey{}) != "v" {
			t.Error("the parent's values are lost")
		}
		child, stop := context.WithTimeout(ctx, time.Hour)
		defer stop()
		cancel()
		waitDone(t, ctx, context.Canceled)
		waitDone(t, child, context.Canceled)
	})
	t.Run("parent's deadline sooner", func(t *testing.T) {
		parent, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		want, _ := parent.Deadline()
		ctx := newCtx(parent, time.Hour)
		defer ctx.release()
		if d, _ := ctx.Deadline(); !d.Equal(want) {
			t.Errorf("Deadline() = %v, want the parent's %v", d, want)
		}
	})
}

type ctxKey struct{}

// BenchmarkDeadline measures a request's deadline where nothing waits on it, as
// for a cached value: lazyDeadline's, and context.WithTimeout's, which
// middleware.ContextTimeout made for every request before; with -count the two
// alternate.
func BenchmarkDeadline(b *testing.B) {
	parent, cancel := context.WithCancel(context.Background()) // as net/http's request context is
	defer cancel()
	b.Run("lazy", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			ctx := &lazyDeadline{Context: parent, deadline: time.Now().Add(2 * time.Second)}
			if ctx.Err() != nil {
				b.Fatal(ctx.Err())
			}
			ctx.release()
		}
	})
	b.Run("WithTimeout", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			ctx, cancel := context.WithTimeout(parent, 2*time.Second)
			if ctx.Err() != nil {
				b.Fatal(ctx.Err())
			}
			cancel()
		}
	})
}
