package counters

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/seqd/seqd"
	"github.com/seqd/seqd/period"
)

// Counter is the "counter" strategy: one document {_id: name, seq: last} per
// sequence, advanced by an atomic $inc. See the package comment.
type Counter struct {
	coll      *mongo.Collection
	peek      *mongo.Collection // coll, read with read concern majority
	retry     retrier
	coalescer *coalescer
	cache     cache // cached mode's allocators; see cached.go
	observer  Observer
	collation collationCheck
	numbering numberings       // the numberings of its names, as last seen
	clock     func() time.Time // Options.Clock
}

var _ Sequencer = (*Counter)(nil)

// NewCounter returns a Counter that keeps its documents in db's collection
// CounterCollection.
func NewCounter(db *mongo.Database, opts Options) *Counter {
	opts = opts.withDefaults()
	c := &Counter{
		coll:  db.Collection(CounterCollection, opts.collectionOptions()),
		peek:  db.Collection(CounterCollection, opts.peekOptions()),
		retry: opts.retrier(StrategyCounter),
		clock: opts.Clock,
	}
	reserve := c.reserveBatch
	if mutantEarlyAnswer { // TEST ONLY: false unless built with -tags seqdmutants
		reserve = answerEarly(reserve)
	}
	c.coalescer = newCoalescer(reserve, opts.Observer.Batch, opts, opts.WritesInFlight)
	c.observer = opts.Observer
	c.cache.init(db, opts)
	c.collation.init(c.coll)
	return c
}

// ready returns the error for a call that c refuses before any write: one
// inside a transaction (ErrInTransaction), or, from the first call on, any call
// on a collection with a default collation (ErrInvalidCounter; see
// collationCheck). Reading the collection's options is c's first round trip.
func (c *Counter) ready(ctx context.Context, op, name string) error {
	if err := refuseTransaction(ctx, op, name); err != nil {
		return err
	}
	return wrap(c.collation.check(ctx), op, name)
}

// counterDoc is a counter document's value, as Set reads it.
type counterDoc struct {
	Name string `bson:"_id"`
	Seq  int64  `bson:"seq"`
}

// Options for the findAndModify calls. They have no projection: the document is
// tiny, and FerretDB does not implement findAndModify's "fields".
var (
	reserveOptions = options.FindOneAndUpdate().SetUpsert(true).SetReturnDocument(options.After)
	raiseOptions   = options.FindOneAndUpdate().SetUpsert(true).SetReturnDocument(options.Before)
)

// Strategy returns StrategyCounter.
func (c *Counter) Strategy() string { return StrategyCounter }

// Next reserves the next value of name.
func (c *Counter) Next(ctx context.Context, name string) (int64, error) {
	r, err := c.NextN(ctx, name, 1)
	return r.Last, err
}

// NextN reserves n contiguous values of name: from this Counter's blocks in
// cached mode, with a write of its own in strict mode.
func (c *Counter) NextN(ctx context.Context, name string, n int64) (Range, error) {
	r, _, err := c.nextN(ctx, name, n)
	return r, err
}

// nextN is NextN, which also returns what the write left its callers: a
// *numberNote for a numbered sequence, else nil.
func (c *Counter) nextN(ctx context.Context, name string, n int64) (Range, any, error) {
	if !ValidName(name) {
		return Range{}, nil, invalidName("next", name)
	}
	if n < 1 {
		return Range{}, nil, fmt.Errorf("counters: next %d of %q: %w", n, name, ErrInvalidCount)
	}
	if err := c.ready(ctx, "next", name); err != nil {
		return Range{}, nil, err
	}
	for {
		if r, served, err := c.nextCached(ctx, name, n); served {
			return r, nil, wrap(err, "next", name)
		}
		r, note, err := c.coalescer.doNote(ctx, name, n)
		var d *drainError
		switch {
		case errors.Is(err, errUseBlocks):
		case errors.As(err, &d):
			// The name is leaving cached mode: wait for the end of the drain if
			// the context allows, finish it, and write in strict mode.
			if err := c.awaitDrain(ctx, d); err != nil {
				return Range{}, nil, wrap(err, "next", name)
			}
		default:
			return r, note, wrap(err, "next", name)
		}
	}
}

