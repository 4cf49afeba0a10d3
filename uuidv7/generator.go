package uuidv7

import (
	"encoding/binary"
	"math/rand/v2"
	"sync/atomic"
	"time"
)

// The state of a Generator is unix_ts_ms<<counterBits | counter of the last id
// it handed out. Adding 1 moves to the next counter value, and past 0xffff
// carries into the next millisecond, so the state alone guarantees order.
const (
	counterBits = 16
	// seedBits bounds where a new millisecond's counter starts: below 2^15,
	// which leaves at least 2^15 ids for the millisecond.
	seedBits = 15
	// stateLimit is the first state past lastMillis.
	stateLimit = (lastMillis + 1) << counterBits
)

// Generator makes ids that never repeat and strictly increase (see the package
// comment). It is safe for concurrent use. Create one with NewGenerator; the
// zero Generator is not usable.
type Generator struct {
	state atomic.Uint64    // unix_ts_ms<<16 | counter of the last id handed out
	now   func() time.Time // nil: the wall clock, read by wallMillis
}

// Option configures a Generator.
type Option func(*Generator)

// WithClock makes the Generator read the time from now instead of the wall
// clock. It is the seam for tests; now must be safe for concurrent use if the
// Generator is.
func WithClock(now func() time.Time) Option {
	return func(g *Generator) { g.now = now }
}

// NewGenerator returns a Generator. Its state starts at millisecond 0, so the
// first id moves to the clock's millisecond and a random counter.
func NewGenerator(opts ...Option) *Generator {
	g := &Generator{}
	for _, opt := range opts {
		opt(g)
	}
	return g
}

// generator is behind New and Fill: one per process.
var generator = NewGenerator()

// New returns a new id from the process's Generator.
func New() UUID { return generator.New() }

// Fill fills dst with consecutive new ids from the process's Generator. See
// Generator.Fill.
func Fill(dst []UUID) { generator.Fill(dst) }

// New returns the next id: one clock read, one atomic add (and once a
// millisecond a compare-and-swap), and a random number. It panics if the
// timestamp would pass 9999-12-31T23:59:59.999Z.
func (g *Generator) New() UUID {
	now := g.millis()
	if now > lastMillis {
		panicExhausted() // before the state moves, so a bad reading does no harm
	}
	v := g.state.Add(1)
	if v>>counterBits < now {
		v = g.catchUp(now, 1)
	}
	if v >= stateLimit {
		panicExhausted()
	}
	return build(v, rand.Uint64())
}

// Fill fills dst with len(dst) new ids whose counters are consecutive, all
// greater than any id g made before the call and less than any it makes after.
// It reads the clock once and reserves the whole run with one atomic add; a run
// that overflows the counter borrows from the next millisecond like New. It
// panics if the timestamp would pass 9999-12-31T23:59:59.999Z.
func (g *Generator) Fill(dst []UUID) {
	if len(dst) == 0 {
		return
	}
	n := uint64(len(dst))
	now := g.millis()
	if now > lastMillis {
		panicExhausted()
	}
	last := g.state.Add(n)
	if (last-n+1)>>counterBits < now {
		last = g.catchUp(now, n)
	}
	if last >= stateLimit {
		panicExhausted()
	}
	v := last - n + 1
	for i := range dst {
		dst[i] = build(v+uint64(i), rand.Uint64())
	}
}

// catchUp is the slow path, taken when the state lags the clock's millisecond
// (once a millisecond, or when the clock first reads): it claims n values
// starting at the clock's millisecond and a random counter below 2^15, and
// returns the last. Values that New or Fill added to the stale state are
// skipped; ids need not be dense.
func (g *Generator) catchUp(now, n uint64) uint64 {
	for {
		cur := g.state.Load()
		if cur>>counterBits >= now {
			// Another caller caught up first: an add is now enough.
			return g.state.Add(n)
		}
		first := now<<counterBits | rand.Uint64N(1<<seedBits)
		if last := first + n - 1; g.state.CompareAndSwap(cur, last) {
			return last
		}
	}
}

// build lays out the state v (unix_ts_ms<<16 | counter) and 58 of the random
// bits r as a version 7 UUID of variant 10.
func build(v, r uint64) UUID {
	counter := v & (1<<counterBits - 1)
	hi := v&^(1<<counterBits-1) | 0x7000 | counter>>4
	lo := 0b10<<62 | (counter&0xf)<<58 | r>>6
	var u UUID
	binary.BigEndian.PutUint64(u[0:8], hi)
	binary.BigEndian.PutUint64(u[8:16], lo)
	return u
}

// millis reads the clock as Unix milliseconds, clamped to 0 below and to
// lastMillis+1 above, where New and Fill panic rather than go on. They panic
// before they touch the state: one wrong reading must not leave the state past
// the limit, where every later call would panic.
func (g *Generator) millis() uint64 {
	var ms int64
	if g.now == nil {
		ms = wallMillis()
	} else {
		ms = g.now().UnixMilli()
	}
	return uint64(min(max(ms, 0), lastMillis+1))
}

func panicExhausted() {
	panic("uuidv7: timestamp would pass 9999-12-31T23:59:59.999Z, the last time RFC 3339 can write")
}
