package blocks_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/seqd/seqd"
	"github.com/seqd/seqd/blocks"
	"github.com/seqd/seqd/internal/history"
)

var errDown = errors.New("store down")

// Values come 1..N without a gap across blocks, and each Fetch asks for the
// size Leaf's rule gives: doubling while blocks last less than Target, halving
// once they last more than twice Target, within MinBlock..MaxBlock.
func TestSequentialValuesAndBlockSizes(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	s := &store{}
	a := blocks.New(s.Fetch, blocks.Options{MinBlock: 10, MaxBlock: 80, Target: time.Second, Prefetch: 0.5, Now: clk.Now})

	// Blocks 10, 10, 20, 40, 80 (160 values) are used up at once: each doubles the
	// size. Then every value takes a second, so a block lasts far more than twice
	// Target and each halves it. The size changes when a block is used up; the
	// block fetched at half of the current one is the one after it.
	const quick, total = 160, 385
	for want := int64(1); want <= total; want++ {
		v, err := a.Next(ctx)
		if err != nil || v != want {
			t.Fatalf("Next = %d, %v; want %d", v, err, want)
		}
		if want >= quick {
			clk.Advance(time.Second)
		}
	}
	held := a.Close(ctx)

	wantAsked := []int64{10, 10, 20, 40, 80, 80, 80, 40, 20, 10, 10}
	if got := s.Asked(); !slices.Equal(got, wantAsked) {
		t.Errorf("Fetch asked for %v, want %v", got, wantAsked)
	}
	if want := []seqd.Range{{First: 386, Last: 390}, {First: 391, Last: 400}}; !slices.Equal(held, want) {
		t.Errorf("Close returned %v, want %v", held, want)
	}
	if m := s.maxRunning.Load(); m != 1 {
		t.Errorf("%d Fetch calls ran at once, want 1", m)
	}
	st := a.Status()
	if st.Fetched != 400 || st.Served != total || st.Skipped != 0 || st.BlockSize != 10 {
		t.Errorf("Status = %+v, want Fetched 400, Served %d, Skipped 0, BlockSize 10", st, total)
	}
}

// Once Prefetch of the current block is used, the next block is fetched in the
// background; callers keep taking values meanwhile, and while it is in flight
// no second Fetch starts, however many callers wait.
func TestPrefetch(t *testing.T) {
	ctx := context.Background()
	g := newGate()
	a := blocks.New(g.Fetch, blocks.Options{MinBlock: 10, Prefetch: 0.3})
	defer closeNow(a)

	first := goNext(ctx, a)
	g.expect(t, 10).give(1, 10)
	if r := wait(t, first); r.err != nil || r.v != 1 {
		t.Fatalf("Next = %d, %v; want 1", r.v, r.err)
	}
	if _, err := a.Next(ctx); err != nil {
		t.Fatal(err)
	}
	if a.Status().Fetching {
		t.Fatal("a Fetch started with 2 of 10 values used; Prefetch is 0.3")
	}
	if _, err := a.Next(ctx); err != nil {
		t.Fatal(err)
	}
	if !a.Status().Fetching {
		t.Fatal("no Fetch started with 3 of 10 values used; Prefetch is 0.3")
	}
	next := g.expect(t, 10)
	for want := int64(4); want <= 10; want++ {
		if v, err := a.Next(ctx); err != nil || v != want {
			t.Fatalf("Next = %d, %v while the next block is fetched; want %d", v, err, want)
		}
	}
	waiting := []<-chan result{goNext(ctx, a), goNext(ctx, a), goNext(ctx, a)}
	next.give(11, 20)
	var got []int64
	for _, ch := range waiting {
		r := wait(t, ch)
		if r.err != nil {
			t.Fatal(r.err)
		}
		got = append(got, r.v)
	}
	slices.Sort(got)
	if !slices.Equal(got, []int64{11, 12, 13}) {
		t.Errorf("waiting callers got %v, want 11, 12, 13", got)
	}
	// The three waiters used 3 of the new block: its own prefetch has started,
	// and it is the only Fetch since the one answered.
	g.expect(t, 20)
	select {
	case c := <-g.calls:
		t.Fatalf("a second Fetch (%d values) while one is in flight", c.n)
	default:
	}
}

