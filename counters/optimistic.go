package counters

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/seqd/seqd"
)

// Optimistic is the "optimistic" strategy. It inserts max(_id)+1 and retries on a
// duplicate key, either into an application's collection (Insert) or into a
// sequence's ledger collection LedgerPrefix+name (Next). See the package comment
// for when it fits.
type Optimistic struct {
	db        *mongo.Database
	collOpts  *options.CollectionOptionsBuilder
	peekOpts  *options.CollectionOptionsBuilder // for Current and List
	retry     retrier
	now       func() time.Time
	coalescer *coalescer // by collection
}

var _ Sequencer = (*Optimistic)(nil)

// NewOptimistic returns an Optimistic that works in db.
func NewOptimistic(db *mongo.Database, opts Options) *Optimistic {
	opts = opts.withDefaults()
	o := &Optimistic{
		db:       db,
		collOpts: opts.collectionOptions(),
		peekOpts: opts.peekOptions(),
		retry:    opts.retrier(StrategyOptimistic),
		now:      time.Now,
	}
	o.coalescer = newCoalescer(o.insertBatch, nil, opts, 1)
	o.coalescer.maxCallers = maxInsertBatch
	return o
}

// ledgerEntry is one value that a sequence handed out. Set marks an entry that Set
// wrote and no caller received.
type ledgerEntry struct {
	Value    int64     `bson:"_id"`
	IssuedAt time.Time `bson:"issuedAt"`
	Set      bool      `bson:"set,omitempty"`
}

// Strategy returns StrategyOptimistic.
func (o *Optimistic) Strategy() string { return StrategyOptimistic }

// Insert inserts doc into collection with _id set to the collection's largest
// integer _id plus one (1 in an empty collection), and returns that _id.
//
// doc may be anything that marshals to a BSON document: bson.D, bson.M, a struct or
// a pointer to one. Insert replaces any _id that doc has and leaves doc itself
// unchanged. Only numeric _ids of 0 or more count towards the maximum, so the
// collection may also hold documents with other _ids. collection must be a valid
// sequence name; otherwise the error wraps ErrInvalidName. If doc is not a
// document, the error wraps ErrInvalidValue.
func (o *Optimistic) Insert(ctx context.Context, collection string, doc any) (int64, error) {
	if !ValidName(collection) {
		return 0, invalidName("insert into", collection)
	}
	if err := refuseTransaction(ctx, "insert into", collection); err != nil {
		return 0, err
	}
	elems, err := documentElements(doc)
	if err != nil {
		return 0, fmt.Errorf("counters: insert into %q: %w: %w", collection, ErrInvalidValue, err)
	}
	withID := make(bson.D, 1, len(elems)+1)
	withID[0].Key = "_id"
	for _, e := range elems {
		if e.Key() != "_id" {
			withID = append(withID, bson.E{Key: e.Key(), Value: e.Value()})
		}
	}
	id, err := o.insert(ctx, collection, func(id int64) any {
		withID[0].Value = id
		return withID
	})
	return id, wrap(err, "insert into", collection)
}

// documentElements marshals doc and returns its elements. They are raw values, so
// every type survives the copy exactly.
func documentElements(doc any) ([]bson.RawElement, error) {
	raw, err := bson.Marshal(doc)
	if err != nil {
		return nil, err
	}
	return bson.Raw(raw).Elements()
}

// insert inserts doc(max+1) into coll and returns the _id it got.
func (o *Optimistic) insert(ctx context.Context, coll string, doc func(id int64) any) (int64, error) {
	r, err := o.coalescer.do(ctx, coll, 1, doc)
	return r.Last, err
}

// maxInsertBatch bounds the documents of one insertMany. An ordered insertMany
// stops at its first error on mongod, so the documents after a duplicate key are
// not inserted and their callers can be queued again. FerretDB 1.x (the
// development store) inserts in chunks of 100 and goes on with the next chunk
// after an error in one: a batch of at most 100 keeps to mongod's semantics there.
const maxInsertBatch = 100

