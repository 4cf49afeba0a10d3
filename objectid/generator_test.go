package objectid_test

import (
	"crypto/md5"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/seqd/seqd/objectid"
)

// t0 is an arbitrary fixed second for the injected clocks.
const t0 = 1_700_000_000

// fakeClock is a clock the test sets by hand. Set it only while no other
// goroutine reads it: a plain field keeps the race detector's cost off loops
// of 2^24 ids.
type fakeClock struct{ sec int64 }

func newFakeClock(sec int64) *fakeClock { return &fakeClock{sec: sec} }

func (c *fakeClock) now() time.Time { return time.Unix(c.sec, 0) }
func (c *fakeClock) set(sec int64)  { c.sec = sec }

// position returns an id's place in the sequence a generator walks:
// timestamp<<24 | counter.
func position(id objectid.ID) uint64 { return uint64(id.Timestamp())<<24 | uint64(id.Counter()) }

// follows reports whether next is exactly the id after prev: the same process
// part, and the next counter value, carrying into the next second after
// 0xffffff. It is cheap, for loops over 2^24 ids; mustFollow explains.
func follows(prev, next objectid.ID) bool {
	return position(next) == position(prev)+1 && next.Process() == prev.Process()
}

func mustFollow(t *testing.T, i int, prev, next objectid.ID) {
	if !follows(prev, next) {
		t.Helper()
		t.Fatalf("id %d = %v after %v: want the next counter value, same process part", i, next, prev)
	}
	if objectid.Compare(prev, next) >= 0 {
		t.Helper()
		t.Fatalf("id %d = %v is not greater than %v", i, next, prev)
	}
}

// skipToOverflow fills ids from g until the next id is left ids short of its
// second's counter overflow, and returns the last id it made.
func skipToOverflow(g *objectid.Generator, left int) objectid.ID {
	buf := make([]objectid.ID, 1<<16)
	last := g.New()
	for n := int(1<<24-1-last.Counter()) - left; n > 0; n -= len(buf) {
		dst := buf[:min(len(buf), n)]
		g.Fill(dst)
		last = dst[len(dst)-1]
	}
	return last
}

// TestNewPastCounterOverflow makes more than 2^24 ids in one clock second:
// none repeats, each follows the last, and the timestamp moves on by exactly
// one second when the counter would overflow.
func TestNewPastCounterOverflow(t *testing.T) {
	for _, tc := range []struct {
		name string
		// stepBack is the clock's second after the first id; t0 for none.
		stepBack int64
	}{
		{name: "fixed clock", stepBack: t0},
		{name: "clock steps back", stepBack: t0 - 3600},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clock := newFakeClock(t0)
			g := objectid.NewGenerator(objectid.Spec, objectid.WithClock(clock.now))
			first := g.New()
			if first.Timestamp() != t0 {
				t.Fatalf("first id %v: timestamp %d, want %d", first, first.Timestamp(), t0)
			}
			if first.Counter() >= 1<<23 {
				t.Fatalf("first id %v: counter %#x, want a random start below 2^23", first, first.Counter())
			}
			clock.set(tc.stepBack)

			// The ids left in second t0, then 1000 more.
			n := int(1<<24-first.Counter()) + 1000
			prev := first
			for i := 1; i < n; i++ {
				id := g.New()
				mustFollow(t, i, prev, id)
				prev = id
			}
			if prev.Timestamp() != t0+1 || prev.Counter() != 999 {
				t.Fatalf("id %d = %v: timestamp %d counter %d, want %d and 999", n-1, prev, prev.Timestamp(), prev.Counter(), t0+1)
			}
		})
	}
}

// TestNewFollowsClock checks how the timestamp tracks the clock: a new second
// restarts the counter at 0 (Spec; Legacy's restarts at random, see
// TestLegacyTwinsDoNotCollideInStep), and a clock that steps back holds the
// timestamp.
func TestNewFollowsClock(t *testing.T) {
	clock := newFakeClock(t0)
	g := objectid.NewGenerator(objectid.Spec, objectid.WithClock(clock.now))
	g.New()
	for _, step := range []struct {
		clock   int64
		wantTS  uint32
		wantCtr uint32
	}{
		{clock: t0 + 1, wantTS: t0 + 1, wantCtr: 0},
		{clock: t0 + 1, wantTS: t0 + 1, wantCtr: 1},
		{clock: t0 - 5, wantTS: t0 + 1, wantCtr: 2}, // steps back: hold
		{clock: t0 + 1, wantTS: t0 + 1, wantCtr: 3},
		{clock: t0 + 60, wantTS: t0 + 60, wantCtr: 0}, // jumps ahead: follow
		{clock: -10, wantTS: t0 + 60, wantCtr: 1},
	} {
		clock.set(step.clock)
		id := g.New()
		if id.Timestamp() != step.wantTS || id.Counter() != step.wantCtr {
			t.Errorf("clock %d: got %v (timestamp %d, counter %d), want timestamp %d, counter %d",
				step.clock, id, id.Timestamp(), id.Counter(), step.wantTS, step.wantCtr)
		}
	}
}

