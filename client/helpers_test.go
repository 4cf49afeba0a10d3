package client_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seqd/seqd/client"
	"github.com/seqd/seqd/counters"
	"github.com/seqd/seqd/httpapi"
	"github.com/seqd/seqd/internal/memseq"
)

// seqdServer is seqd's real handler over an in-memory sequencer, on loopback.
type seqdServer struct {
	*httptest.Server
	seq      *memseq.Sequencer
	requests atomic.Int64 // requests received
}

type serverOption func(*httpapi.Config, *serverWrap)

// serverWrap changes the handler's answers.
type serverWrap struct {
	retryAfter string // replaces the Retry-After of every answer that has one
	lose       int64  // the request, counted from 1, whose answer is lost; 0: none
}

func withTokens(tokens ...string) serverOption {
	return func(c *httpapi.Config, _ *serverWrap) { c.Tokens = tokens }
}

func withRateLimit(perSecond float64, burst int) serverOption {
	return func(c *httpapi.Config, _ *serverWrap) { c.RateLimit, c.RateBurst = perSecond, burst }
}

func withRetryAfter(v string) serverOption {
	return func(_ *httpapi.Config, w *serverWrap) { w.retryAfter = v }
}

// withLostAnswer serves the nth request, counted from 1, and then closes its
// connection instead of answering: seqd did the work, and the answer is lost.
func withLostAnswer(n int64) serverOption {
	return func(_ *httpapi.Config, w *serverWrap) { w.lose = n }
}

func newSeqd(t testing.TB, opts ...serverOption) *seqdServer {
	t.Helper()
	s := &seqdServer{seq: memseq.New(counters.StrategyCounter)}
	cfg := httpapi.Config{
		Sequencers: []counters.Sequencer{s.seq},
		Ping:       func(context.Context) error { return nil },
	}
	var wrap serverWrap
	for _, o := range opts {
		o(&cfg, &wrap)
	}
	h, err := httpapi.New(cfg)
	if err != nil {
		t.Fatalf("httpapi.New: %v", err)
	}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.requests.Add(1) == wrap.lose {
			h.ServeHTTP(httptest.NewRecorder(), r)
			conn, _, err := http.NewResponseController(w).Hijack()
			if err != nil {
				t.Errorf("losing the answer: %v", err)
				return
			}
			conn.Close()
			return
		}
		if wrap.retryAfter != "" {
			w = &retryAfterWriter{ResponseWriter: w, value: wrap.retryAfter}
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

type retryAfterWriter struct {
	http.ResponseWriter
	value string
}

func (w *retryAfterWriter) WriteHeader(status int) {
	if w.Header().Get("Retry-After") != "" {
		w.Header().Set("Retry-After", w.value)
	}
	w.ResponseWriter.WriteHeader(status)
}

// failFirst makes the sequencer's first n calls fail with err.
func (s *seqdServer) failFirst(n int, err error) {
	var calls atomic.Int64
	s.seq.FailFunc(func(context.Context) error {
		if calls.Add(1) <= int64(n) {
			return err
		}
		return nil
	})
}

// newClient returns a Client of s, closed when the test ends.
func newClient(t testing.TB, url string, opts ...client.Option) *client.Client {
	t.Helper()
	c, err := client.New(url, opts...)
	if err != nil {
		t.Fatalf("client.New: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := c.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return c
}

// waits records the waits a Client asks for between attempts, without waiting.
type waits struct {
	mu sync.Mutex
	d  []time.Duration
}

func (w *waits) wait(ctx context.Context, d time.Duration) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.d = append(w.d, d)
	return ctx.Err()
}

func (w *waits) asked() []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]time.Duration(nil), w.d...)
}