// 64 goroutines take values at once: no value twice, each goroutine's values
// strictly increasing, and the whole history ordered in real time: a call that
// started after another returned got larger values.
func TestConcurrentCallers(t *testing.T) {
	ctx := context.Background()
	s := &store{}
	a := blocks.New(s.Fetch, blocks.Options{MinBlock: 1, MaxBlock: 64, Prefetch: 0.5})

	const goroutines, calls = 64, 500
	ops := make([][]history.Op, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			mine := make([]history.Op, 0, calls)
			for i := range calls {
				n := int64(1 + (g+i)%4)
				start := time.Now()
				var r seqd.Range
				var err error
				if n == 1 {
					r.First, err = a.Next(ctx)
					r.Last = r.First
				} else {
					r, err = a.NextN(ctx, n)
				}
				end := time.Now()
				if err != nil {
					t.Errorf("goroutine %d: %v", g, err)
					return
				}
				if r.Count() != n {
					t.Errorf("goroutine %d: NextN(%d) = %v", g, n, r)
				}
				if len(mine) > 0 && r.First <= mine[len(mine)-1].Last {
					t.Errorf("goroutine %d: %v after %d", g, r, mine[len(mine)-1].Last)
				}
				mine = append(mine, history.Op{Client: fmt.Sprint("goroutine-", g), Start: start, End: end, First: r.First, Last: r.Last})
			}
			ops[g] = mine
		})
	}
	wg.Wait()
	held := a.Close(ctx)

	res := history.Check(slices.Concat(ops...), history.Options{})
	if err := res.Err(); err != nil {
		t.Fatal(err)
	}
	if m := s.maxRunning.Load(); m != 1 {
		t.Errorf("%d Fetch calls ran at once, want 1", m)
	}
	checkAccounted(t, a, held, res.Values)
}

// checkAccounted checks that every value a fetched was served (received, as
// the history counted them), skipped, or given back at Close as held.
func checkAccounted(t *testing.T, a *blocks.Allocator, held []seqd.Range, received int64) {
	t.Helper()
	st := a.Status()
	var returned int64
	for _, r := range held {
		returned += r.Count()
	}
	if st.Served != received || st.Served+st.Skipped+returned != st.Fetched {
		t.Errorf("served %d (history: %d) + skipped %d + returned %d != fetched %d", st.Served, received, st.Skipped, returned, st.Fetched)
	}
}

func TestNextN(t *testing.T) {
	ctx := context.Background()
	t.Run("contiguous when it fits", func(t *testing.T) {
		a := blocks.New((&store{}).Fetch, blocks.Options{MinBlock: 10})
		defer a.Close(ctx)
		for _, want := range []seqd.Range{{First: 1, Last: 3}, {First: 4, Last: 6}, {First: 7, Last: 10}} {
			if r, err := a.NextN(ctx, want.Count()); err != nil || r != want {
				t.Fatalf("NextN(%d) = %v, %v; want %v", want.Count(), r, err, want)
			}
		}
		if st := a.Status(); st.Skipped != 0 || st.Served != 10 {
			t.Errorf("Skipped %d, Served %d; want 0, 10", st.Skipped, st.Served)
		}
	})
	t.Run("skips the rest when it does not fit", func(t *testing.T) {
		a := blocks.New((&store{}).Fetch, blocks.Options{MinBlock: 10})
		defer a.Close(ctx)
		if _, err := a.NextN(ctx, 6); err != nil {
			t.Fatal(err)
		}
		if r, err := a.NextN(ctx, 5); err != nil || r != (seqd.Range{First: 11, Last: 15}) {
			t.Fatalf("NextN(5) with 4 left = %v, %v; want 11..15", r, err)
		}
		if v, err := a.Next(ctx); err != nil || v != 16 {
			t.Fatalf("Next = %d, %v; want 16", v, err)
		}
		if st := a.Status(); st.Skipped != 4 || st.Served != 12 {
			t.Errorf("Skipped %d, Served %d; want 4, 12", st.Skipped, st.Served)
		}
	})
	t.Run("above MaxBlock fetches what it needs", func(t *testing.T) {
		s := &store{}
		a := blocks.New(s.Fetch, blocks.Options{MinBlock: 10, MaxBlock: 20})
		defer a.Close(ctx)
		r, err := a.NextN(ctx, 50)
		if err != nil || r.Count() != 50 {
			t.Fatalf("NextN(50) = %v, %v", r, err)
		}
		if !slices.ContainsFunc(s.Asked(), func(n int64) bool { return n >= 50 }) {
			t.Errorf("Fetch asked for %v, none ≥ 50", s.Asked())
		}
	})
	t.Run("count below 1", func(t *testing.T) {
		a := blocks.New((&store{}).Fetch, blocks.Options{})
		defer a.Close(ctx)
		for _, n := range []int64{0, -1} {
			if _, err := a.NextN(ctx, n); !errors.Is(err, seqd.ErrInvalidCount) {
				t.Errorf("NextN(%d) = %v, want ErrInvalidCount", n, err)
			}
		}
	})
}

