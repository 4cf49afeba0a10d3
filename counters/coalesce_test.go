package counters

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
)

// fakeWrite is one write that the fake store holds until the test releases it.
type fakeWrite struct {
	ctx     context.Context
	name    string
	n       int64
	release chan error // nil lets the write apply; an error fails it
}

// fakeStore is a reserveFunc over in-memory counters. If writes is not nil, every
// write announces itself there and waits for the test, so tests can hold a write
// open without sleeping.
type fakeStore struct {
	writes chan *fakeWrite

	mu          sync.Mutex
	seq         map[string]int64
	inflight    map[string]int
	maxInflight int
	calls       int
	// short, when set, shapes the next write's answer instead: how many of its n
	// values it gets, and its error. It is used once.
	short func(n int64) (int64, error)
}

func newFakeStore(hold bool) *fakeStore {
	f := &fakeStore{seq: map[string]int64{}, inflight: map[string]int{}}
	if hold {
		f.writes = make(chan *fakeWrite)
	}
	return f
}

func (f *fakeStore) reserve(ctx context.Context, name string, n int64, _ func(int, int64) any) (first, count int64, err error) {
	f.mu.Lock()
	f.calls++
	f.inflight[name]++
	f.maxInflight = max(f.maxInflight, f.inflight[name])
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.inflight[name]--
		f.mu.Unlock()
	}()

	if f.writes != nil {
		w := &fakeWrite{ctx: ctx, name: name, n: n, release: make(chan error)}
		f.writes <- w
		select {
		case err := <-w.release:
			if err != nil {
				return 0, 0, err
			}
		case <-ctx.Done():
			return 0, 0, ctx.Err()
		}
	} else {
		runtime.Gosched() // let other callers pile up behind this write
	}

	f.mu.Lock()
	defer f.mu.Unlock()
	count = n
	if short := f.short; short != nil {
		f.short = nil
		if count, err = short(n); count == 0 {
			return 0, 0, err
		}
	}
	if f.seq[name] > math.MaxInt64-count {
		return 0, 0, ErrExhausted
	}
	first = f.seq[name] + 1
	f.seq[name] += count
	return first, count, err
}

// call is one caller's result.
type call struct {
	r   Range
	err error
}

// harness runs callers against a coalescer and knows when each has joined its queue.
type harness struct {
	t      *testing.T
	c      *coalescer
	joined chan string
}

func newHarness(t *testing.T, f *fakeStore) *harness {
	h := &harness{t: t, c: newCoalescer(f.reserve, nil, Options{WriteTimeout: time.Minute}, 1), joined: make(chan string, 1)}
	h.c.queued = func(name string) { h.joined <- name }
	t.Cleanup(func() { h.drained() })
	return h
}

// start runs one caller and returns once it has joined the queue for name.
func (h *harness) start(ctx context.Context, name string, n int64) <-chan call {
	out := make(chan call, 1)
	go func() {
		r, err := h.c.do(ctx, name, n, nil)
		out <- call{r, err}
	}()
	<-h.joined
	return out
}

// drained checks that no flusher goroutine and no per-name state is left.
func (h *harness) drained() {
	h.t.Helper()
	h.c.wg.Wait()
	h.c.mu.Lock()
	defer h.c.mu.Unlock()
	if len(h.c.queues) != 0 {
		h.t.Errorf("%d queues left after all callers returned", len(h.c.queues))
	}
}

func expectWrite(t *testing.T, f *fakeStore, n int64) *fakeWrite {
	t.Helper()
	w := <-f.writes
	if w.n != n {
		t.Fatalf("write of %d values, want %d", w.n, n)
	}
	return w
}

func expectRange(t *testing.T, got call, first, last int64) {
	t.Helper()
	if got.err != nil || got.r != (Range{First: first, Last: last}) {
		t.Errorf("got %v, %v; want %d…%d", got.r, got.err, first, last)
	}
}

