package counters

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/seqd/seqd"
	"github.com/seqd/seqd/blocks"
)

// cache is a Counter's cached mode: an allocator per name it serves from blocks,
// and the goroutine that re-reads those names' modes. The package comment
// ("Cached mode") describes the behaviour.
type cache struct {
	opts         blocks.Options
	every        time.Duration // Options.ModeRefresh
	lease        time.Duration // Options.BlockLease
	writeTimeout time.Duration

	mu     sync.RWMutex
	names  map[string]*cachedName // the names served from blocks
	drains map[string]*drainWatch // the names seen leaving cached mode
	closed bool                   // Close was called: strict only from now on
	// refreshDone is not nil while the refresher runs, and is closed when it ends.
	refreshDone chan struct{}

	// refreshCtx ends the refresher's waits and reads, and the drain finishers';
	// Close cancels it.
	refreshCtx  context.Context
	stopRefresh context.CancelFunc
	finishers   sync.WaitGroup // the drains this Counter started, finished when they end

	modes                    *mongo.Collection                 // ModesCollection, written by fence
	linearizable, localReads *options.CollectionOptionsBuilder // for the refresh's reads: see confirmReads
	logger                   *slog.Logger
	leaseObserver            LeaseObserver
}

func (k *cache) init(db *mongo.Database, opts Options) {
	k.opts = opts.Blocks
	k.every = opts.ModeRefresh
	k.lease = opts.BlockLease
	k.writeTimeout = opts.WriteTimeout
	k.modes = db.Collection(ModesCollection, opts.collectionOptions())
	k.linearizable, k.localReads = opts.confirmOptions(), opts.confirmLocalOptions()
	k.logger = opts.logger()
	k.leaseObserver = opts.leaseObserver()
	k.names = make(map[string]*cachedName)
	k.drains = make(map[string]*drainWatch)
	k.refreshCtx, k.stopRefresh = context.WithCancel(context.Background())
}

// epoch is where leases are counted from, on the monotonic clock.
var epoch = time.Now()

// cachedName is one name served from blocks.
type cachedName struct {
	name               string
	alloc              *blocks.Allocator
	minBlock, maxBlock int64 // the bounds stored when the allocator was made
	gen                int64 // the document's gen then: a confirmation must show the same
	slot               int   // changeSlot(name)

	// leaseMs is the document's leaseMs as last read or written: a confirmation
	// by a read counts for at most that long. The store's only grows.
	leaseMs atomic.Int64

	// verified is set by the mode refresh once it has read the document after
	// a read of the change vector, and cleared when the name's slot moves.
	// Only the refresher touches it.
	verified bool

	// expired is set once a caller found the lease run out, to count it once.
	expired atomic.Bool

	// leaseUntil is when the blocks stop being served, in nanoseconds since
	// epoch: the send time of the latest request that confirmed the name cached
	// in gen, plus the lease. fetched is set once a block was reserved: until
	// then the allocator holds nothing, and its first fetch confirms itself.
	leaseUntil atomic.Int64
	fetched    atomic.Bool

	// stale is set by a fetch that found the name no longer cached (or gone),
	// and by the refresher for each name it is about to retire: the next caller
	// retires the allocator instead of taking a value from its blocks or waiting
	// for the refresher.
	stale atomic.Bool

	mu       sync.Mutex
	highest  int64 // the last value of the latest block reserved; 0 before the first
	forced   int64 // the document's forced Sets when that block was reserved
	since    int64 // the first value of the earliest block reserved with that forced count
	reported int64 // the allocator's Served as last reported to the store

	retiring atomic.Bool   // someone has started to retire it
	retired  chan struct{} // closed once it is retired: closed, tail given back
}

// confirm extends e's lease to sent+lease, sent being when the request that
// showed the name cached in e's gen left this process.
func (e *cachedName) confirm(sent time.Time, lease time.Duration) {
	until := int64(sent.Sub(epoch) + lease)
	for {
		cur := e.leaseUntil.Load()
		if until <= cur || e.leaseUntil.CompareAndSwap(cur, until) {
			return
		}
	}
}

// leased reports whether e may serve from its blocks now: a monotonic clock
// read and two atomic loads. Before its first block e holds nothing, and a
// fetch that answers within the lease confirms itself (reserveBlock).
func (e *cachedName) leased() bool {
	if mutantNoLease { // TEST ONLY: false unless built with -tags seqdmutants
		return true
	}
	return int64(time.Since(epoch)) < e.leaseUntil.Load() || !e.fetched.Load()
}

// drainWatch is what this Counter knows of a name leaving cached mode: the
// document's gen, and when, on this process's clock, every lease on its blocks
// has run out. Under cache.mu.
type drainWatch struct {
	gen       int64
	until     time.Time
	finished  bool          // this Counter made the name strict
	finishing chan struct{} // closed when the write that makes it strict returns; nil when none is in flight
}

// drainError is a write that found its name leaving cached mode. It wraps
// ErrDraining and ErrUnavailable, and says how long to wait.
type drainError struct {
	name  string
	gen   int64
	until time.Time
}