// A Fetch that returns fewer values than asked (the sequence ends): a NextN
// they cannot hold fails with ErrExhausted, and the values still serve smaller
// calls.
func TestShortFetch(t *testing.T) {
	ctx := context.Background()
	g := newGate()
	a := blocks.New(g.Fetch, blocks.Options{MinBlock: 10, MaxBlock: 10, Prefetch: 1})
	defer closeNow(a)

	ch := make(chan result, 1)
	go func() {
		r, err := a.NextN(ctx, 10)
		ch <- result{r: r, err: err}
	}()
	g.expect(t, 10).give(1, 5)
	if r := wait(t, ch); !errors.Is(r.err, seqd.ErrExhausted) {
		t.Fatalf("NextN(10) with 5 values before the end = %v, %v; want ErrExhausted", r.r, r.err)
	}
	if r, err := a.NextN(ctx, 5); err != nil || r != (seqd.Range{First: 1, Last: 5}) {
		t.Fatalf("NextN(5) = %v, %v; want 1..5", r, err)
	}
	g.expect(t, 10).fail(seqd.ErrExhausted) // fetched once the short block was used up
	if _, err := a.Next(ctx); !errors.Is(err, seqd.ErrExhausted) {
		t.Fatalf("Next past the end = %v, want ErrExhausted", err)
	}
}

// A failed Fetch's error goes to the callers waiting for it; for Cooldown, later
// callers fail at once without a Fetch; after it, a Fetch is tried again.
func TestFetchErrorAndCooldown(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	g := newGate()
	a := blocks.New(g.Fetch, blocks.Options{MinBlock: 10, Cooldown: time.Second, Now: clk.Now})
	defer closeNow(a)

	waiting := []<-chan result{goNext(ctx, a), goNext(ctx, a), goNext(ctx, a)}
	g.expect(t, 10).fail(errDown)
	for _, ch := range waiting {
		if r := wait(t, ch); !errors.Is(r.err, errDown) {
			t.Errorf("waiting caller got %d, %v; want the Fetch's error", r.v, r.err)
		}
	}
	if st := a.Status(); st.LastError != errDown.Error() {
		t.Errorf("Status.LastError = %q, want %q", st.LastError, errDown)
	}

	clk.Advance(999 * time.Millisecond)
	if _, err := a.Next(ctx); !errors.Is(err, errDown) {
		t.Fatalf("Next during Cooldown = %v, want the Fetch's error", err)
	}
	if a.Status().Fetching {
		t.Fatal("a Fetch started during Cooldown")
	}

	clk.Advance(time.Millisecond)
	after := goNext(ctx, a)
	g.expect(t, 10).give(1, 10)
	if r := wait(t, after); r.err != nil || r.v != 1 {
		t.Fatalf("Next after Cooldown = %d, %v; want 1", r.v, r.err)
	}
	if st := a.Status(); st.LastError != "" {
		t.Errorf("Status.LastError = %q after a successful Fetch", st.LastError)
	}
}

