package uuidv7

import (
	"encoding/binary"
	"math/rand/v2"
	"time"
	"unsafe"

	"github.com/seqd/seqd/internal/clockseq"
)

// A Generator's state (see internal/clockseq) is unix_ts_ms<<16 | counter of
// the last id it handed out.
const (
	counterBits = 16
	// seedBits bounds where a new millisecond's counter starts: below 2^15,
	// which leaves at least 2^15 ids for the millisecond.
	seedBits = 15
)

// Generator makes ids that never repeat and strictly increase (see the package
// comment). It is safe for concurrent use. Create one with NewGenerator; the
// zero Generator is not usable.
type Generator struct {
	seq clockseq.Seq     // first, its state word on a cache line of its own
	now func() time.Time // nil: the wall clock
	_   [16]byte         // to 128 bytes, a size class the allocator aligns to 128
}

// A compile-time check that a Generator is 128 bytes.
var _ [0]struct{} = [unsafe.Sizeof(Generator{}) - 128]struct{}{}

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
	g.seq.Init(clockseq.Config{
		Unit:        clockseq.Millisecond,
		CounterBits: counterBits,
		Last:        lastMillis,
		Seed:        seed,
		Now:         g.now,
	})
	return g
}

// seed starts each new millisecond's counter at random below 2^15.
func seed(uint64) uint64 { return rand.Uint64N(1 << seedBits) }

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
	v, ok := g.seq.Next(1)
	if !ok {
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
	v, ok := g.seq.Next(uint64(len(dst)))
	if !ok {
		panicExhausted()
	}
	for i := range dst {
		dst[i] = build(v+uint64(i), rand.Uint64())
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

func panicExhausted() {
	panic("uuidv7: timestamp would pass 9999-12-31T23:59:59.999Z, the last time RFC 3339 can write")
}