func TestCoalescerBatchesInArrivalOrder(t *testing.T) {
	f := newFakeStore(true)
	h := newHarness(t, f)
	var batches []int
	h.c.batched = func(callers int) { batches = append(batches, callers) }
	ctx := context.Background()

	first := h.start(ctx, "a", 1)
	w := expectWrite(t, f, 1) // held open while the others arrive

	const callers = 10
	var outs []<-chan call
	var sum int64
	for i := range callers {
		n := int64(i%3 + 1)
		sum += n
		outs = append(outs, h.start(ctx, "a", n))
	}
	w.release <- nil
	expectRange(t, <-first, 1, 1)

	expectWrite(t, f, sum).release <- nil
	next := int64(2)
	for i, out := range outs {
		n := int64(i%3 + 1)
		expectRange(t, <-out, next, next+n-1)
		next += n
	}
	if want := []int{1, callers}; !slices.Equal(batches, want) {
		t.Errorf("callers per batch = %v, want %v", batches, want)
	}
}

func TestCoalescerOneWriteInFlightPerName(t *testing.T) {
	f := newFakeStore(false)
	h := newHarness(t, f)
	h.c.queued = nil
	const goroutines, perGoroutine = 64, 50
	names := []string{"a", "b"}

	var mu sync.Mutex
	got := map[string][]Range{}
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range perGoroutine {
				name := names[(g+i)%len(names)]
				r, err := h.c.do(context.Background(), name, int64(i%4+1), nil)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				got[name] = append(got[name], r)
				mu.Unlock()
			}
		})
	}
	wg.Wait()

	if f.maxInflight != 1 {
		t.Errorf("up to %d writes in flight for one name, want 1", f.maxInflight)
	}
	calls := 0
	for name, ranges := range got {
		calls += len(ranges)
		slices.SortFunc(ranges, func(a, b Range) int { return int(a.First - b.First) })
		next := int64(1)
		for _, r := range ranges {
			if r.First != next {
				t.Fatalf("%s: range %v, want it to start at %d (disjoint and gapless)", name, r, next)
			}
			next = r.Last + 1
		}
		if next-1 != f.seq[name] {
			t.Errorf("%s: handed out up to %d, store is at %d", name, next-1, f.seq[name])
		}
	}
	t.Logf("%d calls, %d writes", calls, f.calls)
}

func TestCoalescerNamesDoNotWaitForEachOther(t *testing.T) {
	f := newFakeStore(true)
	h := newHarness(t, f)
	ctx := context.Background()

	a := h.start(ctx, "a", 1)
	wa := expectWrite(t, f, 1)
	b := h.start(ctx, "b", 1)
	wb := expectWrite(t, f, 1) // arrives while a's write is still open
	wb.release <- nil
	expectRange(t, <-b, 1, 1)
	wa.release <- nil
	expectRange(t, <-a, 1, 1)
}

func TestCoalescerWaiterLeavesBeforeItsWrite(t *testing.T) {
	f := newFakeStore(true)
	h := newHarness(t, f)
	ctx := context.Background()

	x := h.start(ctx, "a", 1)
	wx := expectWrite(t, f, 1)
	leaving, leave := context.WithCancel(ctx)
	a := h.start(leaving, "a", 5)
	b := h.start(ctx, "a", 2)

	leave()
	if got := <-a; !errors.Is(got.err, context.Canceled) {
		t.Fatalf("leaving caller got %v, %v; want context.Canceled", got.r, got.err)
	}
	wx.release <- nil
	expectRange(t, <-x, 1, 1)
	expectWrite(t, f, 2).release <- nil // a reserved nothing
	expectRange(t, <-b, 2, 3)
}

