// Package blocks serves a sequence's values from blocks reserved ahead, in
// memory: seqd's cached mode, and the Go client's local cache.
//
// # Blocks
//
// An Allocator holds at most two blocks: the current one, which callers take
// values from, and the next one, fetched ahead. Once Options.Prefetch of the
// current block is used, the Allocator fetches the next in the background, on
// its own context bounded by Options.FetchTimeout, never on a caller's: a
// caller that gives up does not cancel a reservation others will need. At most
// one Fetch is in flight, and only while there is no next block, so a Fetch
// never reserves a block that would wait behind two others. Blocks are used
// strictly in the order they were fetched. A prefetch that fails is tried again
// once half of what then remained of the current block is used, and again at
// half the rest, and so on: the store is asked again before the block runs out,
// as often as the traffic on it warrants, and an idle sequence asks nothing.
//
// # Block size (Leaf's rule)
//
// The first block holds Options.MinBlock values. When a block is used up, the
// time it lasted, scaled to the current block size, is compared with
// Options.Target: shorter, and the size doubles; longer than twice Target, and
// it halves; always within MinBlock..MaxBlock. A busy sequence thus fetches
// about once per Target, and an idle one holds few values it may lose in a
// crash. Because the next block is fetched while the current one is in use, a
// new size applies from the block after next.
//
// # NextN
//
// NextN(n) takes n contiguous values from the current block when they fit.
// When they do not, the rest of the current block is skipped (counted in
// Status.Skipped, never handed out) and the values come from the next block;
// if the next block is smaller than n, it is skipped too and a block of at
// least n values is fetched, even above MaxBlock. A caller that starts a Fetch
// takes its values from the fetched block before it is current, ahead of every
// other caller, so that callers of Next cannot use up, again and again, the
// block a large NextN waits for. If a Fetch returns fewer than
// n values because the sequence ends, NextN fails with an error wrapping
// seqd.ErrExhausted and the short block stays for smaller calls.
//
// # Guarantees
//
// Provided the ranges Fetch returns are disjoint and ascending:
//   - every value is handed out at most once;
//   - values are strictly increasing in the order the answers return: an answer
//     that starts after another has returned holds larger values. Concurrent
//     calls have no order between them.
//
// A Fetch that returns a range below an earlier one (a sequence forced back)
// is served as it comes: values are then handed out again, as the sequence's
// owner asked.
//
// # Waiting
//
// A value from the current block costs a few atomic operations and no lock.
// A caller that no block can serve waits for the Fetch in flight (starting one
// if there is none) for as long as its context allows, and returns the
// context's error as soon as it ends; the Fetch goes on and its block serves
// later callers. A failed Fetch's error, as Fetch returned it, goes to every
// caller waiting for it; for Options.Cooldown afterwards, callers the blocks
// cannot serve fail at once with that same error, without calling Fetch, so a
// store that is down is not called by every waiting caller. The first caller
// after the Cooldown tries a new Fetch.
//
// # Close
//
// Close stops the Allocator: later calls return ErrClosed. It waits, until its
// context ends, for a Fetch in flight, so that a reserved block is not lost,
// and returns the values held unused (the rest of the current block, then the
// next block), which the caller may give back to the store. If Close's context
// ends first, the Fetch is cancelled and whatever it reserves is lost. The
// Allocator's goroutine, which runs one Fetch and exists only while it runs,
// ends with that Fetch.
package blocks

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seqd/seqd"
)

// Fetch reserves n contiguous values (n ≥ 1) of one sequence and returns them. It
// may return fewer than n, at least one, when fewer remain before the sequence's
// end. The Allocator calls it from its own goroutine, one call at a time, without
// holding its lock: Fetch may call Status.
type Fetch func(ctx context.Context, n int64) (seqd.Range, error)

// ErrClosed is returned by calls on an Allocator after Close.
var ErrClosed = errors.New("blocks: allocator closed")

// Options tune an Allocator. Every field may be left zero for its default.
type Options struct {
	MinBlock     int64            // smallest block fetched; default 100, or MaxBlock if that is smaller
	MaxBlock     int64            // largest block fetched (a larger NextN fetches what it needs); default 1,000,000
	Target       time.Duration    // how long a block should last at the current rate; default 1 minute
	Prefetch     float64          // fraction of the current block used when the next is fetched; default 0.1
	FetchTimeout time.Duration    // bounds one Fetch; default 10 seconds
	Cooldown     time.Duration    // after a failed Fetch, callers the blocks cannot serve fail at once for this long; default 250ms
	Now          func() time.Time // the clock, for tests; default time.Now
}

