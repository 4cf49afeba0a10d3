package uuidv7_test

import (
	"math/bits"
	"sync"
	"testing"
	"time"

	"github.com/seqd/seqd/uuidv7"
)

// t0 is an arbitrary fixed millisecond for the injected clocks.
const t0 = 1_764_072_000_123 // 2025-11-25T12:00:00.123Z

// fakeClock is a clock the test sets by hand, in milliseconds. Set it only while
// no other goroutine reads it: a plain field keeps the race detector's cost off
// loops of 2^16 ids.
type fakeClock struct{ ms int64 }

func (c *fakeClock) now() time.Time { return time.UnixMilli(c.ms) }
func (c *fakeClock) set(ms int64)   { c.ms = ms }

// position returns an id's place in the sequence a Generator walks:
// unix_ts_ms<<16 | counter.
func position(u uuidv7.UUID) uint64 { return uint64(u.UnixMilli())<<16 | uint64(u.Counter()) }

// wellFormed reports whether u is version 7 of variant 10, cheaply, for loops
// over millions of ids.
func wellFormed(u uuidv7.UUID) bool { return u[6]>>4 == 7 && u[8]>>6 == 0b10 }

// mustFollow fails unless next is exactly the id after prev: the next counter
// value, borrowing from the next millisecond after 0xffff, and well formed.
func mustFollow(t *testing.T, i int, prev, next uuidv7.UUID) {
	if position(next) != position(prev)+1 || !wellFormed(next) {
		t.Helper()
		t.Fatalf("id %d = %v after %v: want the next counter value, version 7, variant 10", i, next, prev)
	}
	if uuidv7.Compare(prev, next) >= 0 {
		t.Helper()
		t.Fatalf("id %d = %v is not greater than %v", i, next, prev)
	}
}

// TestNewPastCounterOverflow makes more than 2^16 ids in one clock
// millisecond: none repeats, each follows the last, and the timestamp moves on
// by exactly one millisecond when the counter would overflow, also when the
// clock has stepped back.
func TestNewPastCounterOverflow(t *testing.T) {
	for _, tc := range []struct {
		name     string
		stepBack int64 // the clock after the first id
	}{
		{name: "fixed clock", stepBack: t0},
		{name: "clock steps back an hour", stepBack: t0 - 3_600_000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := &fakeClock{ms: t0}
			g := uuidv7.NewGenerator(uuidv7.WithClock(clock.now))
			first := g.New()
			if first.UnixMilli() != t0 || !first.IsV7() {
				t.Fatalf("first id %v: millisecond %d, version %d, want %d and a v7", first, first.UnixMilli(), first.Version(), t0)
			}
			if first.Counter() >= 1<<15 {
				t.Fatalf("first id %v: counter %#x, want a random start below 2^15", first, first.Counter())
			}
			clock.set(tc.stepBack)

			// The ids left in millisecond t0, then three milliseconds' worth more.
			n := 1<<16 - int(first.Counter()) + 3<<16
			prev := first
			for i := 1; i < n; i++ {
				id := g.New()
				mustFollow(t, i, prev, id)
				prev = id
			}
			if prev.UnixMilli() != t0+3 || prev.Counter() != 0xffff {
				t.Fatalf("id %d = %v: millisecond %d counter %#x, want %d and 0xffff", n-1, prev, prev.UnixMilli(), prev.Counter(), t0+3)
			}
		})
	}
}