// A failed prefetch is tried again before the current block runs out: once
// half of what remained is used, and, if that falls in the Cooldown, at half
// the rest; a caller who takes values meanwhile is never held up.
func TestFailedPrefetchIsTriedAgain(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	g := newGate()
	a := blocks.New(g.Fetch, blocks.Options{MinBlock: 100, Prefetch: 0.1, Cooldown: time.Second, Now: clk.Now})
	defer closeNow(a)

	first := goNext(ctx, a)
	g.expect(t, 100).give(1, 100)
	wait(t, first)
	// takeTo takes values up to last and reports whether a Fetch is in flight
	// after each, failing the test if one started before last.
	takeTo := func(from, last int64) bool {
		t.Helper()
		for want := from; want <= last; want++ {
			if v, err := a.Next(ctx); err != nil || v != want {
				t.Fatalf("Next = %d, %v; want %d", v, err, want)
			}
			if fetching := a.Status().Fetching; fetching || want == last {
				if want < last {
					t.Fatalf("a Fetch started at %d values used, before %d", want, last)
				}
				return fetching
			}
		}
		return false
	}
	if !takeTo(2, 10) {
		t.Fatal("no prefetch at 10 of 100 values used")
	}
	g.expect(t, 100).fail(errDown)
	waitStatus(t, a, func(st blocks.Status) bool { return st.LastError != "" && !st.Fetching })

	// 90 remained: the next try is at 10 + 45 = 55, but that is in the Cooldown,
	// so it moves to 55 + 22 = 77.
	if takeTo(11, 55) {
		t.Fatal("a Fetch started during the Cooldown")
	}
	clk.Advance(time.Second)
	if !takeTo(56, 77) {
		t.Fatal("the failed prefetch was not tried again at 77 of 100 values used")
	}
	g.expect(t, 100).give(101, 200)
	waitStatus(t, a, func(st blocks.Status) bool { return st.Next != (blocks.Block{}) })
	for want := int64(78); want <= 101; want++ {
		if v, err := a.Next(ctx); err != nil || v != want {
			t.Fatalf("Next = %d, %v; want %d", v, err, want)
		}
	}
}

// A NextN larger than the blocks gets the block fetched for it, however many
// callers take single values meanwhile: one Fetch each, not one per lost race.
func TestLargeNextNAmongSmallCallers(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	s := &store{}
	a := blocks.New(s.Fetch, blocks.Options{MinBlock: 10, MaxBlock: 10})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for ctx.Err() == nil {
				a.Next(ctx)
			}
		})
	}
	const calls, n = 50, 1000
	for range calls {
		if _, err := a.NextN(context.Background(), n); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	wg.Wait()
	a.Close(context.Background())
	large := 0
	for _, asked := range s.Asked() {
		if asked >= n {
			large++
		}
	}
	if large != calls {
		t.Errorf("%d Fetches of %d values for %d NextN(%d) calls, want one each", large, n, calls, n)
	}
}

// A caller whose context ends returns its error at once; the Fetch goes on, on
// the Allocator's context, and its block serves the next caller whole: the
// values the caller that left had claimed are not lost.
func TestCallerContextEnds(t *testing.T) {
	g := newGate()
	a := blocks.New(g.Fetch, blocks.Options{MinBlock: 10})
	defer closeNow(a)

	ctx, cancel := context.WithCancel(context.Background())
	gone := goNext(ctx, a)
	c := g.expect(t, 10)
	cancel()
	if r := wait(t, gone); !errors.Is(r.err, context.Canceled) {
		t.Fatalf("Next with its context cancelled = %d, %v; want context.Canceled", r.v, r.err)
	}
	if err := c.ctx.Err(); err != nil {
		t.Fatalf("the Fetch's context ended with the caller's: %v", err)
	}
	if _, ok := c.ctx.Deadline(); !ok {
		t.Error("the Fetch's context has no deadline; FetchTimeout bounds it")
	}
	c.give(1, 10)
	if v, err := a.Next(context.Background()); err != nil || v != 1 {
		t.Fatalf("Next = %d, %v; want 1 from the block fetched for the caller that left", v, err)
	}
}