func TestCoalescerWaiterLeavesDuringItsWrite(t *testing.T) {
	f := newFakeStore(true)
	h := newHarness(t, f)
	ctx := context.Background()

	x := h.start(ctx, "a", 1)
	wx := expectWrite(t, f, 1)
	leaving, leave := context.WithCancel(ctx)
	a := h.start(leaving, "a", 5)
	b := h.start(ctx, "a", 2)
	wx.release <- nil
	expectRange(t, <-x, 1, 1)

	w := expectWrite(t, f, 7) // a and b together
	leave()
	if got := <-a; !errors.Is(got.err, context.Canceled) {
		t.Fatalf("leaving caller got %v, %v; want context.Canceled", got.r, got.err)
	}
	if err := w.ctx.Err(); err != nil {
		t.Fatalf("one caller leaving cancelled the batch write: %v", err)
	}
	w.release <- nil
	expectRange(t, <-b, 7, 8) // 2…6 were a's, and are lost
}

func TestCoalescerWriteCancelledWhenEveryCallerLeft(t *testing.T) {
	f := newFakeStore(true)
	h := newHarness(t, f)

	leaving, leave := context.WithCancel(context.Background())
	a := h.start(leaving, "a", 1)
	w := expectWrite(t, f, 1)
	leave()
	if got := <-a; !errors.Is(got.err, context.Canceled) {
		t.Fatalf("got %v, %v; want context.Canceled", got.r, got.err)
	}
	<-w.ctx.Done() // the fake returns on its own now; drained() checks the flusher ended
}

func TestCoalescerErrorsFanOut(t *testing.T) {
	f := newFakeStore(true)
	h := newHarness(t, f)
	ctx := context.Background()

	x := h.start(ctx, "a", 1)
	wx := expectWrite(t, f, 1)
	outs := []<-chan call{h.start(ctx, "a", 1), h.start(ctx, "a", 2), h.start(ctx, "a", 3)}
	wx.release <- nil
	<-x

	boom := errors.New("boom")
	expectWrite(t, f, 6).release <- boom
	for i, out := range outs {
		if got := <-out; !errors.Is(got.err, boom) {
			t.Errorf("caller %d got %v, %v; want the batch's error", i, got.r, got.err)
		}
	}

	// The name recovers: the next caller gets a fresh write.
	y := h.start(ctx, "a", 1)
	expectWrite(t, f, 1).release <- nil
	expectRange(t, <-y, 2, 2)
}

func TestCoalescerBatchDeadline(t *testing.T) {
	f := newFakeStore(true)
	h := newHarness(t, f)
	base := context.Background()
	now := time.Now()

	x := h.start(base, "a", 1)
	wx := expectWrite(t, f, 1)
	if d, ok := wx.ctx.Deadline(); !ok || d.Before(now.Add(time.Minute)) {
		t.Errorf("caller without deadline: batch deadline %v, %v; want now+timeout", d, ok)
	}
	early, cancel1 := context.WithDeadline(base, now.Add(time.Hour))
	defer cancel1()
	late, cancel2 := context.WithDeadline(base, now.Add(2*time.Hour))
	defer cancel2()
	a := h.start(early, "a", 1)
	b := h.start(late, "a", 1)
	wx.release <- nil
	<-x

	w := expectWrite(t, f, 2)
	if d, _ := w.ctx.Deadline(); !d.Equal(now.Add(2 * time.Hour)) {
		t.Errorf("batch deadline %v, want the latest caller's, %v", d, now.Add(2*time.Hour))
	}
	w.release <- nil
	expectRange(t, <-a, 2, 2)
	expectRange(t, <-b, 3, 3)
}