// insertBatch is the optimistic loop for n documents, the batch of callers queued
// behind the last write: it inserts build(i, max+1+i) for i < n into coll with one
// ordered insertMany, and returns the ids it got. On a duplicate key in the first
// document it reads the maximum again and retries; past the first, the documents
// before it are inserted and it returns those, so that the coalescer serves their
// callers and queues the rest again.
func (o *Optimistic) insertBatch(ctx context.Context, coll string, n int64, build func(i int, id int64) any) (first, count int64, err error) {
	c := o.db.Collection(coll, o.collOpts)
	last, _, err := maxID(ctx, c)
	if err != nil {
		return 0, 0, err
	}
	err = o.retry.do(ctx, func() (bool, error) {
		if last == math.MaxInt64 {
			return false, fmt.Errorf("%w: at %d", ErrExhausted, last)
		}
		first, count = last+1, min(n, math.MaxInt64-last) // those that fit
		inserted, err := insertOrdered(ctx, c, first, count, build)
		switch {
		case err == nil:
			return false, nil
		case writeConcernFailed(err):
			// Some documents may be in: retrying could insert them twice.
			return false, err
		case inserted > 0:
			count = inserted
			return false, nil
		case documentRejected(err):
			// The server refused the first caller's document itself (a validator,
			// a key it does not take): that caller's error, not the others'.
			return false, &docError{err}
		case !mongo.IsDuplicateKeyError(err):
			return false, err
		}
		dupErr := err
		if last, _, err = maxID(ctx, c); err != nil {
			return false, err
		}
		if last < first {
			// Nobody holds first, so the duplicate key is in another unique index
			// of the application's, and the first caller's document is at fault.
			// Retrying would not help it.
			return false, &docError{dupErr}
		}
		return true, nil
	})
	if err != nil {
		return 0, 0, err
	}
	return first, count, nil
}

// insertOrdered inserts build(i, first+i) for i < count, in order, and returns how
// many documents went in before the first that failed. It knows that number only
// from the server's write errors: after any other error it reports none.
func insertOrdered(ctx context.Context, c *mongo.Collection, first, count int64, build func(i int, id int64) any) (int64, error) {
	if count == 1 {
		_, err := c.InsertOne(ctx, build(0, first))
		if err != nil {
			return 0, err
		}
		return 1, nil
	}
	docs := make([]any, count)
	for i := range docs {
		docs[i] = build(i, first+int64(i))
	}
	_, err := c.InsertMany(ctx, docs, options.InsertMany().SetOrdered(true))
	if err == nil {
		return count, nil
	}
	var bwe mongo.BulkWriteException
	if errors.As(err, &bwe) && bwe.WriteConcernError == nil && len(bwe.WriteErrors) > 0 {
		return int64(bwe.WriteErrors[0].Index), err
	}
	return 0, err
}

// documentRejected reports a write error on the first document of a write, other
// than a duplicate key: the document itself is at fault.
func documentRejected(err error) bool {
	var we mongo.WriteException
	if errors.As(err, &we) && len(we.WriteErrors) > 0 {
		return we.WriteErrors[0].Index == 0 && we.WriteErrors[0].Code != 11000
	}
	var bwe mongo.BulkWriteException
	if errors.As(err, &bwe) && len(bwe.WriteErrors) > 0 {
		return bwe.WriteErrors[0].Index == 0 && bwe.WriteErrors[0].Code != 11000
	}
	return false
}

var maxIDOptions = options.FindOne().
	SetSort(bson.D{{Key: "_id", Value: -1}}).
	SetProjection(bson.D{{Key: "_id", Value: 1}})

