package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/seqd/seqd/counters"
	"github.com/seqd/seqd/httpapi"
	"github.com/seqd/seqd/internal/memseq"
)

// The benchmarks here measure seqd's HTTP stack in-process, without a network, a load
// tool or a backend: httpapi.New with the in-memory sequencers of internal/memseq, next to the bare Echo
// handler of figure 2. They are what to profile when the end-to-end figures fall short:
//
//	go test -run '^$' -bench Handler -benchmem -cpuprofile cpu.out ./cmd/seqbench/
//	go tool pprof -top -nodecount 40 cmd/seqbench/seqbench.test cpu.out

// newSeqdHandler is seqd's handler as cmd/seqd builds it, on in-memory sequencers, with
// a logger at warn as in the benchmark runs.
func newSeqdHandler(tb testing.TB) http.Handler {
	tb.Helper()
	h, err := httpapi.New(httpapi.Config{
		Sequencers: []counters.Sequencer{
			memseq.New(counters.StrategyCounter),
			memseq.New(counters.StrategyOptimistic),
		},
		Ping:         func(context.Context) error { return nil },
		AllowedHosts: []string{"example.com"}, // httptest's requests
		Logger:       slog.New(slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		tb.Fatal(err)
	}
	return h
}

// discardWriter is a minimal http.ResponseWriter, so that the benchmark measures the
// handler rather than httptest.ResponseRecorder.
type discardWriter struct {
	header http.Header
	status int
}

func (w *discardWriter) Header() http.Header         { return w.header }
func (w *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *discardWriter) WriteHeader(status int)      { w.status = status }

func benchmarkHandler(b *testing.B, h http.Handler, target string) {
	req := httptest.NewRequest(http.MethodGet, target, nil)
	w := &discardWriter{header: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		clear(w.header)
		w.status = 0
		h.ServeHTTP(w, req)
		if w.status != http.StatusOK {
			b.Fatalf("GET %s: status %d", target, w.status)
		}
	}
}

func BenchmarkHandler(b *testing.B) {
	seqd, bare := newSeqdHandler(b), newBareHandler()
	b.Run("oid/seqd", func(b *testing.B) { benchmarkHandler(b, seqd, "/oid") })
	b.Run("oid/bare", func(b *testing.B) { benchmarkHandler(b, bare, "/oid") })
	b.Run("oid-count-1000/seqd", func(b *testing.B) { benchmarkHandler(b, seqd, "/oid?count=1000") })
	b.Run("seq-next/seqd", func(b *testing.B) { benchmarkHandler(b, seqd, "/seq/bench/next") })
	b.Run("seq-next-count-1000/seqd", func(b *testing.B) { benchmarkHandler(b, seqd, "/seq/bench/next?count=1000") })
}

// TestHandlers checks that the benchmarked requests succeed, so that a broken handler
// fails the tests rather than the benchmark only.
func TestHandlers(t *testing.T) {
	seqd, bare := newSeqdHandler(t), newBareHandler()
	for _, tc := range []struct {
		h      http.Handler
		target string
	}{{seqd, "/oid"}, {bare, "/oid"}, {seqd, "/oid?count=1000"}, {seqd, "/seq/bench/next"}, {seqd, "/seq/bench/next?count=1000"}} {
		rec := httptest.NewRecorder()
		tc.h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tc.target, nil))
		if rec.Code != http.StatusOK {
			t.Errorf("GET %s: %d %s", tc.target, rec.Code, rec.Body)
		}
	}
}