func TestCoalescerExhaustedBatchServesCallersThatFit(t *testing.T) {
	f := newFakeStore(true)
	f.seq["a"] = math.MaxInt64 - 3
	h := newHarness(t, f)
	ctx := context.Background()

	x := h.start(ctx, "a", 1)
	wx := expectWrite(t, f, 1)
	a := h.start(ctx, "a", 1)
	b := h.start(ctx, "a", 2)
	c := h.start(ctx, "a", 1)
	wx.release <- nil
	expectRange(t, <-x, math.MaxInt64-2, math.MaxInt64-2)

	expectWrite(t, f, 4).release <- nil // 2 left: the batch does not fit
	expectWrite(t, f, 1).release <- nil
	expectWrite(t, f, 2).release <- nil
	expectWrite(t, f, 1).release <- nil
	expectRange(t, <-a, math.MaxInt64-1, math.MaxInt64-1)
	if got := <-b; !errors.Is(got.err, ErrExhausted) {
		t.Errorf("caller of 2 got %v, %v; want ErrExhausted", got.r, got.err)
	}
	expectRange(t, <-c, math.MaxInt64, math.MaxInt64)
}

func TestCoalescerSumNeverOverflows(t *testing.T) {
	f := newFakeStore(true)
	h := newHarness(t, f)
	ctx := context.Background()

	x := h.start(ctx, "a", 1)
	wx := expectWrite(t, f, 1)
	huge := h.start(ctx, "a", math.MaxInt64)
	one := h.start(ctx, "a", 1)
	wx.release <- nil
	expectRange(t, <-x, 1, 1)

	expectWrite(t, f, math.MaxInt64).release <- nil // alone: adding 1 would overflow
	if got := <-huge; !errors.Is(got.err, ErrExhausted) {
		t.Errorf("got %v, %v; want ErrExhausted", got.r, got.err)
	}
	expectWrite(t, f, 1).release <- nil
	expectRange(t, <-one, 2, 2)
}

func TestCoalescerDoneContext(t *testing.T) {
	f := newFakeStore(true)
	h := newHarness(t, f)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := h.c.do(ctx, "a", 1, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled without a write", err)
	}
}

// BenchmarkCoalescer measures the coalescer's own overhead, over a store that
// answers at once, and how many callers a write serves, with 16 callers per CPU.
func BenchmarkCoalescer(b *testing.B) {
	f := newFakeStore(false)
	c := newCoalescer(f.reserve, nil, Options{WriteTimeout: time.Minute}, 1)
	b.ReportAllocs()
	b.SetParallelism(16)
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			if _, err := c.do(ctx, "a", 1, nil); err != nil {
				b.Error(err)
				return
			}
		}
	})
	c.wg.Wait()
	b.ReportMetric(float64(b.N)/float64(f.calls), "callers/write")
}

// A batch's write carries none of its callers' context values: a caller's values
// include its MongoDB session, and one caller's transaction must not hold a
// write whose values go to others.
func TestCoalescerWriteCarriesNoCallerValues(t *testing.T) {
	f := newFakeStore(true)
	h := newHarness(t, f)
	type key struct{}
	ctx := context.WithValue(context.Background(), key{}, "session of the first caller")
	out := h.start(ctx, "a", 1)
	w := expectWrite(t, f, 1)
	if v := w.ctx.Value(key{}); v != nil {
		t.Errorf("the batch write sees the caller's value %v", v)
	}
	w.release <- nil
	expectRange(t, <-out, 1, 1)
}

