package counters

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/seqd/seqd"
)

// Counter is the "counter" strategy: one document {_id: name, seq: last} per
// sequence, advanced by an atomic $inc. See the package comment.
type Counter struct {
	coll      *mongo.Collection
	peek      *mongo.Collection // coll, read with read concern majority
	retry     retrier
	coalescer *coalescer
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
	}
	c.coalescer = newCoalescer(c.reserveBatch, opts.Observer.Batch, opts)
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
	r, err := c.NextN(ctx, name, 1)
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
	r, err := c.coalescer.do(ctx, name, n, nil)
	return r, wrap(err, "next", name)
}

// reserve is the round trip behind Next and NextN: it adds n to name's counter and
// returns the new value. It retries the upsert race on a new name and tells
// exhaustion apart from that race; see the package comment.
func (c *Counter) reserve(ctx context.Context, name string, n int64) (int64, error) {
	filter := counterFilter(name, math.MaxInt64-n)
	update := bson.D{{Key: "$inc", Value: bson.D{{Key: "seq", Value: n}}}}
	var doc counterDoc
	err := c.retry.do(ctx, func() (bool, error) {
		err := c.coll.FindOneAndUpdate(ctx, filter, update, reserveOptions).Decode(&doc)
		if !mongo.IsDuplicateKeyError(err) {
			return false, err
		}
		// The upsert collided with an existing document. Either a concurrent first
		// call created it, or it holds too large a value for the filter to match.
		// Or it is not a counter seqd can use, which the filter leaves alone too.
		cur, err := readCounter(ctx, c.coll, name)
		switch {
		case err == nil && cur > math.MaxInt64-n:
			return false, fmt.Errorf("%w: at %d, %d requested", ErrExhausted, cur, n)
		case err != nil && !errors.Is(err, ErrNotFound):
			return false, err
		}
		return true, nil
	})
	if err != nil {
		return 0, err
	}
	return doc.Seq, nil
}

// reserveBatch is reserve as the coalescer calls it. A counter always gets all n.
func (c *Counter) reserveBatch(ctx context.Context, name string, n int64, _ func(int, int64) any) (first, count int64, err error) {
	last, err := c.reserve(ctx, name, n)
	return last - n + 1, n, err
}

// Current returns name as stored: its last value handed out and its mode.
func (c *Counter) Current(ctx context.Context, name string) (Sequence, error) {
	if !ValidName(name) {
		return Sequence{}, invalidName("current", name)
	}
	v, err := readCounter(ctx, c.peek, name)
	if err != nil {
		return Sequence{}, wrap(err, "current", name)
	}
	return Sequence{Name: name, Value: v, Mode: seqd.ModeStrict}, nil
}

// readCounter reads name's counter from coll.
func readCounter(ctx context.Context, coll *mongo.Collection, name string) (int64, error) {
	doc, err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: name}}).Raw()
	if errors.Is(err, mongo.ErrNoDocuments) {
		return 0, ErrNotFound
	}
	if err != nil {
		return 0, err
	}
	return counterValue(name, doc)
}

// counterFilter matches name's counter document if its seq is a counter seqd can
// use, at most max. Every write to a counter document carries it, so that no write
// changes a document of another shape: MongoDB compares numbers across types, so
// without the $type a double or a negative seq would match, and $inc would go on
// from it. When the filter matches nothing, an upsert collides with the document
// (E11000), and reading it tells why.
//
// The conditions on seq sit inside $and: an upsert then copies nothing of them into
// the document it creates. mongod copies only equalities either way, but FerretDB
// 1.x copies a field's whole operator document, {$gte: …}, as the new seq.
func counterFilter(name string, max int64) bson.D {
	return bson.D{
		{Key: "_id", Value: name},
		{Key: "$and", Value: bson.A{bson.D{{Key: "seq", Value: bson.D{
			{Key: "$type", Value: bson.A{"int", "long"}},
			{Key: "$gte", Value: int64(0)},
			{Key: "$lte", Value: max},
		}}}}},
	}
}