// reserve is the round trip behind Next and NextN in strict mode: it adds n to
// name's counter and returns the new value. It retries the upsert race on a new
// name and tells exhaustion apart from that race; see the package comment. The
// document it returns shows the name's mode: once it says cached, this Counter
// serves the name from blocks; learned is true if this write made it do so.
//
// It takes no value of a sequence with a period: it returns errRelearn once it
// has learned the period from the document (see reservePeriodic). For a
// sequence with a format, it leaves its callers a numberNote.
func (c *Counter) reserve(ctx context.Context, name string, n int64) (last int64, learned bool, err error) {
	nb := c.numbering.lookup(name)
	filter := counterFilter(name, math.MaxInt64-n, notDraining, plain(nb))
	update := bson.D{{Key: "$inc", Value: bson.D{{Key: fieldSeq, Value: n}}}}
	var doc bson.Raw
	var sent time.Time
	err = c.retry.do(ctx, func() (bool, error) {
		var err error
		sent = time.Now()
		doc, err = c.coll.FindOneAndUpdate(ctx, filter, update, reserveOptions).Raw()
		if !mongo.IsDuplicateKeyError(err) {
			return false, err
		}
		// The upsert collided with an existing document. Either a concurrent first
		// call created it, or it holds too large a value for the filter to match,
		// or it is leaving cached mode. Or it is not a counter seqd can use, which
		// the filter leaves alone too.
		cur, err := readCounter(ctx, c.coll, name)
		switch {
		case err == nil && cur.plainMissed(name, nb):
			// A period, another format, or a numbering seqd would not have
			// written (ErrInvalidCounter), which the filter left alone.
			if _, err := c.numbering.learn(name, cur); err != nil {
				return false, err
			}
			return false, errRelearn
		case err == nil && cur.draining:
			d, err := c.drainSeen(ctx, name, cur)
			if err != nil {
				return false, err
			}
			return false, d
		case err == nil && cur.seq > math.MaxInt64-n:
			return false, fmt.Errorf("%w: at %d, %d requested", ErrExhausted, cur.seq, n)
		case err != nil && !errors.Is(err, ErrNotFound):
			return false, err
		}
		return true, nil
	})
	if err != nil {
		return 0, false, err
	}
	s, err := parseCounter(name, doc)
	if err != nil {
		return 0, false, err // bounds that fail the one check the filter cannot make: see counterFilter
	}
	if s.mode == seqd.ModeCached {
		learned = c.cache.learn(c, name, s, sent)
	}
	nb, err = c.numbering.learn(name, s)
	if err != nil {
		return 0, false, err
	}
	if nb != nil {
		setNote(ctx, &numberNote{nb: nb})
	}
	return s.seq, learned, nil
}

// reserveBatch is reserve as the coalescer calls it. A counter always gets all n.
//
// If name is served from blocks by now, it writes nothing and sends the callers
// to the blocks: their write comes after the name's first block fetch, so its
// values would lie above a block this Counter is still serving from.
//
// A write made alone (NoCoalesce, or in a session) is not queued before that
// fetch: if the name came to be served from blocks while it was in flight, and
// not by this write's own answer, its values may lie above the first block. They
// become a gap, and the callers are sent to the blocks.
func (c *Counter) reserveBatch(ctx context.Context, name string, n int64, _ func(int, int64) any) (first, count int64, err error) {
	if c.cache.lookup(name) != nil {
		return 0, 0, errUseBlocks
	}
	var last int64
	var learned bool
	for range maxPeriodTries {
		if nb := c.numbering.lookup(name); nb != nil && nb.spec.Unit != period.None {
			first, err := c.reservePeriodic(ctx, name, n, nb)
			if errors.Is(err, errRelearn) {
				c.coalescer.forget(name) // what writes proved was of another numbering
				continue
			}
			return first, n, err
		}
		last, learned, err = c.reserve(ctx, name, n)
		if !errors.Is(err, errRelearn) {
			break
		}
		c.coalescer.forget(name)
	}
	if errors.Is(err, errRelearn) {
		return 0, 0, fmt.Errorf("%w: the numbering changed %d times during one write", ErrContention, maxPeriodTries)
	}
	if err == nil && !learned && c.coalescer.writesAlone(ctx) && c.cache.lookup(name) != nil {
		return 0, 0, errUseBlocks
	}
	return last - n + 1, n, err
}

// Current returns name as stored: its last value handed out and its mode.
func (c *Counter) Current(ctx context.Context, name string) (Sequence, error) {
	if !ValidName(name) {
		return Sequence{}, invalidName("current", name)
	}
	if err := c.ready(ctx, "current", name); err != nil {
		return Sequence{}, err
	}
	s, err := readCounter(ctx, c.peek, name)
	if err != nil {
		return Sequence{}, wrap(err, "current", name)
	}
	seq, err := s.sequence(name)
	if err != nil {
		return Sequence{}, wrap(err, "current", name)
	}
	return seq, nil
}

// readCounter reads name's counter document from coll.
func readCounter(ctx context.Context, coll *mongo.Collection, name string) (counterState, error) {
	doc, err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: name}}).Raw()
	if errors.Is(err, mongo.ErrNoDocuments) {
		return counterState{}, ErrNotFound
	}
	if err != nil {
		return counterState{}, err
	}
	return parseCounter(name, doc)
}

// Set moves name to value, creating the counter document if needed.
//
// Without force it is one atomic $max, so it never lowers the value, even when it
// races with Next. The document from before the update shows whether the call
// asked to move backwards. With force it is a plain $set.
//
// On a sequence with a period it sets the value of the current period, the
// one the clock reads or a newer one stored: see SetNumberingValue.
func (c *Counter) Set(ctx context.Context, name string, value int64, force bool) error {
	if err := checkSet(name, value); err != nil {
		return err
	}
	if err := c.ready(ctx, "set", name); err != nil {
		return err
	}
	err := c.set(ctx, name, value, force)
	if err == nil && force {
		c.coalescer.forget(name)
	}
	return wrap(err, "set", name)
}