// Close waits for the Fetch in flight and returns what is held, ascending;
// afterwards calls fail with ErrClosed and no goroutine of the Allocator's is
// left.
func TestClose(t *testing.T) {
	ctx := context.Background()
	g := newGate()
	a := blocks.New(g.Fetch, blocks.Options{MinBlock: 10})

	first := goNext(ctx, a)
	g.expect(t, 10).give(1, 10)
	wait(t, first)
	prefetch := g.expect(t, 10) // 1 of 10 is Prefetch 0.1

	closed := make(chan []seqd.Range, 1)
	go func() { closed <- a.Close(ctx) }()
	// Close takes the current block out of use first, then waits for the Fetch.
	waitStatus(t, a, func(st blocks.Status) bool { return st.Current == (blocks.Block{}) })
	if _, err := a.Next(ctx); !errors.Is(err, blocks.ErrClosed) {
		t.Fatalf("Next while closing = %v, want ErrClosed", err)
	}
	select {
	case held := <-closed:
		t.Fatalf("Close returned %v before the Fetch in flight ended", held)
	default:
	}
	prefetch.give(11, 20)
	var held []seqd.Range
	select {
	case held = <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return after the Fetch ended")
	}
	if want := []seqd.Range{{First: 2, Last: 10}, {First: 11, Last: 20}}; !slices.Equal(held, want) {
		t.Errorf("Close returned %v, want %v", held, want)
	}
	if _, err := a.Next(ctx); !errors.Is(err, blocks.ErrClosed) {
		t.Errorf("Next after Close = %v, want ErrClosed", err)
	}
	if _, err := a.NextN(ctx, 3); !errors.Is(err, blocks.ErrClosed) {
		t.Errorf("NextN after Close = %v, want ErrClosed", err)
	}
	if prefetch.ctx.Err() == nil {
		t.Error("the Allocator's context lives on after Close")
	}
	noFetchGoroutine(t)
}

// Close whose context ends before the Fetch does returns what it holds, and the
// Fetch is cancelled.
func TestCloseGivesUpWaiting(t *testing.T) {
	g := newGate()
	a := blocks.New(g.Fetch, blocks.Options{MinBlock: 10})
	first := goNext(context.Background(), a)
	g.expect(t, 10).give(1, 10)
	wait(t, first)
	prefetch := g.expect(t, 10)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if held := a.Close(ctx); !slices.Equal(held, []seqd.Range{{First: 2, Last: 10}}) {
		t.Errorf("Close = %v, want 2..10", held)
	}
	select {
	case <-prefetch.ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the Fetch in flight was not cancelled when Close gave up waiting")
	}
	noFetchGoroutine(t)
}