// TestCoalescerOffWritesAlone: with Options.NoCoalesce every call makes its own
// write, on its own context, even while another write for the name is in flight,
// and each counts as a batch of one.
func TestCoalescerOffWritesAlone(t *testing.T) {
	f := newFakeStore(true)
	var mu sync.Mutex
	var batches []int
	c := newCoalescer(f.reserve, func(callers int) {
		mu.Lock()
		defer mu.Unlock()
		batches = append(batches, callers)
	}, Options{WriteTimeout: time.Minute, NoCoalesce: true}, 1)
	type key struct{}
	outs := make(chan call, 2)
	for i := range 2 {
		ctx := context.WithValue(context.Background(), key{}, i)
		go func() {
			r, err := c.do(ctx, "a", 2, nil)
			outs <- call{r, err}
		}()
	}
	w1, w2 := expectWrite(t, f, 2), expectWrite(t, f, 2) // both in flight at once
	if w1.ctx.Value(key{}) == nil || w2.ctx.Value(key{}) == nil || w1.ctx.Value(key{}) == w2.ctx.Value(key{}) {
		t.Errorf("writes ran on %v and %v, want each on its caller's context", w1.ctx.Value(key{}), w2.ctx.Value(key{}))
	}
	w1.release <- nil
	w2.release <- nil
	var got []Range
	for range 2 {
		o := <-outs
		if o.err != nil {
			t.Fatal(o.err)
		}
		got = append(got, o.r)
	}
	slices.SortFunc(got, func(a, b Range) int { return int(a.First - b.First) })
	if want := []Range{{First: 1, Last: 2}, {First: 3, Last: 4}}; !slices.Equal(got, want) {
		t.Errorf("ranges %v, want %v", got, want)
	}
	if want := []int{1, 1}; !slices.Equal(batches, want) {
		t.Errorf("callers per batch = %v, want %v", batches, want)
	}
	if len(c.queues) != 0 {
		t.Errorf("%d queues left: a call that writes alone must not queue", len(c.queues))
	}
}

// TestCoalescerSessionWritesAlone: a caller inside a session makes its own write,
// in its session, so that the session holds its values and no one else's.
func TestCoalescerSessionWritesAlone(t *testing.T) {
	f := newFakeStore(true)
	h := newHarness(t, f)
	sess, err := offline(t).Client().StartSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.EndSession(context.Background())
	out := make(chan call, 1)
	go func() {
		r, err := h.c.do(mongo.NewSessionContext(context.Background(), sess), "a", 1, nil)
		out <- call{r, err}
	}()
	w := expectWrite(t, f, 1)
	if mongo.SessionFromContext(w.ctx) != sess {
		t.Error("the session caller's write does not run in its session")
	}
	w.release <- nil
	expectRange(t, <-out, 1, 1)
}

// TestCoalescerExhaustedNameAnswersAtOnce fills a name while 200 callers wait:
// once a write proves the name cannot take k values, every caller asking for k or
// more gets ErrExhausted without a write of its own, and the callers that fit are
// served.
func TestCoalescerExhaustedNameAnswersAtOnce(t *testing.T) {
	for _, tc := range []struct {
		name      string
		left      int64 // values the name can still take once the first caller is served
		maxWrites int   // writes after the first caller's
	}{
		// The batch of 200 fails, then the first single proves that 1 does not fit.
		{name: "full", left: 0, maxWrites: 2},
		// The batch fails, 5 singles fit, the 6th proves that 1 does not fit.
		{name: "five left", left: 5, maxWrites: 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeStore(true)
			f.seq["a"] = math.MaxInt64 - tc.left - 1
			h := newHarness(t, f)
			ctx := context.Background()

			x := h.start(ctx, "a", 1)
			wx := expectWrite(t, f, 1)
			const callers = 200
			outs := make([]<-chan call, callers)
			for i := range outs {
				outs[i] = h.start(ctx, "a", 1)
			}
			wx.release <- nil
			expectRange(t, <-x, math.MaxInt64-tc.left, math.MaxInt64-tc.left)

			// Apply every further write, and count them.
			writes := make(chan int)
			stop := make(chan struct{})
			go func() {
				n := 0
				for {
					select {
					case w := <-f.writes:
						n++
						w.release <- nil
					case <-stop:
						writes <- n
						return
					}
				}
			}()
			served := int64(0)
			for i, out := range outs {
				got := <-out
				switch {
				case int64(i) < tc.left:
					expectRange(t, got, math.MaxInt64-tc.left+1+int64(i), math.MaxInt64-tc.left+1+int64(i))
					served++
				case !errors.Is(got.err, ErrExhausted):
					t.Errorf("caller %d got %v, %v; want ErrExhausted", i, got.r, got.err)
				}
			}
			close(stop)
			if n := <-writes; n > tc.maxWrites {
				t.Errorf("%d writes after the first, want at most %d", n, tc.maxWrites)
			}
			if served != tc.left {
				t.Errorf("%d callers served, want %d", served, tc.left)
			}
		})
	}
}