func (c *Counter) set(ctx context.Context, name string, value int64, force bool) error {
	write := func(nb *numbered) error {
		// plain: a sequence with a period sets the value of a period
		// (writeNumbering); one with a numbering seqd would not have written
		// is not changed.
		filter := counterFilter(name, math.MaxInt64, plain(nb))
		// floor keeps a give-back of a block reserved before the Set from
		// moving seq below value, and forced one from moving it at all: a
		// forced Set may move seq back to where such a block ends. See giveBack.
		if force {
			update := bson.D{
				{Key: "$set", Value: bson.D{{Key: fieldSeq, Value: value}, {Key: fieldFloor, Value: value}}},
				{Key: "$inc", Value: bson.D{{Key: fieldForced, Value: int64(1)}}},
			}
			_, err := c.coll.UpdateOne(ctx, filter, update, options.UpdateOne().SetUpsert(true))
			return err
		}
		var before counterDoc
		update := bson.D{{Key: "$max", Value: bson.D{{Key: fieldSeq, Value: value}, {Key: fieldFloor, Value: value}}}}
		err := c.coll.FindOneAndUpdate(ctx, filter, update, raiseOptions).Decode(&before)
		switch {
		case errors.Is(err, mongo.ErrNoDocuments):
			return nil // the upsert created the document
		case err == nil && before.Seq > value:
			return fmt.Errorf("%w: at %d, asked for %d", ErrBackwards, before.Seq, value)
		}
		return err
	}
	return c.retry.do(ctx, func() (bool, error) {
		var cur counterState
		for range maxPeriodTries {
			nb := c.numbering.lookup(name)
			err := write(nb)
			if !mongo.IsDuplicateKeyError(err) {
				return false, err
			}
			// The document is one the filter refuses: a periodic sequence's,
			// one of another numbering or shape, or one a concurrent call
			// created.
			cur, err = readCounter(ctx, c.coll, name)
			switch {
			case errors.Is(err, ErrNotFound):
				return true, nil
			case err != nil:
				return false, err // a document of another shape, or the read failed
			case cur.numbering.Period == "" && !cur.plainMissed(name, nb):
				return true, nil // created since: a duplicate key retry
			case cur.numbering.Period == "":
				// A format other than the one learned: learn it
				// (ErrInvalidCounter for one seqd would not have written) and
				// write again, which is no duplicate key retry.
				if _, err := c.numbering.learn(name, cur); err != nil {
					return false, err
				}
				continue
			}
			break
		}
		if cur.numbering.Period == "" {
			return false, fmt.Errorf("%w: the numbering changed %d times during one write", ErrContention, maxPeriodTries)
		}
		nb, err := c.numbering.learn(name, cur)
		if err != nil {
			return false, err
		}
		// The value of the current period, as SetNumberingValue sets it with
		// the numbering the document has.
		return c.writeNumbering(ctx, name, cur, true, nb, &valueSet{value: value, force: force})
	})
}

// List returns the page of counters that opts selects, in order of name, with one
// find (listQuery): a range of _id (a prefix becomes $gte and $lt), sorted by _id
// and limited to one more than the page, the counter's fields projected. mongod
// answers it from the _id index, reading no more than the page. A document that
// seqd cannot use is listed with Err set: one whose fields parseCounter refuses
// or whose numbering seqd would not have stored, and one whose _id is a string
// but no name, which another client wrote; an _id of another type is not on a
// page.
func (c *Counter) List(ctx context.Context, opts ListOptions) (Page, error) {
	if err := opts.Check(); err != nil {
		return Page{}, err
	}
	if err := c.ready(ctx, "list", ""); err != nil {
		return Page{}, err
	}
	filter, find := listQuery(opts)
	cur, err := c.peek.Find(ctx, filter, find)
	if err != nil {
		return Page{}, wrap(err, "list", "")
	}
	var docs []bson.Raw
	if err := cur.All(ctx, &docs); err != nil {
		return Page{}, wrap(err, "list", "")
	}
	seqs := make([]Sequence, 0, len(docs))
	for _, d := range docs {
		name, ok := d.Lookup("_id").StringValueOK()
		if !ok {
			continue // the filter's string bounds keep these out
		}
		s, err := parseCounter(name, d)
		if err == nil && !ValidName(name) {
			err = fmt.Errorf("%w: the _id %q is not a sequence name (1 to 64 characters of A-Z a-z 0-9 _ . -, starting with a letter or digit)",
				ErrInvalidCounter, cut(name, 40))
		}
		var seq Sequence
		if err == nil {
			seq, err = s.sequence(name)
		}
		if err != nil {
			seqs = append(seqs, Sequence{Name: name, Err: wrap(err, "list", name)})
			continue
		}
		seqs = append(seqs, seq)
	}
	return opts.PageOf(seqs), nil
}