func (e *drainError) Error() string {
	return fmt.Sprintf("%v: strict values start in %v", ErrDraining, max(time.Until(e.until), 0).Round(time.Millisecond))
}

func (e *drainError) Unwrap() []error { return []error{ErrDraining, ErrUnavailable} }

// RetryAfter is how long until strict values start, as far as this process knows.
func (e *drainError) RetryAfter() time.Duration { return max(time.Until(e.until), 0) }

// drainWait is how long a drain lasts from when an instance saw it: the
// longest lease any instance took (leaseMs, or this Counter's), and 2% for
// clocks that run at different rates. Clocks need not agree on the time, only
// on how long a second is, within 2%.
func (k *cache) drainWait(leaseMs int64) time.Duration {
	d := max(k.lease, time.Duration(leaseMs)*time.Millisecond)
	return d + d/50
}

// drainSeen records that name's document s is draining, and returns the
// error for the callers: every lease confirmed before the switch has run out
// drainWait after the acknowledgement of a fence sent after the document was
// read (see fence), unless this Counter already counts from an earlier one. It
// returns the fence's error if it failed: then nothing may be counted.
func (c *Counter) drainSeen(ctx context.Context, name string, s counterState) (*drainError, error) {
	k := &c.cache
	k.mu.RLock()
	if w := k.drains[name]; w != nil && w.gen == s.gen {
		d := &drainError{name: name, gen: s.gen, until: w.until}
		k.mu.RUnlock()
		return d, nil
	}
	k.mu.RUnlock()
	acked, err := c.fence(ctx, name)
	if err != nil {
		return nil, err
	}
	until := acked.Add(k.drainWait(s.leaseMs))
	k.mu.Lock()
	defer k.mu.Unlock()
	w := k.drains[name]
	if w != nil && w.gen == s.gen {
		if w.until.Before(until) {
			until = w.until
		}
		w.until = until
	} else {
		for n, w := range k.drains { // a handful at most: drains are rare and short
			if time.Since(w.until) > time.Minute && w.finishing == nil {
				delete(k.drains, n)
			}
		}
		k.drains[name] = &drainWatch{gen: s.gen, until: until}
	}
	return &drainError{name: name, gen: s.gen, until: until}, nil
}

// drainFinishMargin is what a caller's deadline must leave after a drain ends
// for the caller to wait for it: time to make the name strict and write a value.
// A caller with less gets ErrDraining at once.
const drainFinishMargin = 250 * time.Millisecond

