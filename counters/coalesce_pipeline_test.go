package counters

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/seqd/seqd/internal/history"
)

// newPipelineHarness is newHarness with up to depth writes of a name in flight.
func newPipelineHarness(t *testing.T, f *fakeStore, depth int) *harness {
	h := newHarness(t, f)
	h.c.depth = depth
	return h
}

// noWrite fails if a write reaches the store now. Every write announces itself on
// f.writes before it waits, and the coalescer sends a write before the caller that
// triggered it is counted as queued, so a write that was due has arrived.
func noWrite(t *testing.T, f *fakeStore) {
	t.Helper()
	select {
	case w := <-f.writes:
		t.Fatalf("a write of %d values went out; want none yet", w.n)
	default:
	}
}

// TestCoalescerPipelineSendsWhileAWriteIsInFlight: with two writes allowed, a
// caller who arrives while one write is in flight gets a write of its own at once;
// a third waits for one of them to return, and the writes may return in either
// order.
func TestCoalescerPipelineSendsWhileAWriteIsInFlight(t *testing.T) {
	f := newFakeStore(true)
	h := newPipelineHarness(t, f, 2)
	ctx := context.Background()

	a := h.start(ctx, "p", 1)
	wa := expectWrite(t, f, 1)
	b := h.start(ctx, "p", 2)
	wb := expectWrite(t, f, 2) // out while a's is still in flight
	c := h.start(ctx, "p", 1)
	d := h.start(ctx, "p", 3)
	noWrite(t, f) // two in flight: c and d wait

	wb.release <- nil // b's write is applied first
	expectRange(t, <-b, 1, 2)
	wcd := expectWrite(t, f, 4) // c and d, together, in b's place
	wa.release <- nil
	expectRange(t, <-a, 3, 3)
	wcd.release <- nil
	expectRange(t, <-c, 4, 4)
	expectRange(t, <-d, 5, 7)
}

// TestCoalescerPipelineSoloWaitsForWritesInFlight: a solo write (a block fetch,
// a give-back) goes out only once every write sent before it has returned, and
// nothing goes out while it is in flight: the cached mode's switch order.
func TestCoalescerPipelineSoloWaitsForWritesInFlight(t *testing.T) {
	f := newFakeStore(true)
	// The writes' starts and ends, in order, by their sizes: each write logs its
	// start before it can block, so the log is the order the coalescer sent them.
	var mu sync.Mutex
	var log []string
	logged := func(write reserveFunc) reserveFunc {
		return func(ctx context.Context, name string, n int64, build func(int, int64) any) (int64, int64, error) {
			mu.Lock()
			log = append(log, fmt.Sprint("start ", n))
			mu.Unlock()
			defer func() {
				mu.Lock()
				log = append(log, fmt.Sprint("end ", n))
				mu.Unlock()
			}()
			return write(ctx, name, n, build)
		}
	}
	h := newPipelineHarness(t, f, 3)
	h.c.reserve = logged(f.reserve)
	ctx := context.Background()

	a := h.start(ctx, "s", 1)
	wa := expectWrite(t, f, 1)
	b := h.start(ctx, "s", 2)
	wb := expectWrite(t, f, 2)

	solo := make(chan call, 1)
	go func() {
		r, err := h.c.solo(ctx, "s", 10, logged(f.reserve))
		solo <- call{r, err}
	}()
	<-h.joined
	c := h.start(ctx, "s", 3) // after the solo write: it waits behind it

	wa.release <- nil
	expectRange(t, <-a, 1, 1)
	wb.release <- nil
	expectRange(t, <-b, 2, 3)
	ws := expectWrite(t, f, 10)
	d := h.start(ctx, "s", 4)
	ws.release <- nil
	expectRange(t, <-solo, 4, 13)
	expectWrite(t, f, 7).release <- nil // c and d
	expectRange(t, <-c, 14, 16)
	expectRange(t, <-d, 17, 20)

	mu.Lock()
	defer mu.Unlock()
	want := []string{"start 1", "start 2", "end 1", "end 2", "start 10", "end 10", "start 7", "end 7"}
	if !slices.Equal(log, want) {
		t.Errorf("writes went out as %q, want %q", log, want)
	}
}

// TestCoalescerPipelineFailedWriteKeepsOthers: a write that fails while another
// is in flight fails its own callers only; the other write's callers keep their
// values, and the next write goes on from the store's value.
func TestCoalescerPipelineFailedWriteKeepsOthers(t *testing.T) {
	f := newFakeStore(true)
	h := newPipelineHarness(t, f, 2)
	ctx := context.Background()
	broken := errors.New("connection reset")

	a := h.start(ctx, "f", 1)
	wa := expectWrite(t, f, 1)
	b := h.start(ctx, "f", 1)
	wb := expectWrite(t, f, 1)
	c := h.start(ctx, "f", 2)
	noWrite(t, f)

	wa.release <- broken
	if got := <-a; !errors.Is(got.err, broken) {
		t.Fatalf("a: got %v, %v; want its write's error", got.r, got.err)
	}
	wc := expectWrite(t, f, 2) // c takes a's place
	wb.release <- nil
	expectRange(t, <-b, 1, 1)
	wc.release <- nil
	expectRange(t, <-c, 2, 3)
}

// reorderingStore is a fakeStore whose writes are applied in an order of their
// own: each yields a random number of times first, so that writes in flight
// together overtake one another.
func reorderingStore(f *fakeStore) reserveFunc {
	return func(ctx context.Context, name string, n int64, build func(int, int64) any) (int64, int64, error) {
		for range rand.IntN(8) {
			runtime.Gosched()
		}
		return f.reserve(ctx, name, n, build)
	}
}

// TestCoalescerPipelineHistory runs many callers over writes that overtake one
// another, with one to four writes in flight, and checks every answer with the
// history checker: no value twice, none missing, and a call that began after
// another ended holds larger values. The bound on writes in flight holds too.
func TestCoalescerPipelineHistory(t *testing.T) {
	for _, depth := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("depth=%d", depth), func(t *testing.T) {
			f := newFakeStore(false)
			c := newCoalescer(reorderingStore(f), nil, Options{WriteTimeout: time.Minute}, depth)
			const goroutines, perGoroutine = 32, 300
			var rec history.Recorder
			var wg sync.WaitGroup
			for g := range goroutines {
				wg.Go(func() {
					for i := range perGoroutine {
						start := time.Now()
						r, err := c.do(context.Background(), "h", int64(i%3+1), nil)
						if err != nil {
							t.Error(err)
							return
						}
						rec.Add(history.Op{Client: fmt.Sprint("g", g), Start: start, End: time.Now(), First: r.First, Last: r.Last})
					}
				})
			}
			wg.Wait()
			c.wg.Wait()
			if res := history.Check(rec.Ops(), history.Options{Contiguous: true}); res.Err() != nil {
				t.Fatal(res)
			}
			if f.maxInflight > depth {
				t.Errorf("%d writes in flight at once, want at most %d", f.maxInflight, depth)
			}
			if depth > 1 && f.maxInflight < 2 {
				t.Errorf("never more than one write in flight with %d allowed", depth)
			}
			t.Logf("%d calls, %d writes, up to %d in flight", goroutines*perGoroutine, f.calls, f.maxInflight)
		})
	}
}