// A MaxBlock set below the default MinBlock bounds every block, the first
// included: the default MinBlock gives way to it, as a set MinBlock would not.
func TestMaxBlockBelowTheDefaultMinBlock(t *testing.T) {
	ctx := context.Background()
	s := &store{}
	a := blocks.New(s.Fetch, blocks.Options{MaxBlock: 10, Target: time.Hour})
	defer closeNow(a)
	for range 35 {
		if _, err := a.Next(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range s.Asked() {
		if n > 10 {
			t.Fatalf("Fetch asked for %v values; want at most MaxBlock, 10", s.Asked())
		}
	}
}

func TestStatus(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	g := newGate()
	a := blocks.New(g.Fetch, blocks.Options{MinBlock: 10, MaxBlock: 100, Target: time.Hour, Prefetch: 0.5, Now: clk.Now})
	defer closeNow(a)

	if st := a.Status(); st != (blocks.Status{BlockSize: 10}) {
		t.Errorf("Status before any call = %+v", st)
	}
	first := goNext(ctx, a)
	c := g.expect(t, 10)
	if !a.Status().Fetching {
		t.Error("Status.Fetching false with a Fetch in flight")
	}
	clk.Advance(2 * time.Second)
	c.give(101, 110)
	wait(t, first)
	fetchedAt := clk.Now()
	if st := a.Status(); st.LastFetch != 2*time.Second || !st.LastFetchAt.Equal(fetchedAt) || st.Fetching {
		t.Errorf("after a Fetch of 2 s: LastFetch %v, LastFetchAt %v, Fetching %v; want 2s, %v, false", st.LastFetch, st.LastFetchAt, st.Fetching, fetchedAt)
	}
	// 1 of 10 used; the next Fetch starts at 5.
	if st := a.Status(); st.CurrentSize != 10 || st.UntilFetch != 4 {
		t.Errorf("after one value of a block of 10: CurrentSize %d, UntilFetch %d; want 10, 4", st.CurrentSize, st.UntilFetch)
	}

	clk.Advance(4 * time.Second)
	for range 4 {
		if _, err := a.Next(ctx); err != nil {
			t.Fatal(err)
		}
	}
	g.expect(t, 10).give(111, 120) // at 5 of 10
	st := a.Status()
	if st.Next == (blocks.Block{}) {
		// The answer is filed after Fetch returns; Status may run first.
		st = waitStatus(t, a, func(st blocks.Status) bool { return st.Next != (blocks.Block{}) })
	}
	want := blocks.Status{
		Current:     blocks.Block{First: 106, Last: 110, Remaining: 5},
		Next:        blocks.Block{First: 111, Last: 120, Remaining: 10},
		CurrentSize: 10,
		UntilFetch:  5 + 5, // the rest of the current block, then half the next
		BlockSize:   10,
		Rate:        5.0 / 6, // 5 values in the 6 s since the first Status
		LastFetch:   0,       // the second Fetch took no time on the clock
		LastFetchAt: fetchedAt.Add(4 * time.Second),
		Fetched:     20,
		Served:      5,
	}
	if st != want {
		t.Errorf("Status =\n%+v, want\n%+v", st, want)
	}

	// The block is used up in 4 s, under Target: the size doubles. Rate counts every value served in the 6 s.
	if r, err := a.NextN(ctx, 6); err != nil || r != (seqd.Range{First: 111, Last: 116}) {
		t.Fatalf("NextN(6) = %v, %v; want 111..116", r, err)
	}
	st = a.Status()
	if st.Skipped != 5 || st.Served != 11 || st.BlockSize != 20 || st.Rate != 11.0/6 || st.Current.First != 117 {
		t.Errorf("after a skip: Status = %+v; want Skipped 5, Served 11, BlockSize 20, Rate 11/6, Current from 117", st)
	}
	g.expect(t, 20).give(121, 140) // 6 of the block in use is over Prefetch, at the new size
}

// waitStatus waits, a scheduler round at a time, until st holds.
func waitStatus(t *testing.T, a *blocks.Allocator, ok func(blocks.Status) bool) blocks.Status {
	t.Helper()
	for range 100000 {
		if st := a.Status(); ok(st) {
			return st
		}
		runtime.Gosched()
	}
	t.Fatal("Status never reached the expected state")
	return blocks.Status{}
}

// closeNow closes a without waiting for a Fetch the test left unanswered.
func closeNow(a *blocks.Allocator) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	a.Close(ctx)
}

// Close while 16 goroutines take values: what Close returns was never handed
// out, and every value fetched is served, skipped or returned.
func TestCloseWhileServing(t *testing.T) {
	ctx := context.Background()
	s := &store{}
	a := blocks.New(s.Fetch, blocks.Options{MinBlock: 1, MaxBlock: 32, Prefetch: 0.5})

	const goroutines = 16
	got := make([][]seqd.Range, goroutines)
	started := make(chan struct{}, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			sent := false
			defer func() { // a goroutine that fails early still lets Close go ahead
				if !sent {
					started <- struct{}{}
				}
			}()
			for i := 0; ; i++ {
				r, err := a.NextN(ctx, int64(1+(g+i)%3))
				if errors.Is(err, blocks.ErrClosed) {
					return
				}
				if err != nil {
					t.Errorf("goroutine %d: %v", g, err)
					return
				}
				got[g] = append(got[g], r)
				if i == 100 {
					started <- struct{}{}
					sent = true
				}
			}
		})
	}
	for range goroutines {
		<-started
	}
	held := a.Close(ctx)
	wg.Wait()

	seen := map[int64]bool{}
	var served int64
	for _, rs := range got {
		for _, r := range rs {
			for v := r.First; v <= r.Last; v++ {
				if seen[v] {
					t.Fatalf("%d handed out twice", v)
				}
				seen[v] = true
				served++
			}
		}
	}
	var returned int64
	for i, r := range held {
		if i > 0 && r.First <= held[i-1].Last {
			t.Errorf("Close returned %v: not ascending", held)
		}
		for v := r.First; v <= r.Last; v++ {
			if seen[v] {
				t.Fatalf("Close returned %d, which was handed out", v)
			}
		}
		returned += r.Count()
	}
	st := a.Status()
	if st.Served != served || st.Served+st.Skipped+returned != st.Fetched {
		t.Errorf("served %d (seen %d) + skipped %d + returned %d != fetched %d", st.Served, served, st.Skipped, returned, st.Fetched)
	}
	noFetchGoroutine(t)
}