// TestNewFollowsClock checks how the timestamp tracks the clock: a new
// millisecond restarts the counter at random below 2^15, a clock that steps
// back holds the timestamp and counts on.
func TestNewFollowsClock(t *testing.T) {
	clock := &fakeClock{ms: t0}
	g := uuidv7.NewGenerator(uuidv7.WithClock(clock.now))
	prev := g.New()
	for i, step := range []struct {
		clock  int64
		wantMS int64
		follow bool // the next counter value; else a new random start
	}{
		{clock: t0, wantMS: t0, follow: true},
		{clock: t0 + 1, wantMS: t0 + 1},
		{clock: t0 + 1, wantMS: t0 + 1, follow: true},
		{clock: t0 - 5, wantMS: t0 + 1, follow: true}, // steps back: hold
		{clock: t0 + 1, wantMS: t0 + 1, follow: true},
		{clock: t0 + 60_000, wantMS: t0 + 60_000}, // jumps ahead: follow
		{clock: -10, wantMS: t0 + 60_000, follow: true},
	} {
		clock.set(step.clock)
		id := g.New()
		if id.UnixMilli() != step.wantMS || uuidv7.Compare(prev, id) >= 0 || !id.IsV7() {
			t.Fatalf("step %d, clock %d: got %v (millisecond %d), want millisecond %d, above %v, v7", i, step.clock, id, id.UnixMilli(), step.wantMS, prev)
		}
		if step.follow && id.Counter() != prev.Counter()+1 {
			t.Errorf("step %d: counter %#x after %#x, want the next", i, id.Counter(), prev.Counter())
		}
		if !step.follow && id.Counter() >= 1<<15 {
			t.Errorf("step %d: a new millisecond's counter %#x, want a random start below 2^15", i, id.Counter())
		}
		prev = id
	}
}

// TestNewMillisecondStartsAtRandom checks a new millisecond's counter is drawn
// afresh: over 200 milliseconds, the starts are below 2^15 and spread.
func TestNewMillisecondStartsAtRandom(t *testing.T) {
	clock := &fakeClock{ms: t0}
	g := uuidv7.NewGenerator(uuidv7.WithClock(clock.now))
	starts := map[uint16]bool{}
	for ms := int64(t0); ms < t0+200; ms++ {
		clock.set(ms)
		c := g.New().Counter()
		if c >= 1<<15 {
			t.Fatalf("millisecond %d starts at %#x, want below 2^15", ms, c)
		}
		starts[c] = true
	}
	// 200 draws from 2^15 values: all distinct with probability 0.54, fewer than
	// 190 distinct with a probability far below 10^-12.
	if len(starts) < 190 {
		t.Errorf("200 milliseconds started at %d distinct counters, want nearly 200", len(starts))
	}
}

func TestNewBeforeEpoch(t *testing.T) {
	g := uuidv7.NewGenerator(uuidv7.WithClock(func() time.Time { return time.UnixMilli(-86_400_000) }))
	if id := g.New(); id.UnixMilli() != 0 || !id.IsV7() {
		t.Errorf("clock before 1970: got %v, millisecond %d, want 0", id, id.UnixMilli())
	}
}

// last is the last millisecond a Generator stamps, 9999-12-31T23:59:59.999Z.
const last = 253402300799999

// TestNewPanicsPastYear9999 checks that the timestamp stops where RFC 3339
// does: the last millisecond works, the one after panics.
func TestNewPanicsPastYear9999(t *testing.T) {
	clock := &fakeClock{ms: last}
	g := uuidv7.NewGenerator(uuidv7.WithClock(clock.now))
	if id := g.New(); id.UnixMilli() != last || id.Time().Format(time.RFC3339Nano) != "9999-12-31T23:59:59.999Z" {
		t.Fatalf("last millisecond: got %v at %v", id, id.Time())
	}
	clock.set(last + 1)
	for _, tc := range []struct {
		name string
		call func()
	}{
		{"New", func() { g.New() }},
		{"Fill", func() { g.Fill(make([]uuidv7.UUID, 3)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("%s past 9999 did not panic", tc.name)
				}
			}()
			tc.call()
		})
	}

	// Borrowing past the last millisecond panics too.
	t.Run("borrowing", func(t *testing.T) {
		clock.set(last)
		defer func() {
			if recover() == nil {
				t.Error("Fill of 2^17 ids in the last millisecond did not panic")
			}
		}()
		g.Fill(make([]uuidv7.UUID, 1<<17))
	})
}

