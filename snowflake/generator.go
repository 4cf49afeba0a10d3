package snowflake

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/seqd/seqd/internal/clockseq"
)

// Errors of New and Fill. Each says why no id was made; none means an id was
// handed out twice.
var (
	// ErrNoWorker: the Generator holds no worker id now (a leased one not
	// taken yet, lost, or past its lease). It passes when a lease is taken.
	ErrNoWorker = errors.New("snowflake: no worker id held")
	// ErrClockBehind: the ids have run further ahead of the clock than
	// MaxBorrow and the wait for the clock to catch up would pass MaxWait,
	// as after the clock steps back. It passes when the clock catches up.
	ErrClockBehind = errors.New("snowflake: clock behind the last id")
	// ErrExhausted: the clock reads past the layout's last millisecond.
	ErrExhausted = errors.New("snowflake: past the layout's last millisecond")
)

// Bounds of how far ids run ahead of the clock (see the package comment).
const (
	// MaxBorrow is how many milliseconds ahead of the clock ids may be
	// stamped before New waits for the clock.
	MaxBorrow = 4 * time.Millisecond
	// MaxWait is the longest New waits for the clock; past it New returns
	// ErrClockBehind.
	MaxWait = 50 * time.Millisecond
)

// grant is a worker id and what it allows: ids of milliseconds up to lastMs,
// while the monotonic clock is below until (nanoseconds since leaseEpoch; 0
// for a fixed worker id, which never ends), and until it is revoked. Renewals
// raise lastMs and until in place; a worker id lost or given back is revoked
// and never used again by this grant.
type grant struct {
	worker  uint64
	lastMs  atomic.Uint64 // Unix milliseconds
	until   atomic.Int64
	revoked atomic.Bool
}

// leaseEpoch is where lease ends are counted from, on the monotonic clock.
var leaseEpoch = time.Now()

// Generator makes ids that never repeat and strictly increase (see the package
// comment). It is safe for concurrent use. Create one with NewGenerator, or
// with a Lessor for a leased worker id.
type Generator struct {
	seq    clockseq.Seq // first: its state word on a cache line of its own
	grant  atomic.Pointer[grant]
	layout *Layout
	_      [8]byte // to 128 bytes, a size class the allocator aligns to 128
}

// A compile-time check that a Generator is 128 bytes.
var _ [0]struct{} = [unsafe.Sizeof(Generator{}) - 128]struct{}{}

// Option configures a Generator.
type Option func(*clockseq.Config)

// WithClock makes the Generator read the time from now instead of the wall
// clock. It is the seam for tests; now must be safe for concurrent use if the
// Generator is.
func WithClock(now func() time.Time) Option {
	return func(c *clockseq.Config) { c.Now = now }
}

// NewGenerator returns a Generator of ids in layout under a worker id its
// caller assigns, which no other live Generator of the same ids may use. It
// fails if worker is not below layout.Workers().
func NewGenerator(layout Layout, worker int, opts ...Option) (*Generator, error) {
	if worker < 0 || worker >= layout.Workers() {
		return nil, fmt.Errorf("snowflake: worker id %d: the %s layout has worker ids 0 to %d", worker, layout, layout.Workers()-1)
	}
	g := newGenerator(layout, opts...)
	gr := &grant{worker: uint64(worker)}
	gr.lastMs.Store(layout.lastUnixMs)
	g.grant.Store(gr)
	return g, nil
}

// newGenerator returns a Generator that holds no worker id yet.
func newGenerator(layout Layout, opts ...Option) *Generator {
	c := clockseq.Config{Unit: clockseq.Millisecond, CounterBits: layout.seqBits, Last: layout.lastUnixMs}
	for _, opt := range opts {
		opt(&c)
	}
	// The state starts at the epoch: the first id moves to the clock's
	// millisecond, sequence 0.
	c.Start = epochMs << layout.seqBits
	g := &Generator{layout: &layout}
	g.seq.Init(c)
	return g
}

// Layout returns the Generator's layout.
func (g *Generator) Layout() Layout { return *g.layout }

// Worker returns the worker id the Generator holds, and false if it holds none.
func (g *Generator) Worker() (int, bool) {
	if gr := g.grant.Load(); gr != nil {
		return int(gr.worker), true
	}
	return 0, false
}

// New returns the next id. It fails, handing out nothing, when the Generator
// holds no worker id, when the clock has stepped back further than MaxWait, or
// past the layout's end.
func (g *Generator) New() (ID, error) {
	var id [1]ID
	if err := g.Fill(id[:]); err != nil {
		return 0, err
	}
	return id[0], nil
}

// Fill fills dst with len(dst) new ids, strictly increasing, all greater than
// any id g made before the call and less than any it makes after. It fails as
// New does, and then dst holds nothing of use.
func (g *Generator) Fill(dst []ID) error {
	if len(dst) == 0 {
		return nil
	}
	gr := g.grant.Load()
	if gr == nil {
		return ErrNoWorker
	}
	bits := g.layout.seqBits
	// Refuse before the state moves when the clock is far behind it, lest
	// refused calls carry it further ahead. The state is read before the
	// clock, so that a caller held up between the two reads can only
	// underestimate how far ahead the state is.
	state := g.seq.Load()
	now := g.seq.Now()
	if now > g.layout.lastUnixMs {
		return ErrExhausted
	}
	if ahead := int64(state>>bits) - int64(now); ahead > (MaxBorrow + MaxWait).Milliseconds() {
		return fmt.Errorf("%w by %d ms", ErrClockBehind, ahead)
	}
	n := uint64(len(dst))
	v, ok := g.seq.Next(n)
	if !ok {
		return ErrExhausted
	}
	lastMs := (v + n - 1) >> bits
	if err := g.waitForClock(lastMs, now); err != nil {
		return err
	}
	// The grant is checked after the state moved: a grant revoked before
	// this check was revoked after the values were reserved, so they are
	// below the state the revoker recorded (see Lessor).
	if ceiling := gr.lastMs.Load(); lastMs > ceiling {
		return fmt.Errorf("%w: worker id %d is granted milliseconds up to %d, until its lease is renewed", ErrNoWorker, gr.worker, ceiling)
	}
	if until := gr.until.Load(); until != 0 && int64(time.Since(leaseEpoch)) >= until {
		return fmt.Errorf("%w: the lease on worker id %d has run out", ErrNoWorker, gr.worker)
	}
	if gr.revoked.Load() {
		return fmt.Errorf("%w: worker id %d was given up", ErrNoWorker, gr.worker)
	}
	for i := range dst {
		s := v + uint64(i)
		dst[i] = g.layout.compose(s>>bits, gr.worker, s&(1<<bits-1))
	}
	return nil
}

// waitForClock waits, if ms is more than MaxBorrow ahead of the clock's now,
// until it is not: so that ids run ahead of the clock by a bounded amount.
func (g *Generator) waitForClock(ms, now uint64) error {
	borrow := uint64(MaxBorrow.Milliseconds())
	if ms <= now+borrow {
		return nil
	}
	// now was read before the state moved: read it again before waiting.
	deadline := time.Now().Add(MaxWait)
	for now = g.seq.Now(); ms > now+borrow; now = g.seq.Now() {
		wait := time.Duration(ms-now-borrow) * time.Millisecond
		if time.Until(deadline) < wait {
			return fmt.Errorf("%w by %d ms", ErrClockBehind, ms-now)
		}
		time.Sleep(wait)
	}
	return nil
}
