package counters

import (
	"context"
	"errors"
	"fmt"
	"math"
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
	writeTimeout time.Duration

	mu     sync.RWMutex
	names  map[string]*cachedName // the names served from blocks
	closed bool                   // Close was called: strict only from now on
	// refreshDone is not nil while the refresher runs, and is closed when it ends.
	refreshDone chan struct{}

	// refreshCtx ends the refresher's waits and reads; Close cancels it.
	refreshCtx  context.Context
	stopRefresh context.CancelFunc
}

func (k *cache) init(opts Options) {
	k.opts = opts.Blocks
	k.every = opts.ModeRefresh
	k.writeTimeout = opts.WriteTimeout
	k.names = make(map[string]*cachedName)
	k.refreshCtx, k.stopRefresh = context.WithCancel(context.Background())
}

// cachedName is one name served from blocks.
type cachedName struct {
	name               string
	alloc              *blocks.Allocator
	minBlock, maxBlock int64 // the bounds stored when the allocator was made

	// stale is set by a fetch that found the name no longer cached (or gone),
	// and by the refresher for each name it is about to retire: the next caller
	// retires the allocator instead of taking a value from its blocks or waiting
	// for the refresher.
	stale atomic.Bool

	mu       sync.Mutex
	highest  int64 // the last value of the latest block reserved; 0 before the first
	reported int64 // the allocator's Served as last reported to the store

	retiring atomic.Bool   // someone has started to retire it
	retired  chan struct{} // closed once it is retired: closed, tail given back
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
			r, err = e.alloc.NextN(ctx, n)
			if err == nil || !errors.Is(err, blocks.ErrClosed) && !errors.Is(err, errNotCached) {
				return r, true, err
			}
		}
		// The allocator is closed, or its name went strict. Its values must be out
		// of use before this caller writes in strict mode: a strict value above
		// the blocks, followed by a block value, would go backwards.
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
// finds the name cached calls it. The first block fetch queues behind the strict
// writes already queued, so no strict value of this Counter lands above a block
// it serves from.
func (k *cache) learn(c *Counter, name string, s counterState) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed || k.names[name] != nil {
		return false
	}
	k.add(c, name, s.minBlock, s.maxBlock)
	return true
}