// maxID returns the largest numeric _id of 0 or more in coll, rounded down to a
// whole number. found is false if there is none, and max is then 0. The range
// filter matches numbers only (MongoDB compares values of one type class), so
// ObjectIds or strings in an application's collection do not count. Every
// numeric type counts (int, long, double, decimal), and one that is not whole,
// such as 7.5, counts as 7, so that max+1 never equals an _id already there: the
// unique index compares numbers by value, whatever their types. A largest _id
// above math.MaxInt64 (a double or a decimal) returns an error wrapping
// ErrInvalidCounter that names it; nothing is written.
func maxID(ctx context.Context, coll *mongo.Collection) (max int64, found bool, err error) {
	var doc struct {
		ID bson.RawValue `bson:"_id"`
	}
	err = coll.FindOne(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$gte", Value: int64(0)}}}}, maxIDOptions).Decode(&doc)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	if n, ok := wholePart(doc.ID); ok {
		return n, true, nil
	}
	return 0, false, fmt.Errorf("%w: the largest _id in %s is %s %s; seqd continues from a number from 0 to %d",
		ErrInvalidCounter, coll.Name(), bsonTypeName(doc.ID.Type), valueText(doc.ID), int64(math.MaxInt64))
}

// wholePart returns v rounded down, if v is a number from 0 up to
// math.MaxInt64 (a double below 2^63), of any numeric type.
func wholePart(v bson.RawValue) (int64, bool) {
	switch v.Type {
	case bson.TypeInt32, bson.TypeInt64:
		n, _ := v.AsInt64OK()
		return n, n >= 0
	case bson.TypeDouble:
		if f := v.Double(); f >= 0 && f < math.MaxInt64 { // float64(MaxInt64) is 2^63
			return int64(f), true
		}
	case bson.TypeDecimal128:
		d := v.Decimal128()
		if d.IsNaN() || d.IsInf() != 0 {
			return 0, false
		}
		digits, exp, err := d.BigInt() // d = digits × 10^exp
		if err != nil || digits.Sign() < 0 {
			return 0, false
		}
		if exp < 0 {
			digits.Quo(digits, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-exp)), nil))
		} else if exp > 0 && digits.Sign() > 0 {
			if exp > 18 { // 10^19 > MaxInt64
				return 0, false
			}
			digits.Mul(digits, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(exp)), nil))
		}
		if digits.IsInt64() {
			return digits.Int64(), true
		}
	}
	return 0, false
}

func (o *Optimistic) ledger(name string) *mongo.Collection {
	return o.db.Collection(LedgerPrefix+name, o.collOpts)
}

// Next inserts the next ledger entry of name and returns its value.
func (o *Optimistic) Next(ctx context.Context, name string) (int64, error) {
	if !ValidName(name) {
		return 0, invalidName("next", name)
	}
	if err := refuseTransaction(ctx, "next", name); err != nil {
		return 0, err
	}
	v, err := o.insert(ctx, LedgerPrefix+name, func(id int64) any {
		return ledgerEntry{Value: id, IssuedAt: o.now()}
	})
	return v, wrap(err, "next", name)
}

// NextN reserves one value when n is 1. The ledger holds one document per value,
// so for any other n it returns ErrInvalidCount.
func (o *Optimistic) NextN(ctx context.Context, name string, n int64) (Range, error) {
	if !ValidName(name) {
		return Range{}, invalidName("next", name)
	}
	if n != 1 {
		return Range{}, fmt.Errorf("counters: next %d of %q: %w (the %s strategy reserves one value at a time)",
			n, name, ErrInvalidCount, StrategyOptimistic)
	}
	v, err := o.Next(ctx, name)
	return Range{First: v, Last: v}, err
}

