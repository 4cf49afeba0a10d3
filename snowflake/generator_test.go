package snowflake_test

import (
	"errors"
	"math/bits"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seqd/seqd/snowflake"
)

// t0 is an arbitrary fixed millisecond for the injected clocks:
// 2026-11-26T19:30:00.123Z.
const t0 = 1795721400123

// fakeClock is a clock the test sets, and that moves on by step at each read.
type fakeClock struct {
	ms   atomic.Int64
	step int64
}

func newFakeClock(ms int64) *fakeClock {
	c := &fakeClock{}
	c.ms.Store(ms)
	return c
}

func (c *fakeClock) now() time.Time { return time.UnixMilli(c.ms.Add(c.step) - c.step) }

func mustGenerator(t testing.TB, layout snowflake.Layout, worker int, clock *fakeClock) *snowflake.Generator {
	t.Helper()
	g, err := snowflake.NewGenerator(layout, worker, snowflake.WithClock(clock.now))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func mustNew(t testing.TB, g *snowflake.Generator) snowflake.ID {
	t.Helper()
	id, err := g.New()
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func mustDecode(t testing.TB, l snowflake.Layout, id snowflake.ID) snowflake.Parts {
	t.Helper()
	p, err := l.Decode(id)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestNewBorrowsPastTheSequence makes more ids in one millisecond than the
// sequence holds: each is the next, taking the next millisecond after the
// last sequence, until the ids are MaxBorrow ahead of the standing clock;
// then New waits, up to MaxWait, and fails with ErrClockBehind.
func TestNewBorrowsPastTheSequence(t *testing.T) {
	for _, l := range []snowflake.Layout{snowflake.Twitter, snowflake.JS53} {
		t.Run(l.String(), func(t *testing.T) {
			clock := newFakeClock(t0)
			g := mustGenerator(t, l, 3, clock)
			prev := mustNew(t, g)
			if p := mustDecode(t, l, prev); p.UnixMilli != t0 || p.Worker != 3 || p.Sequence != 0 {
				t.Fatalf("first id %d = %+v, want millisecond %d, worker 3, sequence 0", prev, p, t0)
			}
			borrowable := (int(snowflake.MaxBorrow/time.Millisecond)+1)*l.PerMillisecond() - 1
			for i := range borrowable {
				id := mustNew(t, g)
				p, q := mustDecode(t, l, prev), mustDecode(t, l, id)
				next := q.UnixMilli == p.UnixMilli && q.Sequence == p.Sequence+1 ||
					q.UnixMilli == p.UnixMilli+1 && q.Sequence == 0 && p.Sequence == l.PerMillisecond()-1
				if !next || id <= prev || q.Worker != 3 {
					t.Fatalf("id %d = %+v after %+v: want the next sequence, or the next millisecond's first", i, q, p)
				}
				prev = id
			}
			if _, err := g.New(); !errors.Is(err, snowflake.ErrClockBehind) {
				t.Fatalf("past MaxBorrow with the clock standing: %v, want ErrClockBehind", err)
			}
			clock.ms.Store(t0 + 1000)
			if id := mustNew(t, g); id <= prev || mustDecode(t, l, id).UnixMilli != t0+1000 {
				t.Errorf("the clock moved on: %+v, want millisecond t0+1000", mustDecode(t, l, id))
			}
		})
	}
}

// TestNewAcrossClockStepBack steps a clock that follows the real one back:
// ids keep increasing, waiting for the clock when the step is within MaxWait,
// failing with ErrClockBehind when it is not, until the clock catches up.
func TestNewAcrossClockStepBack(t *testing.T) {
	var offset atomic.Int64
	g, err := snowflake.NewGenerator(snowflake.Twitter, 1, snowflake.WithClock(func() time.Time {
		return time.Now().Add(time.Duration(offset.Load()))
	}))
	if err != nil {
		t.Fatal(err)
	}
	before := mustNew(t, g)

	offset.Store(int64(-20 * time.Millisecond))
	after := mustNew(t, g)
	if after <= before {
		t.Fatalf("after the clock stepped back 20 ms: %d, not above %d", after, before)
	}

	offset.Store(int64(-time.Hour))
	if id, err := g.New(); !errors.Is(err, snowflake.ErrClockBehind) {
		t.Fatalf("after the clock stepped back an hour: %d, %v, want ErrClockBehind", id, err)
	}
	offset.Store(int64(time.Second))
	if id := mustNew(t, g); id <= after {
		t.Errorf("once the clock caught up: %d, not above %d", id, after)
	}
}

// TestJS53LastMillisecond makes ids in JS53's last millisecond: they stay at
// or below 2^53 − 1, the largest is exactly that, and the next millisecond
// fails with ErrExhausted and changes nothing.
func TestJS53LastMillisecond(t *testing.T) {
	l := snowflake.JS53
	if got, want := l.End().Format(time.RFC3339Nano), "2060-11-03T19:53:47.775Z"; got != want {
		t.Fatalf("JS53 ends %s, want %s", got, want)
	}
	if l.MaxID() != 1<<53-1 || l.Workers() != 32 || l.PerMillisecond() != 256 {
		t.Fatalf("JS53: max id %d, %d workers, %d a millisecond", l.MaxID(), l.Workers(), l.PerMillisecond())
	}
	clock := newFakeClock(l.End().UnixMilli())
	g := mustGenerator(t, l, l.Workers()-1, clock)
	ids := make([]snowflake.ID, l.PerMillisecond())
	if err := g.Fill(ids); err != nil {
		t.Fatal(err)
	}
	if last := ids[len(ids)-1]; last != 1<<53-1 {
		t.Errorf("last id of the last millisecond, last worker: %d, want 2^53 − 1", last)
	}
	if _, err := g.New(); !errors.Is(err, snowflake.ErrExhausted) {
		t.Errorf("borrowing past the end: %v, want ErrExhausted", err)
	}
	clock.ms.Add(1)
	if _, err := g.New(); !errors.Is(err, snowflake.ErrExhausted) {
		t.Errorf("clock past the end: %v, want ErrExhausted", err)
	}
	if got, want := snowflake.Twitter.End().Format(time.RFC3339Nano), "2095-09-07T15:47:35.551Z"; got != want {
		t.Errorf("Twitter ends %s, want %s", got, want)
	}
}

// TestNewGeneratorWorkerRange checks the worker id is within the layout.
func TestNewGeneratorWorkerRange(t *testing.T) {
	for _, w := range []int{-1, 32} {
		if _, err := snowflake.NewGenerator(snowflake.JS53, w); err == nil {
			t.Errorf("JS53 worker id %d accepted", w)
		}
	}
	g, err := snowflake.NewGenerator(snowflake.JS53, 31)
	if err != nil {
		t.Fatal(err)
	}
	if w, ok := g.Worker(); !ok || w != 31 {
		t.Errorf("Worker() = %d, %v, want 31, true", w, ok)
	}
}

// TestSixtyMillionFromTwoGoroutines takes 60 million ids from one Generator
// in two goroutines, on a clock that moves 1 ms every 8,000 reads (some 4,000 ids): each
// goroutine's ids increase, and no id is in both. An id's place is its
// millisecond and sequence, so each goroutine sets one bit per id in a
// bitmap of its own (about 15 MB) and no bit may be set in both. Under the
// race detector it makes 6 million.
func TestSixtyMillionFromTwoGoroutines(t *testing.T) {
	total := uint64(60_000_000)
	if raceEnabled {
		total /= 10
	}
	l := snowflake.Twitter
	var reads atomic.Int64
	g, err := snowflake.NewGenerator(l, 7, snowflake.WithClock(func() time.Time {
		return time.UnixMilli(t0 + reads.Add(1)/8000)
	}))
	if err != nil {
		t.Fatal(err)
	}
	base := uint64(mustNew(t, g)) + 1
	span := 2 * total // places skipped: the rest of each millisecond, and what catch-ups drop
	var bitmaps [2][]uint64
	var failures [2]string
	var wg sync.WaitGroup
	for gr := range 2 {
		wg.Go(func() {
			seen := make([]uint64, span/64+1)
			bitmaps[gr] = seen
			prev := snowflake.ID(0)
			for range total / 2 {
				id, err := g.New()
				switch {
				case err != nil:
					failures[gr] = err.Error()
				case id <= prev:
					failures[gr] = "id " + id.String() + " is not greater than " + prev.String() + ", the goroutine's last"
				default:
					// The worker id is the same in all: drop it.
					p := uint64(id)>>22<<12 | uint64(id)&0xfff - (base>>22<<12 | base&0xfff)
					if p >= span {
						failures[gr] = "id " + id.String() + " is further from the first than the test allows for"
						return
					}
					seen[p/64] |= 1 << (p % 64)
					prev = id
					continue
				}
				return
			}
		})
	}
	wg.Wait()
	for gr, f := range failures {
		if f != "" {
			t.Fatalf("goroutine %d: %s", gr, f)
		}
	}
	for i := range bitmaps[0] {
		if both := bitmaps[0][i] & bitmaps[1][i]; both != 0 {
			t.Fatalf("both goroutines got the id at place %d", uint64(i)*64+uint64(bits.TrailingZeros64(both)))
		}
	}
}

// TestDefaultClock checks a Generator on the wall clock stamps its time.
func TestDefaultClock(t *testing.T) {
	g, err := snowflake.NewGenerator(snowflake.Twitter, 0)
	if err != nil {
		t.Fatal(err)
	}
	before := time.Now().UnixMilli()
	id := mustNew(t, g)
	after := time.Now().UnixMilli()
	if ms := mustDecode(t, snowflake.Twitter, id).UnixMilli; ms < before || ms > after {
		t.Errorf("id %d: millisecond %d, want between %d and %d", id, ms, before, after)
	}
}
