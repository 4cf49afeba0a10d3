package blocks_test

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seqd/seqd"
)

// clock is a settable Options.Now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// store is a Fetch that answers at once from a sequence that ends at end (0:
// never), recording what each call asked and how many ran at once.
type store struct {
	mu    sync.Mutex
	last  int64
	end   int64
	asked []int64

	running, maxRunning atomic.Int64
}

func (s *store) Fetch(ctx context.Context, n int64) (seqd.Range, error) {
	if r := s.running.Add(1); r > s.maxRunning.Load() {
		s.maxRunning.Store(r)
	}
	defer s.running.Add(-1)
	runtime.Gosched() // widen the window in which a second Fetch would overlap
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asked = append(s.asked, n)
	if s.end > 0 {
		if s.last >= s.end {
			return seqd.Range{}, seqd.ErrExhausted
		}
		n = min(n, s.end-s.last)
	}
	r := seqd.Range{First: s.last + 1, Last: s.last + n}
	s.last = r.Last
	return r, nil
}

func (s *store) Asked() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int64(nil), s.asked...)
}

// gate is a Fetch answered by the test: each call arrives on calls and
// waits for its answer.
type gate struct {
	calls chan *call
}

type call struct {
	ctx    context.Context
	n      int64
	answer chan answer
}

type answer struct {
	r   seqd.Range
	err error
}

func newGate() *gate { return &gate{calls: make(chan *call)} }

func (g *gate) Fetch(ctx context.Context, n int64) (seqd.Range, error) {
	c := &call{ctx: ctx, n: n, answer: make(chan answer, 1)}
	select {
	case g.calls <- c:
	case <-ctx.Done():
		return seqd.Range{}, ctx.Err()
	}
	select {
	case a := <-c.answer:
		return a.r, a.err
	case <-ctx.Done():
		return seqd.Range{}, ctx.Err()
	}
}

// expect receives the next Fetch call and checks that it asks for n values.
func (g *gate) expect(t *testing.T, n int64) *call {
	t.Helper()
	select {
	case c := <-g.calls:
		if c.n != n {
			t.Fatalf("Fetch asked for %d values, want %d", c.n, n)
		}
		return c
	case <-time.After(10 * time.Second):
		t.Fatalf("no Fetch call for %d values", n)
		return nil
	}
}

func (c *call) give(first, last int64) { c.answer <- answer{r: seqd.Range{First: first, Last: last}} }
func (c *call) fail(err error)         { c.answer <- answer{err: err} }

// result is what a call run on another goroutine returned.
type result struct {
	v   int64
	r   seqd.Range
	err error
}

func goNext(ctx context.Context, a interface {
	Next(context.Context) (int64, error)
}) <-chan result {
	ch := make(chan result, 1)
	go func() {
		v, err := a.Next(ctx)
		ch <- result{v: v, err: err}
	}()
	return ch
}

func wait(t *testing.T, ch <-chan result) result {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("call did not return")
		return result{}
	}
}

// noFetchGoroutine fails t if a goroutine of the Allocator's is still running
// after a bounded number of scheduler rounds.
func noFetchGoroutine(t *testing.T) {
	t.Helper()
	buf := make([]byte, 1<<20)
	for range 10000 {
		n := runtime.Stack(buf, true)
		if !strings.Contains(string(buf[:n]), "blocks.(*Allocator).run") {
			return
		}
		runtime.Gosched()
	}
	t.Fatalf("the Allocator's fetch goroutine is still running:\n%s", buf[:runtime.Stack(buf, true)])
}