// Current returns name with the largest value in its ledger. An optimistic
// sequence is always strict.
func (o *Optimistic) Current(ctx context.Context, name string) (Sequence, error) {
	if !ValidName(name) {
		return Sequence{}, invalidName("current", name)
	}
	if err := refuseTransaction(ctx, "current", name); err != nil {
		return Sequence{}, err
	}
	v, found, err := maxID(ctx, o.db.Collection(LedgerPrefix+name, o.peekOpts))
	if err == nil && !found {
		err = ErrNotFound
	}
	if err != nil {
		return Sequence{}, wrap(err, "current", name)
	}
	return Sequence{Name: name, Value: v, Mode: seqd.ModeStrict}, nil
}

// Set moves name to value. Moving forward inserts a ledger entry with _id value,
// marked set: true. Setting the current value does nothing. Moving backwards with
// force deletes the ledger entries above value, so the ledger no longer records
// that those values were issued, and they will be issued again.
func (o *Optimistic) Set(ctx context.Context, name string, value int64, force bool) error {
	if err := checkSet(name, value); err != nil {
		return err
	}
	if err := refuseTransaction(ctx, "set", name); err != nil {
		return err
	}
	err := o.set(ctx, name, value, force)
	if err == nil && force {
		o.coalescer.forget(o.ledger(name).Name())
	}
	return wrap(err, "set", name)
}

func (o *Optimistic) set(ctx context.Context, name string, value int64, force bool) error {
	coll := o.ledger(name)
	mark := ledgerEntry{Value: value, IssuedAt: o.now(), Set: true}
	return o.retry.do(ctx, func() (bool, error) {
		cur, found, err := maxID(ctx, coll)
		if err != nil {
			return false, err
		}
		switch {
		case found && cur == value:
			return false, nil
		case found && cur > value && !force:
			return false, fmt.Errorf("%w: at %d, asked for %d", ErrBackwards, cur, value)
		case found && cur > value:
			above := bson.D{{Key: "_id", Value: bson.D{{Key: "$gt", Value: value}}}}
			if _, err := coll.DeleteMany(ctx, above); err != nil {
				return false, err
			}
			_, err := coll.InsertOne(ctx, mark)
			if mongo.IsDuplicateKeyError(err) {
				return false, nil // value itself was issued and stays in the ledger
			}
			return false, err
		}
		// A duplicate key: a concurrent Next issued value. Look again: we are
		// either there or past it.
		_, err = coll.InsertOne(ctx, mark)
		return mongo.IsDuplicateKeyError(err), err
	})
}

// List returns the page of sequences with a non-empty ledger that opts selects, in
// order of name. listCollections has neither sort nor limit: it names every
// ledger in the range (names, not documents), and List then reads the largest
// _id of one ledger after another, in order, until it has one more sequence than
// the page. A collection whose name after LedgerPrefix is no name is not a
// ledger, and is left out.
func (o *Optimistic) List(ctx context.Context, opts ListOptions) (Page, error) {
	if err := opts.Check(); err != nil {
		return Page{}, err
	}
	if err := refuseTransaction(ctx, "list", ""); err != nil {
		return Page{}, err
	}
	names, err := primaryDatabase(o.db).ListCollectionNames(ctx, bson.D{{Key: "name", Value: opts.nameRange(LedgerPrefix)}})
	if err != nil {
		return Page{}, wrap(err, "list", "")
	}
	slices.Sort(names)
	seqs := []Sequence{}
	for _, coll := range names {
		name, ok := strings.CutPrefix(coll, LedgerPrefix)
		if !ok || !opts.Match(name) || !ValidName(name) {
			continue
		}
		if len(seqs) > opts.limit() {
			break
		}
		v, found, err := maxID(ctx, o.db.Collection(coll, o.peekOpts))
		switch {
		case errors.Is(err, ErrInvalidCounter):
			seqs = append(seqs, Sequence{Name: name, Err: wrap(err, "list", name)})
		case err != nil:
			return Page{}, wrap(err, "list", "")
		case found:
			seqs = append(seqs, Sequence{Name: name, Value: v, Mode: seqd.ModeStrict})
		}
	}
	return opts.PageOf(seqs), nil
}