// threeBehindFirst queues three callers of "a" behind a first one's write, lets
// that write through (value 1), and returns the three, whose batch is next.
func threeBehindFirst(t *testing.T, f *fakeStore, h *harness) (a, b, c <-chan call) {
	t.Helper()
	ctx := context.Background()
	x := h.start(ctx, "a", 1)
	wx := expectWrite(t, f, 1)
	a, b, c = h.start(ctx, "a", 1), h.start(ctx, "a", 1), h.start(ctx, "a", 1)
	wx.release <- nil
	expectRange(t, <-x, 1, 1)
	return a, b, c
}

// TestCoalescerShortWriteQueuesTheRest: a write that gets only the first of its
// values (an Optimistic write that another process overtook) serves the callers
// those cover, and the next write serves the rest, in order, with the callers
// that came meanwhile.
func TestCoalescerShortWriteQueuesTheRest(t *testing.T) {
	f := newFakeStore(true)
	h := newHarness(t, f)
	a, b, c := threeBehindFirst(t, f, h)

	w := expectWrite(t, f, 3)
	d := h.start(context.Background(), "a", 1)
	f.mu.Lock()
	f.short = func(int64) (int64, error) { return 1, nil }
	f.mu.Unlock()
	w.release <- nil
	expectRange(t, <-a, 2, 2)
	expectWrite(t, f, 3).release <- nil // b and c again, then d
	expectRange(t, <-b, 3, 3)
	expectRange(t, <-c, 4, 4)
	expectRange(t, <-d, 5, 5)
}

// TestCoalescerDocumentErrorFailsOneCaller: an error in one caller's document
// goes to that caller alone; the callers before it get their values and the ones
// after it the next write's.
func TestCoalescerDocumentErrorFailsOneCaller(t *testing.T) {
	f := newFakeStore(true)
	h := newHarness(t, f)
	a, b, c := threeBehindFirst(t, f, h)

	w := expectWrite(t, f, 3)
	bad := errors.New("duplicate key in another unique index")
	f.mu.Lock()
	f.short = func(int64) (int64, error) { return 1, &docError{bad} }
	f.mu.Unlock()
	w.release <- nil
	expectRange(t, <-a, 2, 2)
	if got := <-b; got.err != bad {
		t.Errorf("b got %v, %v; want its document's error alone", got.r, got.err)
	}
	expectWrite(t, f, 1).release <- nil
	expectRange(t, <-c, 3, 3)
}

// With a cap on the callers of one write, a write serves at most that many; the
// others wait for the next, in arrival order.
func TestCoalescerCapsCallersPerWrite(t *testing.T) {
	f := newFakeStore(true)
	h := newHarness(t, f)
	h.c.maxCallers = 2
	ctx := context.Background()

	first := h.start(ctx, "a", 1)
	w := expectWrite(t, f, 1) // held open while the others arrive
	var outs []<-chan call
	for range 3 {
		outs = append(outs, h.start(ctx, "a", 1))
	}
	w.release <- nil
	expectRange(t, <-first, 1, 1)
	w = expectWrite(t, f, 2) // two of the three
	w.release <- nil
	expectRange(t, <-outs[0], 2, 2)
	expectRange(t, <-outs[1], 3, 3)
	w = expectWrite(t, f, 1) // the third
	w.release <- nil
	expectRange(t, <-outs[2], 4, 4)
}

