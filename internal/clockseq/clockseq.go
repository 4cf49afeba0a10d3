// Package clockseq is the time-and-counter core of seqd's id generators:
// objectid (seconds and a 24-bit counter), uuidv7 (milliseconds and a 16-bit
// counter) and snowflake (milliseconds and a 12- or 8-bit sequence). Each
// package keeps only its layout and encoding; what makes their ids never
// repeat is written here once.
//
// # The state word
//
// A Seq keeps the time and counter of the last value it handed out in one
// 64-bit word, time<<bits | counter. Adding 1 moves to the next counter
// value, and past the counter's last value carries into the next time unit,
// whether or not the clock has got there (borrowing): so the word alone
// guarantees that values never repeat and strictly increase, at any rate and
// from any number of goroutines, in the order their atomic operations take
// effect. Values need not be dense: when the clock has moved past the word's
// time, the first caller to see it moves the word to the clock's time with a
// compare-and-swap (catch-up), and what other callers added to the stale word
// meanwhile is skipped. The word never goes back, so neither do values when
// the wall clock steps back: they keep the last time and count on, borrowing,
// until the clock passes it again.
//
// # Clock
//
// A Seq stamps values with the wall clock's time for little more than half
// what time.Now costs: time.Now reads two clocks, wall and monotonic, while a
// Seq reads the wall clock once a second and, in between, adds the monotonic
// clock's progress since (WallNanos does the same for other callers). The
// two clocks tick at the same rate (NTP slews both), so units change when the
// wall clock's do; a step of the wall clock, which the monotonic clock does not
// follow, shows within a second.
package clockseq

import (
	"math"
	"sync/atomic"
	"time"
)

// Unit is the time unit of a Seq's time field.
type Unit int8

const (
	Second Unit = iota
	Millisecond
)

// perSecond is how many units make a second.
func (u Unit) perSecond() int64 {
	if u == Second {
		return 1
	}
	return 1000
}

// Config names every choice of a Seq.
type Config struct {
	Unit Unit
	// CounterBits is the width of the counter, the low bits of the state.
	CounterBits uint
	// Last is the last time, in units since the Unix epoch, a value may
	// carry; Next refuses a clock reading past it, or borrowing past it.
	Last uint64
	// Start is the state before the first value: 0, or time 0 and a counter
	// the first catch-up may keep (see Seed).
	Start uint64
	// Seed returns the counter at which a new time unit starts, given the
	// state it replaces; nil starts every unit at 0.
	Seed func(cur uint64) uint64
	// Now replaces the wall clock, for tests; nil reads WallNanos.
	Now func() time.Time
}

// Seq hands out states (time<<CounterBits | counter) that never repeat and
// strictly increase. It is safe for concurrent use; create one with New or
// Init. Seq is 104 bytes: a generator that embeds it first and pads itself
// to 128 bytes, a size class the allocator aligns to 128, gives the state
// word a cache line of its own.
type Seq struct {
	state atomic.Uint64
	// state is the one field every call writes: the pad keeps the fields
	// every call reads off its cache line.
	_ [56]byte

	now   func() time.Time
	seed  func(cur uint64) uint64
	last  uint64 // Config.Last
	limit uint64 // the first state past Last
	bits  uint8
	unit  Unit
}

// Init sets s up from c. It must be called before s is used, and only once.
func (s *Seq) Init(c Config) {
	s.now, s.seed = c.Now, c.Seed
	s.last, s.bits, s.unit = c.Last, uint8(c.CounterBits), c.Unit
	s.limit = (c.Last + 1) << c.CounterBits
	s.state.Store(c.Start)
}

// CounterBits returns Config.CounterBits.
func (s *Seq) CounterBits() uint { return uint(s.bits) }

// Load returns the state of the last value handed out.
func (s *Seq) Load() uint64 { return s.state.Load() }

// Next reserves n consecutive values, all greater than any handed out before
// and less than any handed out after, and returns the first. It reads the
// clock once and, except once per time unit, makes one atomic add. ok is
// false, and the values are not to be used, if the clock reads past Last (then
// the state is left alone, so one wrong reading does no harm) or if borrowing
// would pass it. Next(0) reserves nothing and returns true.
func (s *Seq) Next(n uint64) (first uint64, ok bool) {
	if n == 0 {
		return 0, true
	}
	now := s.Now()
	if now > s.last {
		return 0, false
	}
	last := s.state.Add(n)
	if (last-n+1)>>s.bits < now {
		last = s.catchUp(now, n)
	}
	return last - n + 1, last < s.limit
}

// catchUp is the slow path, taken when the state lags the clock's time unit:
// it claims n values starting at the clock's unit and the seeded counter, and
// returns the last.
func (s *Seq) catchUp(now, n uint64) uint64 {
	for {
		cur := s.state.Load()
		if cur>>s.bits >= now {
			// Another caller caught up first: an add is now enough.
			return s.state.Add(n)
		}
		first := now << s.bits
		if s.seed != nil {
			first |= s.seed(cur)
		}
		if last := first + n - 1; s.state.CompareAndSwap(cur, last) {
			return last
		}
	}
}

// AtLeast moves the state forward to v if it is behind it, so that every
// later value is above v: for a generator that takes over from another (a
// snowflake worker id's new holder) and must start above what it handed out.
func (s *Seq) AtLeast(v uint64) {
	for {
		cur := s.state.Load()
		if cur >= v || s.state.CompareAndSwap(cur, v) {
			return
		}
	}
}

// Now reads the clock in units since the Unix epoch, clamped to 0 below and to
// Last+1 above. On the wall clock it is one monotonic clock read (see
// WallNanos), and no division for seconds.
func (s *Seq) Now() uint64 {
	var t int64
	if r := lastReading.Load(); s.now == nil && r != nil {
		if d := time.Since(r.start); d < r.left {
			if s.unit == Second {
				t = r.unix
			} else {
				t = (r.unixNano + int64(d)) / int64(time.Millisecond)
			}
			return s.clamp(t)
		}
	}
	return s.slowNow()
}

// slowNow is Now on an injected clock, or when the last wall clock reading's
// second has ended.
func (s *Seq) slowNow() uint64 {
	if s.now != nil {
		return s.clamp(units(s.now(), s.unit))
	}
	r := readWallClock()
	if s.unit == Second {
		return s.clamp(r.unix)
	}
	return s.clamp(r.unixNano / int64(time.Millisecond))
}

func (s *Seq) clamp(t int64) uint64 {
	return uint64(min(max(t, 0), int64(min(s.last+1, math.MaxInt64))))
}

// units converts tm to whole units since the Unix epoch, saturating rather
// than overflowing far from it.
func units(tm time.Time, u Unit) int64 {
	sec, per := tm.Unix(), u.perSecond()
	switch {
	case sec > math.MaxInt64/per-1:
		return math.MaxInt64
	case sec < math.MinInt64/per+1:
		return math.MinInt64
	}
	return sec*per + int64(tm.Nanosecond())/(int64(time.Second)/per)
}
