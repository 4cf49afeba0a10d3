package counters

import (
	"context"
	"errors"
	"fmt"
	"math"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Counter is the "counter" strategy: one document {_id: name, seq: last} per
// sequence, advanced by an atomic $inc. See the package comment.
type Counter struct {
	coll       *mongo.Collection
	maxRetries int
	observer   Observer
	coalescer  *coalescer // nil with Options.NoCoalesce
}

var _ Sequencer = (*Counter)(nil)

// NewCounter returns a Counter that keeps its documents in db.
func NewCounter(db *mongo.Database, opts Options) *Counter {
	opts = opts.withDefaults()
	c := &Counter{
		coll:       db.Collection(opts.Collection, opts.collectionOptions()),
		maxRetries: opts.MaxRetries,
		observer:   opts.Observer,
	}
	if !opts.NoCoalesce {
		c.coalescer = newCoalescer(c.reserve, opts.WriteTimeout, opts.Observer.Batch)
	}
	return c
}

// counterDoc is a counter document.
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
	if !ValidName(name) {
		return 0, invalidName("next", name)
	}
	r, err := c.next(ctx, name, 1)
	return r.Last, err
}

// NextN reserves n contiguous values of name.
func (c *Counter) NextN(ctx context.Context, name string, n int64) (Range, error) {
	if !ValidName(name) {
		return Range{}, invalidName("next", name)
	}
	if n < 1 {
		return Range{}, fmt.Errorf("counters: next %d of %q: %w", n, name, ErrInvalidCount)
	}
	return c.next(ctx, name, n)
}

// next reserves n values of a valid name, through the coalescer unless it is off.
//
// A caller inside a session or transaction writes on its own: its write belongs to
// its transaction and must not carry other callers' values.
func (c *Counter) next(ctx context.Context, name string, n int64) (Range, error) {
	if c.coalescer != nil && mongo.SessionFromContext(ctx) == nil {
		r, err := c.coalescer.do(ctx, name, n)
		return r, wrap(err, "next", name)
	}
	last, err := c.reserve(ctx, name, n)
	if err != nil {
		return Range{}, wrap(err, "next", name)
	}
	c.observer.Batch(1, n)
	return Range{First: last - n + 1, Last: last}, nil
}

// reserve is the round trip behind Next and NextN: it adds n to name's counter and
// returns the new value. It retries the upsert race on a new name and tells
// exhaustion apart from that race; see the package comment.
func (c *Counter) reserve(ctx context.Context, name string, n int64) (int64, error) {
	filter := bson.D{
		{Key: "_id", Value: name},
		{Key: "seq", Value: bson.D{{Key: "$lte", Value: math.MaxInt64 - n}}},
	}
	update := bson.D{{Key: "$inc", Value: bson.D{{Key: "seq", Value: n}}}}
	for attempt := 0; ; attempt++ {
		var doc counterDoc
		err := c.coll.FindOneAndUpdate(ctx, filter, update, reserveOptions).Decode(&doc)
		if err == nil {
			return doc.Seq, nil
		}
		if !mongo.IsDuplicateKeyError(err) {
			return 0, err
		}
		// The upsert collided with an existing document. Either a concurrent first
		// call created it, or it holds too large a value for the filter to match.
		cur, err := c.current(ctx, name)
		switch {
		case err == nil && cur > math.MaxInt64-n:
			return 0, fmt.Errorf("%w: at %d, %d requested", ErrExhausted, cur, n)
		case err != nil && !errors.Is(err, ErrNotFound):
			return 0, err
		}
		if attempt >= c.maxRetries {
			return 0, fmt.Errorf("%w: %d duplicate key retries", ErrContention, attempt)
		}
		c.observer.Retry(StrategyCounter)
		if err := backoff(ctx, attempt); err != nil {
			return 0, err
		}
	}
}

// Current returns the last value handed out for name.
func (c *Counter) Current(ctx context.Context, name string) (int64, error) {
	if !ValidName(name) {
		return 0, invalidName("current", name)
	}
	v, err := c.current(ctx, name)
	return v, wrap(err, "current", name)
}

func (c *Counter) current(ctx context.Context, name string) (int64, error) {
	var doc counterDoc
	err := c.coll.FindOne(ctx, bson.D{{Key: "_id", Value: name}}).Decode(&doc)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return 0, ErrNotFound
	}
	return doc.Seq, err
}

// Set moves name to value, creating the counter document if needed.
//
// Without force it is one atomic $max, so it never lowers the value, even when it
// races with Next. The document from before the update shows whether the call
// asked to move backwards. With force it is a plain $set.
func (c *Counter) Set(ctx context.Context, name string, value int64, force bool) error {
	if !ValidName(name) {
		return invalidName("set", name)
	}
	if value < 0 {
		return fmt.Errorf("counters: set %q to %d: %w", name, value, ErrInvalidValue)
	}
	return wrap(c.set(ctx, name, value, force), "set", name)
}

func (c *Counter) set(ctx context.Context, name string, value int64, force bool) error {
	filter := bson.D{{Key: "_id", Value: name}}
	if force {
		update := bson.D{{Key: "$set", Value: bson.D{{Key: "seq", Value: value}}}}
		_, err := c.coll.UpdateOne(ctx, filter, update, options.UpdateOne().SetUpsert(true))
		return err
	}
	update := bson.D{{Key: "$max", Value: bson.D{{Key: "seq", Value: value}}}}
	for attempt := 0; ; attempt++ {
		var before counterDoc
		err := c.coll.FindOneAndUpdate(ctx, filter, update, raiseOptions).Decode(&before)
		switch {
		case errors.Is(err, mongo.ErrNoDocuments):
			return nil // the upsert created the document
		case err == nil && before.Seq > value:
			return fmt.Errorf("%w: at %d, asked for %d", ErrBackwards, before.Seq, value)
		case err == nil:
			return nil
		case !mongo.IsDuplicateKeyError(err):
			return err
		}
		// A concurrent call created the document. mongod retries such an upsert
		// itself, but not every server does.
		if attempt >= c.maxRetries {
			return fmt.Errorf("%w: %d duplicate key retries", ErrContention, attempt)
		}
		c.observer.Retry(StrategyCounter)
		if err := backoff(ctx, attempt); err != nil {
			return err
		}
	}
}

// List returns every counter, ordered by name.
func (c *Counter) List(ctx context.Context) ([]Sequence, error) {
	cur, err := c.coll.Find(ctx, bson.D{}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return nil, wrap(err, "list", "")
	}
	var docs []counterDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, wrap(err, "list", "")
	}
	seqs := make([]Sequence, 0, len(docs))
	for _, d := range docs {
		seqs = append(seqs, Sequence{Name: d.Name, Value: d.Seq})
	}
	return seqs, nil
}