func TestNewBeforeEpoch(t *testing.T) {
	g := objectid.NewGenerator(objectid.Spec, objectid.WithClock(func() time.Time { return time.Unix(-86400, 0) }))
	if id := g.New(); id.Timestamp() != 0 {
		t.Errorf("clock before 1970: got timestamp %d, want 0", id.Timestamp())
	}
}

// TestNewPanicsPast2106 checks that the timestamp never wraps: the last second
// works, the one after panics.
func TestNewPanicsPast2106(t *testing.T) {
	clock := newFakeClock(1<<32 - 1)
	g := objectid.NewGenerator(objectid.Spec, objectid.WithClock(clock.now))
	if id := g.New(); id.Timestamp() != 1<<32-1 {
		t.Fatalf("last second: got timestamp %#x, want 0xffffffff", id.Timestamp())
	}
	clock.set(1 << 32)
	for _, tc := range []struct {
		name string
		call func()
	}{
		{"New", func() { g.New() }},
		{"Fill", func() { g.Fill(make([]objectid.ID, 3)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("%s past 2106 did not panic", tc.name)
				}
			}()
			tc.call()
		})
	}
}

// TestFill checks a batch is a run of consecutive ids, continuous with New
// before and after it, including a batch that crosses a counter overflow.
func TestFill(t *testing.T) {
	clock := newFakeClock(t0)
	g := objectid.NewGenerator(objectid.Spec, objectid.WithClock(clock.now))
	prev := g.New()
	i := 0
	check := func(ids ...objectid.ID) {
		t.Helper()
		for _, id := range ids {
			i++
			mustFollow(t, i, prev, id)
			prev = id
		}
	}

	g.Fill(nil) // no ids, no effect
	check(g.New())
	batch := make([]objectid.ID, 1000)
	g.Fill(batch)
	check(batch...)
	check(g.New())

	// Fill across the counter overflow.
	prev = skipToOverflow(g, 10)
	i = 0
	across := make([]objectid.ID, 20)
	g.Fill(across)
	check(across...)
	if across[0].Timestamp() != t0 || across[19].Timestamp() != t0+1 || across[19].Counter() != 9 {
		t.Errorf("batch across the overflow runs %v..%v, want second %d to second %d counter 9", across[0], across[19], t0, t0+1)
	}
	check(g.New())
}

// TestConcurrent draws from the default generators, and one with a fixed
// clock that overflows its second, from many goroutines: no id repeats, and
// each goroutine sees its ids strictly increase.
func TestConcurrent(t *testing.T) {
	const goroutines, perGoroutine = 8, 5000
	// Overflows its second half way through.
	overflowing := objectid.NewGenerator(objectid.Spec, objectid.WithClock(newFakeClock(t0).now))
	skipToOverflow(overflowing, goroutines*perGoroutine/2)
	sources := map[string]func(dst []objectid.ID){
		"New":        func(dst []objectid.ID) { dst[0] = objectid.New() },
		"Fill":       objectid.Fill,
		"NewLegacy":  func(dst []objectid.ID) { dst[0] = objectid.NewLegacy() },
		"FillLegacy": objectid.FillLegacy,
		"overflow":   func(dst []objectid.ID) { dst[0] = overflowing.New() },
	}
	for name, source := range sources {
		t.Run(name, func(t *testing.T) {
			results := make([][]objectid.ID, goroutines)
			var wg sync.WaitGroup
			for gr := range results {
				wg.Go(func() {
					ids := make([]objectid.ID, perGoroutine)
					for i := 0; i < len(ids); {
						n := min(1+i%7, len(ids)-i) // batches of 1 to 7 for Fill
						source(ids[i : i+n])
						if name == "New" || name == "NewLegacy" || name == "overflow" {
							n = 1
						}
						i += n
					}
					results[gr] = ids
				})
			}
			wg.Wait()

			seen := make(map[objectid.ID]bool, goroutines*perGoroutine)
			seconds := make(map[uint32]bool)
			for gr, ids := range results {
				for i, id := range ids {
					if seen[id] {
						t.Fatalf("goroutine %d id %d: %v repeats", gr, i, id)
					}
					seen[id] = true
					seconds[id.Timestamp()] = true
					if i > 0 && objectid.Compare(ids[i-1], id) >= 0 {
						t.Fatalf("goroutine %d id %d: %v is not greater than %v", gr, i, id, ids[i-1])
					}
				}
			}
			if name == "overflow" && len(seconds) != 2 {
				t.Errorf("ids span %d seconds, want 2: the counter overflow was not crossed", len(seconds))
			}
		})
	}
}

func TestDefaultNewUsesWallClock(t *testing.T) {
	for _, gen := range []func() objectid.ID{objectid.New, objectid.NewLegacy} {
		before := time.Now().Unix()
		id := gen()
		after := time.Now().Unix()
		if ts := int64(id.Timestamp()); ts < before || ts > after {
			t.Errorf("id %v: timestamp %d, want between %d and %d", id, ts, before, after)
		}
	}
}