// counterValue returns the seq of name's counter document, or an error wrapping
// ErrInvalidCounter that names the sequence and says what was found instead of an
// integer from 0 to math.MaxInt64. Doubles are refused even when whole: above 2^53 they cannot count
// on by one, and $inc on one stays a double.
func counterValue(name string, doc bson.Raw) (int64, error) {
	v, err := doc.LookupErr("seq")
	if err != nil {
		return 0, fmt.Errorf("%w: the counter document of %q has no seq field", ErrInvalidCounter, cut(name, 40))
	}
	switch v.Type {
	case bson.TypeInt32, bson.TypeInt64:
		if n, _ := v.AsInt64OK(); n >= 0 {
			return n, nil
		}
	}
	return 0, fmt.Errorf("%w: the seq of %q is %s %s, want an integer from 0 to %d (int32 or int64)",
		ErrInvalidCounter, cut(name, 40), bsonTypeName(v.Type), valueText(v), int64(math.MaxInt64))
}

// bsonTypeName names t with an article, as MongoDB's $type aliases spell it.
func bsonTypeName(t bson.Type) string {
	switch t {
	case bson.TypeDouble:
		return "a double"
	case bson.TypeInt32:
		return "an int"
	case bson.TypeInt64:
		return "a long"
	case bson.TypeDecimal128:
		return "a decimal"
	case bson.TypeString:
		return "a string"
	}
	return "of BSON type " + t.String()
}

// valueText shows a stored value as a person would write it (41.5, -4, "x"),
// not in extended JSON; at most about 40 bytes of it.
func valueText(v bson.RawValue) string {
	switch v.Type {
	case bson.TypeDouble:
		return strconv.FormatFloat(v.Double(), 'g', -1, 64)
	case bson.TypeInt32, bson.TypeInt64:
		n, _ := v.AsInt64OK()
		return strconv.FormatInt(n, 10)
	case bson.TypeString:
		return strconv.Quote(cut(v.StringValue(), 40))
	}
	return cut(v.String(), 40)
}

// cut shortens s to at most n bytes, marking the cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// Set moves name to value, creating the counter document if needed.
//
// Without force it is one atomic $max, so it never lowers the value, even when it
// races with Next. The document from before the update shows whether the call
// asked to move backwards. With force it is a plain $set.
func (c *Counter) Set(ctx context.Context, name string, value int64, force bool) error {
	if err := checkSet(name, value); err != nil {
		return err
	}
	err := c.set(ctx, name, value, force)
	if err == nil && force {
		c.coalescer.forget(name)
	}
	return wrap(err, "set", name)
}

func (c *Counter) set(ctx context.Context, name string, value int64, force bool) error {
	filter := counterFilter(name, math.MaxInt64)
	return c.retry.do(ctx, func() (bool, error) {
		var err error
		if force {
			update := bson.D{{Key: "$set", Value: bson.D{{Key: "seq", Value: value}}}}
			_, err = c.coll.UpdateOne(ctx, filter, update, options.UpdateOne().SetUpsert(true))
		} else {
			var before counterDoc
			update := bson.D{{Key: "$max", Value: bson.D{{Key: "seq", Value: value}}}}
			err = c.coll.FindOneAndUpdate(ctx, filter, update, raiseOptions).Decode(&before)
			switch {
			case errors.Is(err, mongo.ErrNoDocuments):
				return false, nil // the upsert created the document
			case err == nil && before.Seq > value:
				return false, fmt.Errorf("%w: at %d, asked for %d", ErrBackwards, before.Seq, value)
			}
		}
		if !mongo.IsDuplicateKeyError(err) {
			return false, err
		}
		// Either the document is one the filter refuses, or a concurrent call
		// created it. mongod retries such an upsert itself, but not every server
		// does.
		if _, err := readCounter(ctx, c.coll, name); err != nil && !errors.Is(err, ErrNotFound) {
			return false, err // a document of another shape, or the read failed
		}
		return true, nil
	})
}

// List returns every counter, ordered by name.
func (c *Counter) List(ctx context.Context) ([]Sequence, error) {
	cur, err := c.peek.Find(ctx, bson.D{}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return nil, wrap(err, "list", "")
	}
	var docs []bson.Raw
	if err := cur.All(ctx, &docs); err != nil {
		return nil, wrap(err, "list", "")
	}
	seqs := make([]Sequence, 0, len(docs))
	for _, d := range docs {
		name, ok := d.Lookup("_id").StringValueOK()
		if !ok {
			continue // not a sequence: every name is a string
		}
		v, err := counterValue(name, d)
		seqs = append(seqs, Sequence{Name: name, Value: v, Mode: seqd.ModeStrict, Err: wrap(err, "list", name)})
	}
	return seqs, nil
}