// TestBadClockReadingLeavesStateAlone reads the clock once past 9999: that call
// panics, and the Generator goes on from where it was once the clock reads
// right again.
func TestBadClockReadingLeavesStateAlone(t *testing.T) {
	for _, tc := range []struct {
		name string
		call func(g *uuidv7.Generator) uuidv7.UUID
	}{
		{"New", func(g *uuidv7.Generator) uuidv7.UUID { return g.New() }},
		{"Fill", func(g *uuidv7.Generator) uuidv7.UUID {
			var ids [3]uuidv7.UUID
			g.Fill(ids[:])
			return ids[2]
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := &fakeClock{ms: t0}
			g := uuidv7.NewGenerator(uuidv7.WithClock(clock.now))
			before := g.New()

			clock.set(1 << 50)
			func() {
				defer func() {
					if recover() == nil {
						t.Errorf("%s with the clock past 9999 did not panic", tc.name)
					}
				}()
				tc.call(g)
			}()

			clock.set(t0)
			after := tc.call(g)
			if after.UnixMilli() != t0 || uuidv7.Compare(before, after) >= 0 {
				t.Errorf("%s after the clock is right again = %v, want millisecond %d and above %v", tc.name, after, t0, before)
			}
		})
	}
}

// TestFill checks a batch is a run of consecutive counter values, continuous
// with New before and after it, also across a counter overflow.
func TestFill(t *testing.T) {
	clock := &fakeClock{ms: t0}
	g := uuidv7.NewGenerator(uuidv7.WithClock(clock.now))
	prev := g.New()
	i := 0
	check := func(ids ...uuidv7.UUID) {
		t.Helper()
		for _, id := range ids {
			i++
			mustFollow(t, i, prev, id)
			prev = id
		}
	}
	g.Fill(nil) // no ids, no effect
	check(g.New())
	batch := make([]uuidv7.UUID, 1000)
	g.Fill(batch)
	check(batch...)
	check(g.New())

	// Across the overflow: this run ends past the millisecond.
	across := make([]uuidv7.UUID, 1<<16)
	g.Fill(across)
	check(across...)
	if across[0].UnixMilli() != t0 || across[len(across)-1].UnixMilli() != t0+1 {
		t.Errorf("a batch of 2^16 runs %v..%v, want from millisecond %d into %d", across[0], across[len(across)-1], t0, t0+1)
	}
	check(g.New())
}

// TestFillRandomBits checks that every id of a batch has random bits of its
// own: 10,000 ids, 58 random bits each, agree in their last 8 bytes' random
// part with probability about 10^8/2^59, far below 10^-9.
func TestFillRandomBits(t *testing.T) {
	ids := make([]uuidv7.UUID, 10000)
	uuidv7.Fill(ids)
	seen := map[uint64]bool{}
	for _, id := range ids {
		r := uint64(id[8]&0x03)<<56 | uint64(id[9])<<48 | uint64(id[10])<<40 | uint64(id[11])<<32 |
			uint64(id[12])<<24 | uint64(id[13])<<16 | uint64(id[14])<<8 | uint64(id[15])
		if seen[r] {
			t.Fatalf("two ids of one batch share their random bits %#x", r)
		}
		seen[r] = true
	}
}

// TestConcurrent draws from the process's Generator with New and Fill, and from
// one whose clock stands still and so borrows, from many goroutines: no id
// repeats, each goroutine sees its ids strictly increase.
func TestConcurrent(t *testing.T) {
	const goroutines, perGoroutine = 8, 10000
	standing := uuidv7.NewGenerator(uuidv7.WithClock((&fakeClock{ms: t0}).now))
	for name, source := range map[string]func(dst []uuidv7.UUID) int{
		"New":      func(dst []uuidv7.UUID) int { dst[0] = uuidv7.New(); return 1 },
		"Fill":     func(dst []uuidv7.UUID) int { uuidv7.Fill(dst); return len(dst) },
		"standing": func(dst []uuidv7.UUID) int { dst[0] = standing.New(); return 1 },
	} {
		t.Run(name, func(t *testing.T) {
			results := make([][]uuidv7.UUID, goroutines)
			var wg sync.WaitGroup
			for gr := range results {
				wg.Go(func() {
					ids := make([]uuidv7.UUID, perGoroutine)
					for i := 0; i < len(ids); {
						i += source(ids[i:min(i+1+i%7, len(ids))]) // batches of 1 to 7 for Fill
					}
					results[gr] = ids
				})
			}
			wg.Wait()

			seen := make(map[uuidv7.UUID]bool, goroutines*perGoroutine)
			millis := map[int64]bool{}
			for gr, ids := range results {
				for i, id := range ids {
					if seen[id] {
						t.Fatalf("goroutine %d id %d: %v repeats", gr, i, id)
					}
					seen[id] = true
					millis[id.UnixMilli()] = true
					if !id.IsV7() {
						t.Fatalf("goroutine %d id %d: %v is not a version 7 UUID", gr, i, id)
					}
					if i > 0 && uuidv7.Compare(ids[i-1], id) >= 0 {
						t.Fatalf("goroutine %d id %d: %v is not greater than %v", gr, i, id, ids[i-1])
					}
				}
			}
			if name == "standing" && len(millis) < 2 {
				t.Errorf("a standing clock's %d ids span %d milliseconds, want the counter to borrow", len(seen), len(millis))
			}
		})
	}
}