func TestSpecProcess(t *testing.T) {
	g := objectid.NewGenerator(objectid.Spec)
	a, b := g.New(), g.New()
	if a.Process() != b.Process() {
		t.Errorf("one generator, two process parts: %x and %x", a.Process(), b.Process())
	}
	// 40 random bits: two generators agree with probability 2^-40.
	if other := objectid.NewGenerator(objectid.Spec).New(); other.Process() == a.Process() {
		t.Errorf("two generators, same random process part %x", a.Process())
	}
}

func TestLegacyLayout(t *testing.T) {
	host, err := os.Hostname()
	if err != nil || host == "" {
		t.Skipf("no hostname (%v): the machine part is random", err)
	}
	sum := md5.Sum([]byte(host))
	wantMachine := [3]byte(sum[:3])
	wantPid := uint16(os.Getpid())

	var batch [2]objectid.ID
	objectid.FillLegacy(batch[:])
	for _, id := range []objectid.ID{objectid.NewLegacy(), objectid.NewGenerator(objectid.Legacy).New(), batch[0], batch[1]} {
		if id.Machine() != wantMachine {
			t.Errorf("id %v: machine %x, want md5(%q)[:3] = %x", id, id.Machine(), host, wantMachine)
		}
		if id.Pid() != wantPid {
			t.Errorf("id %v: pid %d, want %d", id, id.Pid(), wantPid)
		}
		p := id.Process()
		if [3]byte(p[:3]) != wantMachine || uint16(p[3])<<8|uint16(p[4]) != wantPid {
			t.Errorf("id %v: process part %x, want machine %x then pid %04x", id, p, wantMachine, wantPid)
		}
	}
}

func TestNewGeneratorUnknownLayout(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("NewGenerator(Layout(7)) did not panic")
		}
	}()
	objectid.NewGenerator(objectid.Layout(7))
}

func TestLayoutString(t *testing.T) {
	for layout, want := range map[objectid.Layout]string{objectid.Spec: "spec", objectid.Legacy: "legacy", 7: "Layout(7)"} {
		if got := layout.String(); got != want {
			t.Errorf("Layout(%d).String() = %q, want %q", int(layout), got, want)
		}
	}
}

// TestBadClockReadingLeavesStateAlone reads the clock once past 2106: that call
// panics, and the generator then goes on from where it was once the clock reads
// right again.
func TestBadClockReadingLeavesStateAlone(t *testing.T) {
	for _, tc := range []struct {
		name string
		call func(g *objectid.Generator) objectid.ID
	}{
		{"New", func(g *objectid.Generator) objectid.ID { return g.New() }},
		{"Fill", func(g *objectid.Generator) objectid.ID {
			var ids [3]objectid.ID
			g.Fill(ids[:])
			return ids[2]
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newFakeClock(t0)
			g := objectid.NewGenerator(objectid.Spec, objectid.WithClock(clock.now))
			before := g.New()

			clock.set(1 << 40)
			func() {
				defer func() {
					if recover() == nil {
						t.Errorf("%s with the clock past 2106 did not panic", tc.name)
					}
				}()
				tc.call(g)
			}()

			clock.set(t0)
			var after objectid.ID
			func() {
				defer func() {
					if p := recover(); p != nil {
						t.Fatalf("%s after the clock is right again: panic %v", tc.name, p)
					}
				}()
				after = tc.call(g)
			}()
			if after.Timestamp() != t0 || objectid.Compare(before, after) >= 0 {
				t.Errorf("%s after the clock is right again = %v, want timestamp %d and greater than %v", tc.name, after, t0, before)
			}
		})
	}
}

// TestLegacyTwinsDoNotCollideInStep runs two Legacy generators with the same
// process part, as two processes with pid 1 on hosts of one name have, on one
// clock, each making one id a second for 100 seconds. Each second's counter starts
// at random, so the two agree in a given second with probability 2^-24: the test
// allows one agreement in 100 seconds (it fails by chance about once in 3·10^11
// runs). Counters that restart at 0 every second agree in all 100.
func TestLegacyTwinsDoNotCollideInStep(t *testing.T) {
	clock := newFakeClock(t0)
	a := objectid.NewGenerator(objectid.Legacy, objectid.WithClock(clock.now))
	b := objectid.NewGenerator(objectid.Legacy, objectid.WithClock(clock.now))
	if a.New().Process() != b.New().Process() {
		t.Fatal("two Legacy generators in one process have different process parts")
	}
	same := 0
	for sec := int64(t0 + 1); sec <= t0+100; sec++ {
		clock.set(sec)
		x, y := a.New(), b.New()
		if x.Timestamp() != uint32(sec) || y.Timestamp() != uint32(sec) {
			t.Fatalf("second %d: ids %v and %v, want that timestamp", sec, x, y)
		}
		if x == y {
			same++
		}
		// Within the second, the counter counts on by one.
		if next := a.New(); !follows(x, next) {
			t.Fatalf("second %d: %v after %v, want the next counter value", sec, next, x)
		}
	}
	if same > 1 {
		t.Errorf("the twins made the same id in %d of 100 seconds", same)
	}
}
