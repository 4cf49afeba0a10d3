package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// sharedSeq is one sequence behind two addresses, "a" and "b", as two seqd instances on
// one store are. seqload gives client 0 address a and client 1 address b, and each client
// sends one request at a time, so a request to an address proves that the previous
// answer from that address has been read. answer decides, under the lock, which values
// the n-th request to addr gets; nil hands out the next ones.
type sharedSeq struct {
	mu       sync.Mutex
	seq      int64 // last value handed out
	requests map[string]int
	answer   func(ctx context.Context, addr string, n int, count int64) (first int64)
	// mode is what GET /seq/{name} answers: "strict" (or ""), "cached", or
	// "draining" (strict with a strict_from). onGet, if not nil, is called with the
	// number of the reading, with s.mu held, before it is answered.
	mode  string
	gets  int
	onGet func(ctx context.Context, n int)
}

func (s *sharedSeq) serve(t *testing.T, addr string) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("POST /seq/{name}/next", func(w http.ResponseWriter, r *http.Request) {
		count, err := strconv.ParseInt(r.URL.Query().Get("count"), 10, 64)
		if err != nil {
			count = 1
		}
		s.mu.Lock()
		if s.requests == nil {
			s.requests = map[string]int{}
		}
		s.requests[addr]++
		var first int64
		if s.answer != nil {
			first = s.answer(r.Context(), addr, s.requests[addr], count)
		} else {
			first = s.next(count)
		}
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"name": r.PathValue("name"), "first": first, "value": first + count - 1, "count": count, "strategy": "counter",
		})
	})
	mux.HandleFunc("GET /seq/{name}", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.gets++
		if s.onGet != nil {
			s.onGet(r.Context(), s.gets)
		}
		body := map[string]any{"name": r.PathValue("name"), "value": s.seq, "mode": cmp.Or(s.mode, "strict")}
		if s.mode == "draining" {
			body["mode"], body["strict_from"] = "strict", time.Now().Add(time.Second)
		}
		s.mu.Unlock()
		json.NewEncoder(w).Encode(body)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// next reserves the next count values and returns the first. s.mu is held.
func (s *sharedSeq) next(count int64) int64 {
	s.seq += count
	return s.seq - count + 1
}

// wait lets go of s.mu until ch is closed or ctx is done.
func (s *sharedSeq) wait(ctx context.Context, ch <-chan struct{}) {
	s.mu.Unlock()
	defer s.mu.Lock()
	select {
	case <-ch:
	case <-ctx.Done():
	}
}

func TestRunSequenceOutOfRealTimeOrder(t *testing.T) {
	// Client 1 (address b) receives values below those client 0 (address a) had received
	// before client 1 sent its request, and above everything client 1 had received: only
	// a check across clients and addresses sees it. The server holds two ranges back from
	// an answer to client 0 and gives the first to a request of client 1 that overlaps
	// that answer (which is fine), the second to client 1's next request, which cannot
	// overlap it. No duplicate, no gap, one request out of real-time order; then the run
	// is interrupted.
	ctx, interrupt := context.WithCancel(t.Context())
	defer interrupt()
	var (
		step           int // see the cases
		held1, held2   int64
		bArrived       = make(chan struct{})
		aAnsweredAgain = make(chan struct{})
	)
	s := &sharedSeq{}
	s.answer = func(ctx context.Context, addr string, n int, count int64) int64 {
		switch {
		case step == 0 && addr == "a" && n == 3:
			step = 1
			s.wait(ctx, bArrived) // client 1 sent a request before client 0 gets this answer
			held1, held2 = s.next(count), s.next(count)
			step = 2
		case step == 1 && addr == "b":
			close(bArrived)
			s.wait(ctx, aAnsweredAgain) // client 0 has read the answer: client 1 reads this one later
			step = 4
			return held1
		case step == 2 && addr == "a":
			step = 3
			close(aAnsweredAgain) // client 0 sent this request, so it had read the last answer
		case step == 4 && addr == "b":
			step = 5 // client 1 sent this request after reading held1, so after client 0 read its answer
			interrupt()
			return held2
		}
		return s.next(count)
	}
	urlA, urlB := s.serve(t, "a"), s.serve(t, "b")
	sum, err := runJSON(t, ctx, "-addr", urlA+","+urlB, "-c", "2", "-d", "1m", "-target", "seq", "-name", "orders",
		"-count", "2", "-expect-contiguous")
	want := fmt.Sprintf("order: client 1 (%s) got %d..%d (invoked +", urlB, held2, held2+1)
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), ") after client 0 ("+urlA+") got ") {
		t.Fatalf("run: %v\nwant %s… after client 0 (%s) got …", err, want, urlA)
	}
	if sum.Passed || sum.OrderErrors != 1 || sum.Duplicates != 0 || sum.Sequence.Missing != 0 || sum.Stopped != stoppedInterrupt {
		t.Errorf("summary: passed %v, %d order violations, %d duplicates, %d missing, stopped %q; want 1, 0, 0, interrupt",
			sum.Passed, sum.OrderErrors, sum.Duplicates, sum.Sequence.Missing, sum.Stopped)
	}
}

func TestRunSequenceOverlappingOutOfArrivalOrder(t *testing.T) {
	// Client 0's first request reaches a before client 1's reaches b, yet gets the larger
	// values: the requests overlap in time, so the server may have served them in either
	// order, and the run passes.
	aArrived, bServed := make(chan struct{}), make(chan struct{})
	s := &sharedSeq{}
	s.answer = func(ctx context.Context, addr string, n int, count int64) int64 {
		switch {
		case n == 1 && addr == "a":
			close(aArrived)
			s.wait(ctx, bServed)
		case n == 1 && addr == "b":
			s.wait(ctx, aArrived)
			defer close(bServed) // once b has its values
		}
		return s.next(count)
	}
	urlA, urlB := s.serve(t, "a"), s.serve(t, "b")
	sum, err := runJSON(t, t.Context(), "-addr", urlA+","+urlB, "-c", "2", "-n", "20", "-target", "seq", "-expect-contiguous")
	if err != nil || sum.OrderErrors != 0 || sum.Values != 20 {
		t.Fatalf("run: %v, %d order violations, %d values; want a pass with 20 values", err, sum.OrderErrors, sum.Values)
	}
}