// Rate is values a second over a span of a second or more, not one block's
// life: 1000 calls of NextN(1000), one every 10 ms, serve 100,000 values a
// second, though each call uses a block up at once.
func TestRateOverAWindow(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	s := &store{}
	a := blocks.New(s.Fetch, blocks.Options{MinBlock: 100, MaxBlock: 1000, Target: time.Hour, Now: clk.Now})
	defer closeNow(a)

	for range 1000 {
		if _, err := a.NextN(ctx, 1000); err != nil {
			t.Fatal(err)
		}
		clk.Advance(10 * time.Millisecond)
	}
	const want = 1000 / 0.010
	if r := a.Status().Rate; r < 0.9*want || r > 1.1*want {
		t.Errorf("Rate = %.0f, want %.0f ± 10 %%", r, want)
	}
}

// RateHistory is the rate of each whole minute since the first call, the
// newest last: a minute at 100 values a second, one at 10, one idle, read by a
// status page every 10 s; then half an hour idle fills every window with 0.
func TestRateHistory(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	s := &store{}
	a := blocks.New(s.Fetch, blocks.Options{MinBlock: 100, MaxBlock: 1000, Target: time.Hour, Now: clk.Now})
	defer closeNow(a)

	if st := a.Status(); st.RateHistoryKnown != 0 || st.RateHistory != ([blocks.RateHistoryLen]float64{}) {
		t.Errorf("RateHistory before a window ended: %v, %d known", st.RateHistory, st.RateHistoryKnown)
	}
	for _, perSecond := range []int64{100, 10, 0} {
		for sec := range 60 {
			if perSecond > 0 {
				if _, err := a.NextN(ctx, perSecond); err != nil {
					t.Fatal(err)
				}
			}
			clk.Advance(time.Second)
			if sec%10 == 9 {
				a.Status()
			}
		}
	}
	st := a.Status()
	if st.RateHistoryKnown != 3 {
		t.Fatalf("after 3 minutes: %d windows known, want 3 (%v)", st.RateHistoryKnown, st.RateHistory)
	}
	got := st.RateHistory[blocks.RateHistoryLen-3:]
	for i, want := range []float64{100, 10, 0} {
		if got[i] < 0.9*want || got[i] > 1.1*want {
			t.Errorf("RateHistory's last 3 = %v, want 100, 10, 0 ± 10 %%", got)
			break
		}
	}

	clk.Advance(30 * time.Minute)
	st = a.Status()
	if st.RateHistoryKnown != blocks.RateHistoryLen || st.RateHistory != ([blocks.RateHistoryLen]float64{}) {
		t.Errorf("after half an hour idle: RateHistory %v, %d known; want all %d known and 0", st.RateHistory, st.RateHistoryKnown, blocks.RateHistoryLen)
	}
}