// withDefaults fills the zero (or out-of-range) fields of o.
func (o Options) withDefaults() Options {
	if o.MaxBlock <= 0 {
		o.MaxBlock = 1_000_000
	}
	if o.MinBlock <= 0 {
		// A MaxBlock set below the default bounds the first block too.
		o.MinBlock = min(100, o.MaxBlock)
	}
	o.MaxBlock = max(o.MaxBlock, o.MinBlock)
	if o.Target <= 0 {
		o.Target = time.Minute
	}
	if o.Prefetch <= 0 || math.IsNaN(o.Prefetch) {
		o.Prefetch = 0.1
	}
	o.Prefetch = min(o.Prefetch, 1)
	if o.FetchTimeout <= 0 {
		o.FetchTimeout = 10 * time.Second
	}
	if o.Cooldown <= 0 {
		o.Cooldown = 250 * time.Millisecond
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Block is the unused rest of a block: First..Last, Remaining values.
type Block struct {
	First, Last, Remaining int64
}

// Status is what an Allocator holds and has done, for status pages and metrics.
type Status struct {
	Current, Next Block   // Remaining 0: none
	CurrentSize   int64   // the current block's whole size, used and unused; 0: none
	UntilFetch    int64   // values to hand out before the next Fetch starts; 0 while one is in flight, or when the next call starts one
	BlockSize     int64   // what the next Fetch asks for
	Rate          float64 // values served a second over the last RateWindow (at least a second of it); 0 in the first second
	// RateHistory is the rate of each of the last whole RateWindows, the
	// newest last; only the last RateHistoryKnown are measured, the others
	// fall before the first call. The windows start at the first call, and
	// values served between two calls (Status, or a block becoming current)
	// count as served evenly between them.
	RateHistory      [RateHistoryLen]float64
	RateHistoryKnown int
	Fetching         bool          // a Fetch is in flight
	LastFetch        time.Duration // how long the last Fetch took
	LastFetchAt      time.Time     // when it ended; zero before the first
	LastError        string        // the last Fetch's error; empty after a success
	Fetched          int64         // values reserved by every Fetch
	Served           int64         // values handed out
	Skipped          int64         // values passed over so that a NextN got contiguous values
}

// block is one fetched range. Callers take values by raising used with a
// compare-and-swap, so that a take never goes past the end and a block can be
// retired (used set to size) while stale callers still hold a pointer to it.
type block struct {
	used       atomic.Int64
	prefetchAt atomic.Int64 // when used reaches this, the next block is fetched
	first      int64
	size       int64
	since      time.Time // when it became current; under Allocator.mu
	retired    bool      // under Allocator.mu
}

func newBlock(r seqd.Range, prefetch float64) *block {
	size := r.Count()
	at := int64(math.Ceil(prefetch * float64(size)))
	b := &block{first: r.First, size: size}
	b.prefetchAt.Store(min(max(at, 1), size))
	return b
}

// deferPrefetch moves the prefetch point to half of what remains: a Fetch
// cannot start now (one failed), so the next try waits for more values to be
// used, and still comes before the block's end.
func (b *block) deferPrefetch() {
	u := b.used.Load()
	b.prefetchAt.Store(min(u+max((b.size-u)/2, 1), b.size))
}

// take takes n values and returns the first and used before and after; ok is
// false, with nothing taken, when fewer than n remain.
func (b *block) take(n int64) (first, before, after int64, ok bool) {
	for {
		u := b.used.Load()
		if n > b.size-u {
			return 0, u, u, false
		}
		if b.used.CompareAndSwap(u, u+n) {
			return b.first + u, u, u + n, true
		}
	}
}

// needsSettle reports whether a take from before to after crossed a point
// where the Allocator has work: the prefetch point or the block's end.
func (b *block) needsSettle(before, after int64) bool {
	at := b.prefetchAt.Load()
	return after == b.size || (before < at && after >= at)
}

// rest is the block's unused values.
func (b *block) rest() Block {
	u := b.used.Load()
	if u >= b.size {
		return Block{}
	}
	return Block{First: b.first + u, Last: b.first + b.size - 1, Remaining: b.size - u}
}

// fetch is one Fetch in flight; done is closed when its result is in.
type fetch struct {
	asked int64
	done  chan struct{}
	got   int64 // values returned; set before done is closed
	err   error // set before done is closed

	// claim is how many values the caller that started the Fetch takes from its
	// block before anyone else can; 0 for a prefetch, or once the caller gave
	// up. Under Allocator.mu.
	claim   int64
	claimed bool  // the claim was taken: the caller's values start at first
	first   int64 // with claimed
}

// Allocator hands out a sequence's values from the blocks it fetches.
type Allocator struct {
	// cur is read by every call; padding keeps the lock's writes off its cache line.
	cur atomic.Pointer[block]
	_   [56]byte

	fetchFn Fetch
	opts    Options
	ctx     context.Context // the Fetches'; cancelled by Close
	cancel  context.CancelFunc

	mu       sync.Mutex
	next     *block
	inFlight *fetch
	size     int64
	closed   bool

	lastErr     error
	errUntil    time.Time // callers fail with lastErr at once until then
	lastFetch   time.Duration
	lastFetchAt time.Time
	samples     []sample // served totals, a second or more apart, the oldest at most RateWindow old but one
	history     rateHistory
	fetched     int64
	served      int64 // by retired blocks; the current one's used is added in Status
	skipped     int64
}

// New returns an Allocator that reserves blocks with fetch.
func New(fetch Fetch, opts Options) *Allocator {
	opts = opts.withDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	return &Allocator{fetchFn: fetch, opts: opts, ctx: ctx, cancel: cancel, size: opts.MinBlock}
}

// NextN returns n contiguous values, n ≥ 1.
func (a *Allocator) NextN(ctx context.Context, n int64) (seqd.Range, error) {
	if n < 1 {
		return seqd.Range{}, fmt.Errorf("blocks: next %d: %w", n, seqd.ErrInvalidCount)
	}
	if b := a.cur.Load(); b != nil {
		if first, before, after, ok := b.take(n); ok {
			if b.needsSettle(before, after) {
				a.mu.Lock()
				a.settle()
				a.mu.Unlock()
			}
			return seqd.Range{First: first, Last: first + n - 1}, nil
		}
	}
	first, err := a.slow(ctx, n)
	if err != nil {
		return seqd.Range{}, err
	}
	return seqd.Range{First: first, Last: first + n - 1}, nil
}

// Next returns the next value.
func (a *Allocator) Next(ctx context.Context) (int64, error) {
	r, err := a.NextN(ctx, 1)
	return r.Last, err
}

// slow serves n values when the current block cannot: it moves to the next
// block, or waits for a Fetch.
func (a *Allocator) slow(ctx context.Context, n int64) (int64, error) {
	a.mu.Lock()
	for {
		if a.closed {
			a.mu.Unlock()
			return 0, ErrClosed
		}
		cur := a.cur.Load()
		if cur != nil {
			if first, _, _, ok := cur.take(n); ok {
				a.settle()
				a.mu.Unlock()
				return first, nil
			}
		}
		if a.next != nil {
			if cur != nil && !cur.retired {
				a.retire(cur, true)
			}
			a.promote()
			continue
		}
		f, mine := a.inFlight, false
		if f == nil {
			if a.lastErr != nil && a.opts.Now().Before(a.errUntil) {
				err := a.lastErr
				a.mu.Unlock()
				return 0, err
			}
			// The caller that starts a Fetch takes its values from the block
			// first: callers of Next must not use up, again and again, the block
			// a large NextN waits for.
			f, mine = a.start(max(a.size, n)), true
			f.claim = n
		}
		a.mu.Unlock()
		select {
		case <-f.done:
		case <-ctx.Done():
			if !mine {
				return 0, ctx.Err()
			}
			a.mu.Lock()
			defer a.mu.Unlock()
			if f.claimed { // the values are this caller's already
				return f.first, nil
			}
			f.claim = 0
			return 0, ctx.Err()
		}
		a.mu.Lock()
		switch {
		case mine && f.claimed:
			a.mu.Unlock()
			return f.first, nil
		case a.closed:
			a.mu.Unlock()
			return 0, ErrClosed
		case f.err != nil:
			a.mu.Unlock()
			return 0, f.err
		case f.got < f.asked && f.got < n:
			a.mu.Unlock()
			return 0, fmt.Errorf("blocks: %d contiguous values: %d remain before the end: %w", n, f.got, seqd.ErrExhausted)
		}
	}
}

// settle does what the current block's use calls for: retires it when used
// up, moving to the next block, and starts the next block's Fetch once
// Prefetch of the current one is used. a.mu is held.
func (a *Allocator) settle() {
	cur := a.cur.Load()
	if cur == nil || a.closed {
		return
	}
	if cur.used.Load() == cur.size && !cur.retired {
		a.retire(cur, true)
		if a.next != nil {
			a.promote()
			return
		}
	}
	if cur.used.Load() >= cur.prefetchAt.Load() && a.next == nil && a.inFlight == nil {
		if a.lastErr != nil && a.opts.Now().Before(a.errUntil) {
			cur.deferPrefetch()
			return
		}
		a.start(a.size)
	}
}

// retire takes b out of use: its unused rest, if any, is skipped or, at
// Close, returned. When adapt is set, b counts as used up and its life sets
// the block size by Leaf's rule. a.mu is held.
func (a *Allocator) retire(b *block, adapt bool) (rest seqd.Range, ok bool) {
	used := b.used.Swap(b.size)
	b.retired = true
	a.served += used
	if used < b.size {
		rest, ok = seqd.Range{First: b.first + used, Last: b.first + b.size - 1}, true
	}
	if !adapt {
		return rest, ok
	}
	a.skipped += b.size - used
	lasted := a.opts.Now().Sub(b.since)
	// The time a block of the current size would have lasted at this block's pace.
	scaled := float64(lasted) * float64(a.size) / float64(b.size)
	switch {
	case scaled < float64(a.opts.Target):
		if a.size > a.opts.MaxBlock/2 {
			a.size = a.opts.MaxBlock
		} else {
			a.size *= 2
		}
	case scaled > 2*float64(a.opts.Target):
		a.size = max(a.size/2, a.opts.MinBlock)
	}
	return rest, ok
}

// RateWindow is the span Status.Rate is measured over, and each of
// Status.RateHistory's.
const RateWindow = time.Minute

// RateHistoryLen is how many past RateWindows Status.RateHistory holds.
const RateHistoryLen = 10

// rateHistory is the rate of each of the last whole windows. A window's rate is
// the served totals at its ends, each interpolated between the calls around it.
type rateHistory struct {
	rates   [RateHistoryLen]float64 // the newest last
	known   int
	start   time.Time // where the current window starts; zero before the first call
	base    int64     // served at start
	lastAt  time.Time // the last call
	lastSum int64     // served then
}

// add files served at now, closing the windows that ended since the last call.
func (h *rateHistory) add(now time.Time, served int64) {
	if h.start.IsZero() {
		h.start, h.base, h.lastAt, h.lastSum = now, served, now, served
		return
	}
	// at is the served total at t, between the last call and now.
	at := func(t time.Time) int64 {
		return h.lastSum + int64(float64(served-h.lastSum)*float64(t.Sub(h.lastAt))/float64(now.Sub(h.lastAt)))
	}
	// After more idle windows than are kept, only the kept ones are worked out.
	if k := int(now.Sub(h.start) / RateWindow); k > RateHistoryLen {
		skip := k - RateHistoryLen
		t := h.start.Add(time.Duration(skip) * RateWindow)
		h.start, h.base = t, at(t)
		h.lastAt, h.lastSum = t, h.base
		h.known += skip
	}
	for now.Sub(h.start) >= RateWindow {
		end := h.start.Add(RateWindow)
		sum := at(end)
		copy(h.rates[:], h.rates[1:])
		h.rates[RateHistoryLen-1] = float64(sum-h.base) / RateWindow.Seconds()
		h.known++
		h.start, h.base = end, sum
		h.lastAt, h.lastSum = end, sum
	}
	h.known = min(h.known, RateHistoryLen)
	h.lastAt, h.lastSum = now, served
}

// sample is the count of values served by a time.
type sample struct {
	at     time.Time
	served int64
}

// servedNow is every value handed out so far. a.mu is held.
func (a *Allocator) servedNow() int64 {
	n := a.served
	if cur := a.cur.Load(); cur != nil && !cur.retired {
		n += cur.used.Load()
	}
	return n
}

// sample files served at now and returns the rate since the oldest sample
// within RateWindow that is at least a second old (or, if none is, the newest
// older one): values a second over a span of a second or more, never one
// block's or one call's. 0 until a second has passed. a.mu is held.
func (a *Allocator) sample(now time.Time, served int64) float64 {
	a.history.add(now, served)
	if n := len(a.samples); n == 0 || now.Sub(a.samples[n-1].at) >= time.Second {
		a.samples = append(a.samples, sample{at: now, served: served})
	}
	// Keep one sample older than the window as the base when no other is a second old.
	for len(a.samples) > 2 && now.Sub(a.samples[1].at) > RateWindow {
		a.samples = a.samples[1:]
	}
	for _, s := range a.samples {
		if span := now.Sub(s.at); span >= time.Second && span <= RateWindow {
			return float64(served-s.served) / span.Seconds()
		}
	}
	if base := a.samples[0]; now.Sub(base.at) > RateWindow {
		return float64(served-base.served) / now.Sub(base.at).Seconds()
	}
	return 0
}

// promote makes the next block current. a.mu is held.
func (a *Allocator) promote() {
	b := a.next
	a.next = nil
	b.since = a.opts.Now()
	a.sample(b.since, a.servedNow())
	a.cur.Store(b)
}

// start starts a Fetch of n values on a's own goroutine. a.mu is held.
func (a *Allocator) start(n int64) *fetch {
	f := &fetch{asked: n, done: make(chan struct{})}
	a.inFlight = f
	go a.run(f)
	return f
}

// run calls Fetch for f and files its block as the next one.
func (a *Allocator) run(f *fetch) {
	began := a.opts.Now()
	ctx, cancel := context.WithTimeout(a.ctx, a.opts.FetchTimeout)
	r, err := a.fetchFn(ctx, f.asked)
	cancel()
	if err == nil && r.Count() <= 0 { // First above Last, or more values than an int64 counts
		err = fmt.Errorf("blocks: fetch of %d values returned %d..%d, not a range", f.asked, r.First, r.Last)
	}
	ended := a.opts.Now()

	a.mu.Lock()
	a.inFlight = nil
	a.lastFetch, a.lastFetchAt = ended.Sub(began), ended
	if err != nil {
		f.err = err
		a.lastErr, a.errUntil = err, ended.Add(a.opts.Cooldown)
		if cur := a.cur.Load(); cur != nil && !cur.retired {
			cur.deferPrefetch()
		}
	} else {
		f.got = r.Count()
		a.lastErr = nil
		a.fetched += f.got
		a.next = newBlock(r, a.opts.Prefetch)
		cur := a.cur.Load()
		switch {
		case a.closed:
		case f.claim > 0 && f.got >= f.claim:
			// The claim is taken before the block is current, where no other
			// caller can take from it. The current block is retired first: a
			// caller that starts after this one has returned must not get a
			// value from it.
			a.next.used.Store(f.claim)
			f.claimed, f.first = true, r.First
			if cur != nil && !cur.retired {
				a.retire(cur, true)
			}
			a.promote()
			a.settle()
		case cur == nil || cur.retired:
			a.promote()
		}
	}
	a.mu.Unlock()
	close(f.done)
}

// Status reports what a holds and has done.
func (a *Allocator) Status() Status {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := Status{
		BlockSize:   a.size,
		Fetching:    a.inFlight != nil,
		LastFetch:   a.lastFetch,
		LastFetchAt: a.lastFetchAt,
		Fetched:     a.fetched,
		Served:      a.served,
		Skipped:     a.skipped,
	}
	if a.lastErr != nil {
		s.LastError = a.lastErr.Error()
	}
	cur := a.cur.Load()
	if cur != nil && !cur.retired {
		s.Current, s.CurrentSize = cur.rest(), cur.size
		used := cur.used.Load()
		s.Served += used
		// The next Fetch starts at the current block's prefetch point, or, with
		// a next block, once that one reaches its own.
		if a.next == nil {
			s.UntilFetch = max(cur.prefetchAt.Load()-used, 0)
		} else {
			s.UntilFetch = cur.size - used + max(a.next.prefetchAt.Load()-a.next.used.Load(), 0)
		}
	}
	if s.Fetching {
		s.UntilFetch = 0
	}
	s.Rate = a.sample(a.opts.Now(), s.Served)
	s.RateHistory, s.RateHistoryKnown = a.history.rates, a.history.known
	if a.next != nil {
		s.Next = a.next.rest()
	}
	return s
}

// Close stops a: later calls return ErrClosed. It waits, until ctx ends, for a
// Fetch in flight, and returns the values a holds unused, in ascending blocks.
func (a *Allocator) Close(ctx context.Context) []seqd.Range {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return nil
	}
	a.closed = true
	var held []seqd.Range
	if cur := a.cur.Load(); cur != nil && !cur.retired {
		if rest, ok := a.retire(cur, false); ok {
			held = append(held, rest)
		}
	}
	f := a.inFlight
	a.mu.Unlock()

	if f != nil {
		select {
		case <-f.done:
		case <-ctx.Done():
		}
	}
	a.cancel()

	a.mu.Lock()
	defer a.mu.Unlock()
	if b := a.next; b != nil {
		a.next = nil
		if rest, ok := a.retire(b, false); ok {
			held = append(held, rest)
		}
	}
	return held
}