// TestSixtyMillionFromTwoGoroutines makes 60 million ids from two goroutines
// on one Generator whose clock stands still, so that the counter borrows from
// the next millisecond every 2^16 ids (915 times) under contention, and checks
// that no id repeats and that each goroutine's ids increase.
//
// It keeps no ids. The ids are distinct if their positions (unix_ts_ms<<16 |
// counter) are, and with the clock standing those are the 60 million after the
// first id's: each goroutine sets one bit per id in a bitmap of its own
// (7.5 MB), and no bit may be set in both. It takes about 2 s; under the race
// detector, where New's contended atomic add alone costs about 1.5 µs, it makes
// 6 million (make test runs it both ways).
func TestSixtyMillionFromTwoGoroutines(t *testing.T) {
	total := uint64(60_000_000)
	if uuidv7.RaceEnabled {
		total /= 10
	}
	g := uuidv7.NewGenerator(uuidv7.WithClock((&fakeClock{ms: t0}).now))
	base := position(g.New()) + 1

	start := time.Now()
	var bitmaps [2][]uint64
	var failures [2]string
	var wg sync.WaitGroup
	for gr := range 2 {
		wg.Go(func() {
			seen := make([]uint64, total/64+1)
			bitmaps[gr] = seen
			prev := uuidv7.Nil
			for range total / 2 {
				id := g.New()
				p := position(id) - base
				switch {
				case !wellFormed(id):
					failures[gr] = "id " + id.String() + " is not version 7, variant 10"
				case uuidv7.Compare(prev, id) >= 0:
					failures[gr] = "id " + id.String() + " is not greater than " + prev.String() + ", the goroutine's last"
				case p >= total:
					failures[gr] = "id " + id.String() + " is not one of the positions after the first id"
				default:
					seen[p/64] |= 1 << (p % 64)
					prev = id
					continue
				}
				return
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	for gr, f := range failures {
		if f != "" {
			t.Fatalf("goroutine %d: %s", gr, f)
		}
	}
	for i := range bitmaps[0] {
		if both := bitmaps[0][i] & bitmaps[1][i]; both != 0 {
			p := base + uint64(i)*64 + uint64(bits.TrailingZeros64(both))
			t.Fatalf("both goroutines got the id at millisecond %d, counter %#x", p>>16, p&0xffff)
		}
	}
	t.Logf("%d ids from 2 goroutines in %v (%.1fM/s), none repeated, up to millisecond t0+%d",
		total, elapsed.Round(time.Millisecond), float64(total)/elapsed.Seconds()/1e6, (base+total-1)>>16-t0)
}

func TestDefaultNewUsesWallClock(t *testing.T) {
	before := time.Now().UnixMilli()
	id := uuidv7.New()
	after := time.Now().UnixMilli()
	// The counter may borrow a millisecond or two under other tests' load.
	if ms := id.UnixMilli(); ms < before || ms > after+2 || !id.IsV7() {
		t.Errorf("id %v: millisecond %d, want between %d and %d", id, ms, before, after)
	}
}