// A forced Set can move a name back: what a write proved about the name's
// capacity is forgotten.
func TestCoalescerForgetClearsExhaustion(t *testing.T) {
	c := newCoalescer(nil, nil, Options{WriteTimeout: time.Minute}, 1)
	q := &queue{tooMany: 5, exhausted: ErrExhausted}
	c.queues["a"] = q
	c.forget("a")
	if q.tooMany != 0 || q.exhausted != nil {
		t.Errorf("after forget: tooMany %d, exhausted %v; want none", q.tooMany, q.exhausted)
	}
}

// A write in flight when the name is forgotten proved nothing about the name
// as it is after: its ErrExhausted was of the value it read, before a Set or a
// numbering moved the value back. Observed: the queue kept it, and a caller of
// as many values got ErrExhausted at once, without a write.
func TestCoalescerForgetDuringWrite(t *testing.T) {
	exhausted := fmt.Errorf("%w: at %d, 10 requested", ErrExhausted, int64(math.MaxInt64-5))
	for _, lead := range []bool{true, false} {
		f := newFakeStore(true)
		h := newHarness(t, f)
		ctx := context.Background()
		var before <-chan call
		taken := int64(0) // values handed out before b's
		if !lead {        // the exhausted write is a batch's, not its caller's own
			before = h.start(ctx, "a", 1)
		}
		a := h.start(ctx, "a", 10)
		if !lead {
			expectWrite(t, f, 1).release <- nil
			expectRange(t, <-before, 1, 1)
			taken = 1
		}
		wa := expectWrite(t, f, 10) // it has read the name near its end
		b := h.start(ctx, "a", 1)   // keeps the queue alive
		h.c.forget("a")             // a Set has moved the name back since
		wa.release <- exhausted
		if got := <-a; !errors.Is(got.err, ErrExhausted) {
			t.Fatalf("lead %v: the held write's caller got %v, %v; want ErrExhausted", lead, got.r, got.err)
		}
		wb := expectWrite(t, f, 1)
		c := make(chan call, 1)
		go func() {
			r, err := h.c.do(ctx, "a", 10, nil)
			c <- call{r, err}
		}()
		var answered bool
		select {
		case got := <-c:
			answered = true
			t.Errorf("lead %v: a caller of 10 values after the forget got %v, %v at once; want a write", lead, got.r, got.err)
		case <-h.joined:
		}
		wb.release <- nil
		expectRange(t, <-b, taken+1, taken+1)
		if !answered {
			expectWrite(t, f, 10).release <- nil
			expectRange(t, <-c, taken+2, taken+11)
		}
	}
}

// A solo write waits for the write in flight, goes alone, and the callers who came
// after it are batched behind it: the order of the name's writes is the order in
// which they were asked for. Its caller gets what it returned, even fewer than n.
func TestCoalescerSoloWriteKeepsItsTurn(t *testing.T) {
	f := newFakeStore(true)
	h := newHarness(t, f)
	ctx := context.Background()

	first := h.start(ctx, "a", 1)
	w := expectWrite(t, f, 1) // held open while the others arrive
	before := h.start(ctx, "a", 2)

	solo := make(chan call, 1)
	go func() {
		r, err := h.c.solo(ctx, "a", 10, func(ctx context.Context, name string, n int64, _ func(int, int64) any) (int64, int64, error) {
			first, _, err := f.reserve(ctx, name, 4, nil) // fewer than asked, as near a sequence's end
			return first, 4, err
		})
		solo <- call{r, err}
	}()
	<-h.joined
	after1 := h.start(ctx, "a", 1)
	after2 := h.start(ctx, "a", 3)

	w.release <- nil
	expectRange(t, <-first, 1, 1)
	expectWrite(t, f, 2).release <- nil // the caller before the solo write, alone
	expectRange(t, <-before, 2, 3)
	expectWrite(t, f, 4).release <- nil // the solo write
	expectRange(t, <-solo, 4, 7)
	expectWrite(t, f, 4).release <- nil // the two callers after it, together
	expectRange(t, <-after1, 8, 8)
	expectRange(t, <-after2, 9, 11)
}