// awaitDrain waits, if ctx allows, until d's drain is over, and finishes it:
// the document's mode becomes strict. It returns d itself, at once, when ctx
// would end too soon after the drain.
func (c *Counter) awaitDrain(ctx context.Context, d *drainError) error {
	if wait := time.Until(d.until); wait > 0 {
		if dl, ok := ctx.Deadline(); ok && dl.Before(d.until.Add(drainFinishMargin)) {
			return d
		}
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return c.finishDrain(ctx, d.name, d.gen)
}

// finishDrain makes name strict if it is still draining in gen, once per
// Counter: callers who wait for one drain share one write. Every instance may
// finish a drain: the one that switched the name does when its wait is over,
// any other once it has waited as long from when it saw the drain.
func (c *Counter) finishDrain(ctx context.Context, name string, gen int64) error {
	k := &c.cache
	k.mu.Lock()
	w := k.drains[name]
	switch {
	case w == nil || w.gen != gen || w.finished:
		k.mu.Unlock()
		return nil // finished here, or another switch since: the next write tells
	case w.finishing != nil:
		ch := w.finishing
		k.mu.Unlock()
		select {
		case <-ch:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	ch := make(chan struct{})
	w.finishing = ch
	k.mu.Unlock()

	filter := counterFilter(name, math.MaxInt64, bson.D{{Key: fieldMode, Value: modeDraining}}, equalOrAbsent(fieldGen, gen))
	update := bson.D{
		{Key: "$set", Value: bson.D{{Key: fieldMode, Value: string(seqd.ModeStrict)}}},
		{Key: "$unset", Value: bson.D{{Key: fieldStrictFrom, Value: ""}}},
	}
	_, err := c.coll.UpdateOne(ctx, filter, update)
	k.mu.Lock()
	w.finished = err == nil
	w.finishing = nil
	k.mu.Unlock()
	close(ch)
	return err
}

// errNotCached is what a block fetch returns when the name's document is no
// longer in cached mode, or is gone. The callers who get it take the strict path.
var errNotCached = errors.New("the sequence is no longer in cached mode")

// errUseBlocks is what a strict write returns, without writing, to callers who
// queued for it before their name turned cached in this Counter: NextN sends
// them to the blocks.
var errUseBlocks = errors.New("the sequence is served from blocks now")

// nextCached serves n values of name from its blocks, if this Counter serves
// name from blocks. served is false when the caller must take the strict path.
func (c *Counter) nextCached(ctx context.Context, name string, n int64) (r Range, served bool, err error) {
	for {
		e := c.cache.lookup(name)
		if e == nil {
			return Range{}, false, nil
		}
		if !e.stale.Load() {
			if e.leased() {
				r, err = e.alloc.NextN(ctx, n)
				if err == nil || !errors.Is(err, blocks.ErrClosed) && !errors.Is(err, errNotCached) {
					return r, true, err
				}
			} else if e.expired.CompareAndSwap(false, true) {
				c.cache.leaseObserver.LeaseExpired()
			}
		}
		// The allocator is closed, its name went strict, or its lease ran out. Its
		// values must be out of use before this caller writes in strict mode: a
		// strict value above the blocks, followed by a block value, would go
		// backwards.
		if err := c.retire(ctx, e); err != nil && ctx.Err() != nil {
			return Range{}, true, ctx.Err()
		}
	}
}

// lookup returns name's allocator, or nil if name is served in strict mode.
func (k *cache) lookup(name string) *cachedName {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.names[name]
}

// learn makes this Counter serve name from blocks, with the bounds of s, unless
// it already does or is closed, and reports whether it did. A strict write that
// finds the name cached calls it, with the time it sent the write. The first
// block fetch queues behind the strict writes already queued, so no strict
// value of this Counter lands above a block it serves from.
func (k *cache) learn(c *Counter, name string, s counterState, sent time.Time) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed || k.names[name] != nil {
		return false
	}
	k.add(c, name, s, sent)
	return true
}

// add starts serving name from a new allocator, for document s read by a
// request sent at sent. k.mu must be held.
func (k *cache) add(c *Counter, name string, s counterState, sent time.Time) {
	e := &cachedName{name: name, minBlock: s.minBlock, maxBlock: s.maxBlock, gen: s.gen, slot: changeSlot(name), retired: make(chan struct{})}
	e.leaseMs.Store(s.leaseMs)
	e.confirm(sent, min(k.lease, time.Duration(s.leaseMs)*time.Millisecond))
	opts := k.opts
	if s.minBlock != 0 {
		opts.MinBlock, opts.MaxBlock = s.minBlock, s.maxBlock
	}
	e.alloc = blocks.New(func(ctx context.Context, n int64) (seqd.Range, error) {
		return c.coalescer.solo(ctx, name, n, func(ctx context.Context, name string, n int64, _ func(int, int64) any) (int64, int64, error) {
			return c.reserveBlock(ctx, e, n)
		})
	}, opts)
	k.names[name] = e
	if k.refreshDone == nil {
		k.refreshDone = make(chan struct{})
		go c.refresh(k.refreshDone)
	}
}

// remove stops serving e's name from e, if it still does.
func (k *cache) remove(e *cachedName) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.names[e.name] == e {
		delete(k.names, e.name)
	}
}

// blockFetchOptions are for a block fetch: no upsert, since a cached sequence
// exists, and the document after the $inc, whose seq ends the block.
var blockFetchOptions = options.FindOneAndUpdate().SetReturnDocument(options.After)

// maxFetchAttempts bounds the writes of one block fetch that find the document
// changed between the write and the read that explains why it missed.
const maxFetchAttempts = 3

// reserveBlock reserves a block of n values of e's name with one findAndModify,
// which also reports what e served since the last report, and raises the
// document's leaseMs to this Counter's lease. It runs as a solo write of the
// coalescer, so it is ordered with the name's strict writes in this Counter.
// Near the sequence's end it reserves fewer than n, at least one. Its success
// confirms e's lease from when it was sent.
func (c *Counter) reserveBlock(ctx context.Context, e *cachedName, n int64) (first, count int64, err error) {
	start := time.Now()
	defer func() { c.observer.Block(count, time.Since(start), err) }()
	served := e.unreported()
	cached := bson.D{{Key: fieldMode, Value: string(seqd.ModeCached)}}
	for attempt := 1; ; attempt++ {
		// plain(nil): a cached sequence has no numbering (strictNumbering).
		filter := counterFilter(e.name, math.MaxInt64-n, cached, equalOrAbsent(fieldGen, e.gen), plain(nil))
		update := bson.D{
			{Key: "$inc", Value: bson.D{
				{Key: fieldSeq, Value: n},
				{Key: fieldReserved, Value: n},
				{Key: fieldServed, Value: served},
			}},
			{Key: "$max", Value: bson.D{{Key: fieldLeaseMs, Value: c.cache.lease.Milliseconds()}}},
		}
		sent := time.Now()
		doc, err := c.coll.FindOneAndUpdate(ctx, filter, update, blockFetchOptions).Raw()
		if err == nil {
			// The write applied: its report is in, whatever the answer holds.
			e.mu.Lock()
			e.reported += served
			e.mu.Unlock()
			s, err := parseCounter(e.name, doc)
			if err != nil {
				return 0, 0, err // bounds that fail the one check the filter cannot make: see counterFilter
			}
			e.mu.Lock()
			if e.highest == 0 || s.forced != e.forced {
				e.since = s.seq - n + 1
			}
			e.highest, e.forced = s.seq, s.forced
			e.mu.Unlock()
			e.leaseMs.Store(max(e.leaseMs.Load(), s.leaseMs))
			if time.Since(sent) >= c.cache.lease {
				// An answer that took longer than the lease confirms nothing: the
				// name may have drained and gone strict meanwhile. Its block is a
				// gap; the callers take the strict path.
				e.stale.Store(true)
				return 0, 0, errNotCached
			}
			e.confirm(sent, c.cache.lease)
			e.fetched.Store(true)
			return s.seq - n + 1, n, nil
		}
		if !errors.Is(err, mongo.ErrNoDocuments) {
			if mayHaveRun(err) {
				// Its report of served is taken as in, lest it count twice if
				// sent again: a report lost instead makes the stored served
				// smaller, so that unaccounted overstates what was lost, never
				// understates it. Its block, if reserved, is lost.
				e.mu.Lock()
				e.reported += served
				e.mu.Unlock()
			}
			return 0, 0, err
		}
		// Nothing matched: the name left cached mode, changed bounds or is gone,
		// the block does not fit, or the document is not one seqd can use.
		cur, err := readCounter(ctx, c.coll, e.name)
		switch {
		case errors.Is(err, ErrNotFound):
			e.stale.Store(true)
			return 0, 0, errNotCached
		case err != nil:
			return 0, 0, err
		case cur.draining:
			c.drainSeen(ctx, e.name, cur) // if the fence fails, whoever finishes the drain fences first
			e.stale.Store(true)
			return 0, 0, errNotCached
		case cur.mode != seqd.ModeCached || cur.gen != e.gen:
			e.stale.Store(true)
			return 0, 0, errNotCached
		case cur.strictNumbering(e.name) != nil:
			return 0, 0, cur.strictNumbering(e.name) // left as it is
		case cur.seq == math.MaxInt64:
			return 0, 0, fmt.Errorf("%w: at %d, a block of %d requested", ErrExhausted, cur.seq, n)
		case cur.seq > math.MaxInt64-n:
			n = math.MaxInt64 - cur.seq // the last values: fewer than asked
		case attempt >= maxFetchAttempts:
			return 0, 0, fmt.Errorf("%w: the document changed under %d block fetches", ErrContention, attempt)
		}
	}
}

// unreported is what e's allocator served since its last report to the store.
func (e *cachedName) unreported() int64 {
	served := e.alloc.Status().Served
	e.mu.Lock()
	defer e.mu.Unlock()
	return served - e.reported
}

// retire stops serving e's name from e: it closes the allocator, which waits
// until ctx ends for a fetch in flight, gives back the unused tail and reports
// what was served. One caller does it; the others wait for it, until ctx ends.
// The error is the give-back's; values it could not give back are a gap.
func (c *Counter) retire(ctx context.Context, e *cachedName) error {
	c.cache.remove(e)
	if !e.retiring.CompareAndSwap(false, true) {
		select {
		case <-e.retired:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	defer close(e.retired)
	held := e.alloc.Close(ctx)
	_, err := c.coalescer.solo(ctx, e.name, 1, func(ctx context.Context, name string, _ int64, _ func(int, int64) any) (int64, int64, error) {
		return 0, 1, c.giveBack(ctx, e, held)
	})
	return err
}

// giveBack gives back the contiguous unused tail of held that ends at the
// highest value e reserved, with one conditional update: if the document's seq
// is still that value, nobody has reserved past it or written a strict value,
// and if its floor is below the tail, no Set has named a value in it since; then
// seq moves back to just before the tail, so the values are handed out again.
// Otherwise it only reports what e served since its last report.
func (c *Counter) giveBack(ctx context.Context, e *cachedName, held []seqd.Range) error {
	served := e.unreported()
	report := func() {
		e.mu.Lock()
		e.reported += served
		e.mu.Unlock()
	}

	if t, forced, ok := e.tail(held); ok {
		filter, update := giveBackUpdate(e.name, t, forced)
		update = append(update[:1], bson.E{Key: "$inc", Value: bson.D{{Key: fieldReturned, Value: t.Count()}, {Key: fieldServed, Value: served}}})
		res, err := c.coll.UpdateOne(ctx, filter, update)
		if err != nil {
			return err
		}
		if res.MatchedCount == 1 {
			report()
			return nil
		}
	}
	if served == 0 {
		return nil
	}
	update := bson.D{{Key: "$inc", Value: bson.D{{Key: fieldServed, Value: served}}}}
	if _, err := c.coll.UpdateOne(ctx, counterFilter(e.name, math.MaxInt64), update); err != nil {
		return err
	}
	report()
	return nil
}

// tail is the part of held that a give-back may return, and the forced count
// its fence names: the contiguous run at the end of held that ends at the
// highest value e reserved, from no lower than the first block reserved with
// the forced count of the latest. A block reserved before a forced Set stays
// out of it, lest the fence, which names the latest count, match after that
// Set: those values are a gap.
func (e *cachedName) tail(held []seqd.Range) (t seqd.Range, forced int64, ok bool) {
	e.mu.Lock()
	highest, forced, since := e.highest, e.forced, e.since
	e.mu.Unlock()
	t, ok = tail(held, highest)
	t.First = max(t.First, since)
	return t, forced, ok
}

// giveBackUpdate is the fenced update that gives back t, the tail of a name's
// blocks reserved when the document's forced count was forced: seq still at
// the tail's end, and no forced Set since its block (which could have moved
// seq back, and others' blocks up to it again): nothing was reserved or
// handed out since. floor at most just below the tail: no value was set since
// either.
func giveBackUpdate(name string, t seqd.Range, forced int64) (bson.Raw, bson.D) {
	filter := counterFilter(name, t.Last, bson.D{{Key: fieldSeq, Value: t.Last}},
		equalOrAbsent(fieldForced, forced),
		absentOr(fieldFloor, bson.D{{Key: "$lte", Value: t.First - 1}}))
	if mutantNoFence { // TEST ONLY: false unless built with -tags seqdmutants
		filter = counterFilter(name, t.Last, bson.D{{Key: fieldSeq, Value: t.Last}})
	}
	return filter, bson.D{
		{Key: "$set", Value: bson.D{{Key: fieldSeq, Value: t.First - 1}}},
		{Key: "$inc", Value: bson.D{{Key: fieldReturned, Value: t.Count()}}},
	}
}

// giveBackBatch is how many updates one command of giveBackAll carries: a
// server that runs a command's statements one after another (the development
// store holds its one writer for a whole command) lets other writes in between
// commands, so a clean stop of many names does not hold every other instance's
// writes for its whole length.
const giveBackBatch = 50

// giveBackTally is what giveBackAll did, for Close's one log line.
type giveBackTally struct {
	givenBack int   // tails given back
	values    int64 // values given back, at least (see unsure)
	// unsure is how many more values may have gone back: in a command where
	// some tails did not, its answer counts those that did, not which, and
	// values counts the smallest of them.
	unsure  int64
	fenced  int      // tails whose update matched nothing (see Close)
	failed  []string // names whose give-back or report was not made: the store's error, or the deadline
	reports int      // reports of what was served, made
}

// giveBackAll is giveBack for many names at once, at Close: unordered bulk
// writes of giveBackBatch updates each, giveBackInFlight at a time, first of
// the fenced give-backs, then of the updates that report what each name
// served.
// An update whose fence no longer matches leaves its document unchanged; the
// others apply. It returns what it did, and an error naming the names whose
// updates failed.
func (c *Counter) giveBackAll(ctx context.Context, es []*cachedName, held [][]seqd.Range) (giveBackTally, error) {
	var giveBacks, reports []giveBackOp
	for i, e := range es {
		served := e.unreported()
		if t, forced, ok := e.tail(held[i]); ok {
			filter, update := giveBackUpdate(e.name, t, forced)
			giveBacks = append(giveBacks, giveBackOp{mongo.NewUpdateOneModel().SetFilter(filter).SetUpdate(update), e.name, t.Count()})
		}
		if served != 0 {
			update := bson.D{{Key: "$inc", Value: bson.D{{Key: fieldServed, Value: served}}}}
			reports = append(reports, giveBackOp{mongo.NewUpdateOneModel().SetFilter(counterFilter(e.name, math.MaxInt64)).SetUpdate(update), e.name, 0})
		}
	}
	var tally giveBackTally
	var failed []error
	// Give-backs and reports go in commands of their own: a command's answer
	// counts the updates that matched, which then says how many tails went back.
	var pending [][]giveBackOp
	for _, us := range [][]giveBackOp{giveBacks, reports} {
		for len(us) > 0 {
			n := min(len(us), giveBackBatch)
			pending = append(pending, us[:n])
			us = us[n:]
		}
	}
	// giveBackInFlight commands go out at once, each as the one before it
	// ends: the store is not left idle for a round trip between commands. A
	// command that fails other than by its updates' own errors (the deadline,
	// the store gone) stops the sending; what was not sent is named as failed.
	var mu sync.Mutex
	var stopped error
	next := 0
	var wg sync.WaitGroup
	for range min(giveBackInFlight, len(pending)) {
		wg.Go(func() {
			for {
				mu.Lock()
				if stopped != nil || next == len(pending) {
					mu.Unlock()
					return
				}
				batch := pending[next]
				next++
				mu.Unlock()
				r := c.giveBackCommand(ctx, batch)
				mu.Lock()
				if r.err != nil && stopped == nil {
					stopped = r.err
				}
				tally.add(r)
				failed = append(failed, r.failed...)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if stopped != nil {
		lost := 0
		for _, b := range pending[next:] {
			for _, u := range b {
				tally.failed = append(tally.failed, u.name)
			}
			lost += len(b)
		}
		failed = append(failed, wrap(stopped, "close", ""))
		if lost > 0 {
			failed = append(failed, fmt.Errorf("counters: close: %d give-backs and reports not sent", lost))
		}
	}
	return tally, errors.Join(failed...)
}

// giveBackInFlight is how many of giveBackAll's commands are in flight at once.
const giveBackInFlight = 2

// giveBackOp is one update of giveBackAll: a name's fenced give-back, or the
// report of what it served.
type giveBackOp struct {
	model  mongo.WriteModel
	name   string
	values int64 // the tail's, for a give-back; 0 for a report
}

// giveBackCommand sends batch, all give-backs or all reports, as one
// unordered bulk write, and returns what it did; if the command failed as a
// whole, every name in it is counted as failed.
func (c *Counter) giveBackCommand(ctx context.Context, batch []giveBackOp) (r giveBackResult) {
	models := make([]mongo.WriteModel, len(batch))
	sent := len(batch) // updates without a write error
	var erred []int    // the indexes of the others
	var values int64
	for j, u := range batch {
		models[j] = u.model
		values += u.values
	}
	res, err := c.coll.BulkWrite(ctx, models, options.BulkWrite().SetOrdered(false))
	var bwe mongo.BulkWriteException
	switch {
	case errors.As(err, &bwe) && (bwe.WriteConcernError != nil || len(bwe.WriteErrors) > 0):
		// The command ran, and its answer counts what matched. A write concern
		// error says the updates applied but may not be replicated yet: they
		// are counted as the answer says, the error is returned, and the store,
		// which answered, gets the rest.
		if bwe.WriteConcernError != nil {
			r.failed = append(r.failed, fmt.Errorf("counters: close: %d give-backs or reports applied, not known to be replicated: %w", len(batch), bwe.WriteConcernError))
		}
		for _, we := range bwe.WriteErrors {
			if we.Index >= 0 && we.Index < len(batch) {
				u := batch[we.Index]
				r.giveBackTally.failed = append(r.giveBackTally.failed, u.name)
				r.failed = append(r.failed, wrap(errors.New(we.Message), "close", u.name))
				sent--
				erred = append(erred, we.Index)
				values -= u.values
			}
		}
	case err != nil:
		for _, u := range batch {
			r.giveBackTally.failed = append(r.giveBackTally.failed, u.name)
		}
		r.err = fmt.Errorf("%d give-backs or reports: %w", len(batch), err)
		return r
	}
	matched := 0
	if res != nil {
		matched = int(res.MatchedCount)
	}
	if batch[0].values == 0 { // reports
		r.reports = matched
		return r
	}
	r.givenBack = matched
	r.fenced = sent - matched
	if matched == sent {
		r.values = values
		return r
	}
	// Which matched is not known: at least the smallest tails, at most the
	// largest (the same when the tails are of one size).
	var sizes []int64
	for j, u := range batch {
		if !slices.Contains(erred, j) {
			sizes = append(sizes, u.values)
		}
	}
	slices.Sort(sizes)
	for j := range matched {
		r.values += sizes[j]
		r.unsure += sizes[len(sizes)-1-j] - sizes[j]
	}
	return r
}

// giveBackResult is what one command of giveBackAll did.
type giveBackResult struct {
	giveBackTally
	failed []error // the updates that failed, each naming its name
	err    error   // the command's, if it failed as a whole
}

// add adds what another command did.
func (t *giveBackTally) add(o giveBackResult) {
	t.givenBack += o.givenBack
	t.values += o.values
	t.unsure += o.unsure
	t.fenced += o.fenced
	t.failed = append(t.failed, o.giveBackTally.failed...)
	t.reports += o.reports
}

// tail returns the contiguous run at the end of held (ascending, as an allocator
// returns them) if it ends at highest.
func tail(held []seqd.Range, highest int64) (seqd.Range, bool) {
	if len(held) == 0 || highest == 0 || held[len(held)-1].Last != highest {
		return seqd.Range{}, false
	}
	t := held[len(held)-1]
	for i := len(held) - 2; i >= 0 && held[i].Last+1 == t.First; i-- {
		t.First = held[i].First
	}
	return t, true
}

// SetMode stores name's mode and block bounds (0, 0 for Options.Blocks'), and
// creates the sequence at 0 if it is new. Switching to cached mode, or to other
// bounds, takes effect in this Counter at once; other instances learn it within
// their ModeRefresh, or at their next strict write. Leaving cached mode gives
// back this Counter's unused tail and starts a drain: the document reads
// "draining", no instance fetches or serves a block of the name any more, and
// no value is handed out until every instance's lease has run out (the longest
// lease any instance took, plus 2% for clock rates). SetMode returns at once;
// Current shows when strict values start (Sequence.StrictFrom), and this
// Counter makes the name strict then, unless Close comes first (then the next
// caller of any instance does, once it has waited as long).
//
// It returns ErrInvalidMode for a mode other than ModeStrict and ModeCached, or
// bounds other than both 0 or 1 ≤ minBlock ≤ maxBlock ≤ seqd.MaxCount, before any
// round trip.
func (c *Counter) SetMode(ctx context.Context, name string, mode seqd.Mode, minBlock, maxBlock int64) error {
	if !ValidName(name) {
		return invalidName("set mode", name)
	}
	if err := seqd.CheckMode(mode, minBlock, maxBlock); err != nil {
		return fmt.Errorf("counters: set mode %q: %w", name, err)
	}
	if err := c.ready(ctx, "set mode", name); err != nil {
		return err
	}
	s, sent, left, err := c.setMode(ctx, name, mode, minBlock, maxBlock)
	if err != nil {
		return wrap(err, "set mode", name)
	}

	k := &c.cache
	k.mu.Lock()
	e := k.names[name]
	same := e != nil && s.mode == seqd.ModeCached && e.gen == s.gen
	if same {
		e.confirm(sent, k.lease)
	}
	if !same && e != nil {
		delete(k.names, name)
		e.stale.Store(true)
	}
	if !same && s.mode == seqd.ModeCached && !k.closed {
		k.add(c, name, s, sent)
	}
	k.mu.Unlock()
	var ferr error // the fence's: the switch is stored, but other instances may not see it within their ModeRefresh
	switch {
	case s.draining:
		d, err := c.drainSeen(ctx, name, s)
		if err != nil {
			ferr = err // whoever finishes the drain fences first
			break
		}
		k.finishers.Go(func() {
			t := time.NewTimer(time.Until(d.until))
			defer t.Stop()
			select {
			case <-k.refreshCtx.Done():
				return // Close: another instance's caller finishes the drain
			case <-t.C:
			}
			ctx, cancel := context.WithTimeout(k.refreshCtx, k.writeTimeout)
			defer cancel()
			c.finishDrain(ctx, name, d.gen) // if it fails, the next caller that waited finishes it
		})
	case left:
		// Other bounds, or cached again after a drain: other instances' refreshes
		// re-read the name once its slot moves, and retire their old allocators.
		_, ferr = c.fence(ctx, name)
	}
	var rerr error
	if e != nil && !same {
		rerr = c.retire(ctx, e)
	}
	return wrap(errors.Join(ferr, rerr), "set mode", name)
}

// setMode is SetMode's write, made on the document as read just before (its
// gen and mode in the filter), and tried again if the document changed
// meanwhile. A new document is created at seq 0. It returns the document
// after the write, when the write was sent, and whether it moved the gen of a
// document that was cached or draining (then instances may hold allocators of
// the old gen).
//
// gen moves when the mode moves into or out of cached, or a cached sequence's
// bounds change; that ends every instance's lease on its blocks of the
// sequence. A strict sequence leaving cached mode reads "draining" with the
// time strict values start (this process's clock, for the reader: the drain
// itself is timed on each instance's own clock).
func (c *Counter) setMode(ctx context.Context, name string, mode seqd.Mode, minBlock, maxBlock int64) (s counterState, sent time.Time, left bool, err error) {
	err = c.retry.do(ctx, func() (bool, error) {
		cur, err := readCounter(ctx, c.coll, name)
		exists := err == nil
		if err != nil && !errors.Is(err, ErrNotFound) {
			return false, err
		}
		if mode == seqd.ModeCached && exists && cur.numbering != (Numbering{}) {
			return false, fmt.Errorf("%w: a sequence with a period or format is strict (SetNumbering): set numbering none first", ErrInvalidMode)
		}
		set := bson.D{}
		var unset bson.D
		bump := true
		switch {
		case mode == seqd.ModeCached:
			bump = !exists || cur.mode != seqd.ModeCached || cur.minBlock != minBlock || cur.maxBlock != maxBlock
			set = append(set, bson.E{Key: fieldMode, Value: string(seqd.ModeCached)})
			unset = append(unset, bson.E{Key: fieldStrictFrom, Value: ""})
		case exists && cur.draining:
			bump = false // still draining, on its own clock
		case exists && cur.mode == seqd.ModeCached:
			from := time.Now().Add(c.cache.drainWait(cur.leaseMs)).Truncate(time.Millisecond)
			set = append(set, bson.E{Key: fieldMode, Value: modeDraining}, bson.E{Key: fieldStrictFrom, Value: from})
		default:
			bump = false
			set = append(set, bson.E{Key: fieldMode, Value: string(seqd.ModeStrict)})
		}
		if minBlock == 0 {
			unset = append(unset, bson.E{Key: fieldMinBlock, Value: ""}, bson.E{Key: fieldMaxBlock, Value: ""})
		} else {
			set = append(set, bson.E{Key: fieldMinBlock, Value: minBlock}, bson.E{Key: fieldMaxBlock, Value: maxBlock})
		}
		update := bson.D{{Key: "$set", Value: set}}
		if len(unset) > 0 {
			update = append(update, bson.E{Key: "$unset", Value: unset})
		}
		if bump {
			update = append(update, bson.E{Key: "$inc", Value: bson.D{{Key: fieldGen, Value: int64(1)}}})
		}
		left = exists && bump && (cur.mode == seqd.ModeCached || cur.draining)
		if mode == seqd.ModeCached {
			update = append(update, bson.E{Key: "$max", Value: bson.D{{Key: fieldLeaseMs, Value: c.cache.lease.Milliseconds()}}})
		}
		// A new document: the filter matches no document, so that the upsert
		// inserts, or collides with one created meanwhile (E11000).
		var filter any = bson.D{{Key: "_id", Value: name}, {Key: "$and", Value: bson.A{bson.D{{Key: fieldSeq, Value: bson.D{{Key: "$exists", Value: false}}}}}}}
		opts := options.FindOneAndUpdate().SetReturnDocument(options.After)
		if exists {
			stored := absentOr(fieldMode, bson.D{{Key: "$eq", Value: string(seqd.ModeStrict)}})
			switch {
			case cur.draining:
				stored = bson.D{{Key: fieldMode, Value: modeDraining}}
			case cur.mode == seqd.ModeCached:
				stored = bson.D{{Key: fieldMode, Value: string(seqd.ModeCached)}}
			}
			filter = counterFilter(name, math.MaxInt64, equalOrAbsent(fieldGen, cur.gen), stored)
		} else {
			update = append(update, bson.E{Key: "$setOnInsert", Value: bson.D{{Key: fieldSeq, Value: int64(0)}}})
			opts.SetUpsert(true)
		}
		sent = time.Now()
		doc, err := c.coll.FindOneAndUpdate(ctx, filter, update, opts).Raw()
		switch {
		case errors.Is(err, mongo.ErrNoDocuments) || mongo.IsDuplicateKeyError(err):
			return true, nil // the document changed (or was created) since it was read
		case err != nil:
			return false, err
		}
		s, err = parseCounter(name, doc)
		return false, err
	})
	return s, sent, left, err
}

// BlockStatus reports this Counter's blocks for name, if it serves name from
// blocks.
func (c *Counter) BlockStatus(name string) (blocks.Status, bool) {
	e := c.cache.lookup(name)
	if e == nil {
		return blocks.Status{}, false
	}
	return e.alloc.Status(), true
}

// Close stops serving from blocks: it stops the mode refresh, closes every
// allocator (each waits, until ctx ends, for a block fetch in flight), and
// gives back each name's unused tail and reports what was served, in bulk
// writes (giveBackAll). After Close the Counter serves every name in strict
// mode. Values it could not give back before ctx ended are a gap; the error
// says which names. If it served any name from blocks, it logs one line at
// info (Options.Logger): the names, the tails given back and their values,
// the reports of what was served, and the tails not given back and why.
func (c *Counter) Close(ctx context.Context) error {
	if err := refuseTransaction(ctx, "close", ""); err != nil {
		return err // its give-backs would be undone if the transaction aborted
	}
	k := &c.cache
	k.mu.Lock()
	k.closed = true
	es := make([]*cachedName, 0, len(k.names))
	for _, e := range k.names {
		es = append(es, e)
	}
	done := k.refreshDone
	k.mu.Unlock()
	k.stopRefresh()
	k.finishers.Wait() // they end at once: stopRefresh ended their waits and writes
	var errs []error
	if done != nil {
		select {
		case <-done:
		case <-ctx.Done():
			// The refresher is still retiring a name. Close the rest all the same,
			// so that nothing serves from blocks any more.
			errs = append(errs, fmt.Errorf("counters: close: waiting for the mode refresh: %w", ctx.Err()))
		}
	}
	// The names another goroutine is retiring are left to it; the others are
	// retired here, their allocators closed side by side.
	var mine, others []*cachedName
	for _, e := range es {
		k.remove(e)
		if e.retiring.CompareAndSwap(false, true) {
			mine = append(mine, e)
		} else {
			others = append(others, e)
		}
	}
	held := make([][]seqd.Range, len(mine))
	var wg sync.WaitGroup
	for i, e := range mine {
		wg.Go(func() { held[i] = e.alloc.Close(ctx) })
	}
	wg.Wait()
	tally, err := c.giveBackAll(ctx, mine, held)
	if err != nil {
		errs = append(errs, err)
	}
	for _, e := range mine {
		close(e.retired)
	}
	for _, e := range others {
		select {
		case <-e.retired:
		case <-ctx.Done():
			tally.failed = append(tally.failed, e.name)
			errs = append(errs, wrap(ctx.Err(), "close", e.name))
		}
	}
	err = errors.Join(errs...)
	if len(es) > 0 || err != nil {
		k.logger.Info("counters: closed: cached blocks given back", tally.attrs(len(es), err)...)
	}
	return err
}

// attrs are the fields of Close's log line, for names cached names.
func (t giveBackTally) attrs(names int, err error) []any {
	a := []any{"names", names, "given_back", t.givenBack, "values_returned", t.values}
	if t.unsure > 0 {
		a = append(a, "values_returned_up_to", t.values+t.unsure)
	}
	a = append(a, "served_reports", t.reports, "not_given_back", t.fenced)
	if t.fenced > 0 {
		a = append(a, "not_given_back_why", "another instance reserved past the tail, or a strict value or a Set was written since: those values are a gap")
	}
	if len(t.failed) > 0 {
		const shown = 10
		failed := slices.Compact(slices.Sorted(slices.Values(t.failed))) // a name's give-back and report
		a = append(a, "failed", len(failed), "failed_names", failed[:min(len(failed), shown)])
	}
	if err != nil {
		a = append(a, "err", err)
	}
	return a
}