// add starts serving name from a new allocator. k.mu must be held.
func (k *cache) add(c *Counter, name string, minBlock, maxBlock int64) {
	e := &cachedName{name: name, minBlock: minBlock, maxBlock: maxBlock, retired: make(chan struct{})}
	opts := k.opts
	if minBlock != 0 {
		opts.MinBlock, opts.MaxBlock = minBlock, maxBlock
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
// which also reports what e served since the last report. It runs as a solo write
// of the coalescer, so it is ordered with the name's strict writes in this
// Counter. Near the sequence's end it reserves fewer than n, at least one.
func (c *Counter) reserveBlock(ctx context.Context, e *cachedName, n int64) (first, count int64, err error) {
	start := time.Now()
	defer func() { c.observer.Block(count, time.Since(start), err) }()
	served := e.unreported()
	cached := bson.D{{Key: fieldMode, Value: string(seqd.ModeCached)}}
	for attempt := 1; ; attempt++ {
		filter := counterFilter(e.name, math.MaxInt64-n, cached)
		update := bson.D{{Key: "$inc", Value: bson.D{
			{Key: fieldSeq, Value: n},
			{Key: fieldReserved, Value: n},
			{Key: fieldServed, Value: served},
		}}}
		doc, err := c.coll.FindOneAndUpdate(ctx, filter, update, blockFetchOptions).Raw()
		if err == nil {
			s, err := parseCounter(e.name, doc)
			if err != nil {
				return 0, 0, err // bounds that fail the one check the filter cannot make: see counterFilter
			}
			e.mu.Lock()
			e.highest = s.seq
			e.reported += served
			e.mu.Unlock()
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
		// Nothing matched: the name went strict or is gone, the block does not
		// fit, or the document is not one seqd can use.
		cur, err := readCounter(ctx, c.coll, e.name)
		switch {
		case errors.Is(err, ErrNotFound):
			e.stale.Store(true)
			return 0, 0, errNotCached
		case err != nil:
			return 0, 0, err
		case cur.mode != seqd.ModeCached:
			e.stale.Store(true)
			return 0, 0, errNotCached
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
// is still that value, nobody has reserved past it, and seq moves back to just
// before the tail, so the values are handed out again. Otherwise it only reports
// what e served since its last report.
func (c *Counter) giveBack(ctx context.Context, e *cachedName, held []seqd.Range) error {
	served := e.unreported()
	e.mu.Lock()
	highest := e.highest
	e.mu.Unlock()
	report := func() {
		e.mu.Lock()
		e.reported += served
		e.mu.Unlock()
	}

	if t, ok := tail(held, highest); ok {
		filter := counterFilter(e.name, t.Last, bson.D{{Key: fieldSeq, Value: t.Last}})
		update := bson.D{
			{Key: "$set", Value: bson.D{{Key: fieldSeq, Value: t.First - 1}}},
			{Key: "$inc", Value: bson.D{{Key: fieldReturned, Value: t.Count()}, {Key: fieldServed, Value: served}}},
		}
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

// refresh re-reads, every ModeRefresh, the documents of the names this Counter
// serves from blocks, and retires the allocators of those that went strict, got
// other bounds, became unusable or are gone. It retires them all at once, so
// that a slow give-back of one name does not hold back the switch of another.
// It ends when no name is left, or at Close, and then closes done.
func (c *Counter) refresh(done chan struct{}) {
	k := &c.cache
	defer close(done)
	t := time.NewTicker(k.every)
	defer t.Stop()
	for {
		select {
		case <-k.refreshCtx.Done():
			return
		case <-t.C:
		}
		k.mu.Lock()
		if len(k.names) == 0 {
			k.refreshDone = nil
			k.mu.Unlock()
			return
		}
		names := make([]string, 0, len(k.names))
		es := make([]*cachedName, 0, len(k.names))
		for name, e := range k.names {
			names = append(names, name)
			es = append(es, e)
		}
		k.mu.Unlock()

		stored, err := c.readModes(names)
		if err != nil {
			continue // the store is down: the allocators serve what they hold, and fetches fail fast
		}
		var changed []*cachedName
		for _, e := range es {
			if s, ok := stored[e.name]; !ok || s.mode != seqd.ModeCached || s.minBlock != e.minBlock || s.maxBlock != e.maxBlock {
				e.stale.Store(true) // from now on no caller takes a value from its blocks
				changed = append(changed, e)
			}
		}
		var wg sync.WaitGroup
		for _, e := range changed {
			wg.Go(func() {
				// Not bounded by Close: a give-back cut short would lose its values.
				ctx, cancel := context.WithTimeout(context.Background(), k.writeTimeout)
				defer cancel()
				c.retire(ctx, e)
			})
		}
		wg.Wait()
	}
}

// readModes reads the documents of names with one find, and returns those seqd
// can use.
func (c *Counter) readModes(names []string) (map[string]counterState, error) {
	ctx, cancel := context.WithTimeout(c.cache.refreshCtx, c.cache.writeTimeout)
	defer cancel()
	cur, err := c.coll.Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: names}}}})
	if err != nil {
		return nil, err
	}
	var docs []bson.Raw
	if err := cur.All(ctx, &docs); err != nil {
		return nil, err
	}
	stored := make(map[string]counterState, len(docs))
	for _, d := range docs {
		name, _ := d.Lookup("_id").StringValueOK()
		if s, err := parseCounter(name, d); err == nil {
			stored[name] = s
		}
	}
	return stored, nil
}

// SetMode stores name's mode and block bounds (0, 0 for Options.Blocks'), and
// creates the sequence at 0 if it is new. It takes effect in this Counter at
// once; other instances learn it within their ModeRefresh, or at their next
// strict write. Leaving cached mode gives back this Counter's unused tail.
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
	if err := c.setMode(ctx, name, mode, minBlock, maxBlock); err != nil {
		return wrap(err, "set mode", name)
	}

	k := &c.cache
	k.mu.Lock()
	e := k.names[name]
	same := e != nil && mode == seqd.ModeCached && e.minBlock == minBlock && e.maxBlock == maxBlock
	if !same && e != nil {
		delete(k.names, name)
	}
	if !same && mode == seqd.ModeCached && !k.closed {
		k.add(c, name, minBlock, maxBlock)
	}
	k.mu.Unlock()
	if e != nil && !same {
		return wrap(c.retire(ctx, e), "set mode", name)
	}
	return nil
}

// setMode is SetMode's write: one upsert, which creates the document at seq 0.
func (c *Counter) setMode(ctx context.Context, name string, mode seqd.Mode, minBlock, maxBlock int64) error {
	set := bson.D{{Key: fieldMode, Value: string(mode)}}
	update := bson.D{{Key: "$setOnInsert", Value: bson.D{{Key: fieldSeq, Value: int64(0)}}}}
	if minBlock == 0 {
		update = append(update, bson.E{Key: "$unset", Value: bson.D{{Key: fieldMinBlock, Value: ""}, {Key: fieldMaxBlock, Value: ""}}})
	} else {
		set = append(set, bson.E{Key: fieldMinBlock, Value: minBlock}, bson.E{Key: fieldMaxBlock, Value: maxBlock})
	}
	update = append(update, bson.E{Key: "$set", Value: set})
	filter := counterFilter(name, math.MaxInt64)
	return c.upsert(ctx, name, func() error {
		_, err := c.coll.UpdateOne(ctx, filter, update, options.UpdateOne().SetUpsert(true))
		return err
	})
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
// allocator (each waits, until ctx ends, for a block fetch in flight), gives back
// each name's unused tail and reports what was served. After Close the Counter
// serves every name in strict mode. Values it could not give back before ctx
// ended are a gap; the error says which names.
func (c *Counter) Close(ctx context.Context) error {
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
	for _, e := range es {
		if err := c.retire(ctx, e); err != nil {
			errs = append(errs, wrap(err, "close", e.name))
		}
	}
	return errors.Join(errs...)
}
