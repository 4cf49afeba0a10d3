package counters

import (
	"context"
	"fmt"
	"sync/atomic"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/readpref"
)

// collationCheck makes sure, once per Counter, that its collection compares
// names as bytes. A collection created beforehand with a default collation
// applies it to every command that names none: with strength 2, _id "Orders"
// equals "orders", so two names would share one counter, and List's ranges and
// sort would follow the collation's order, not the names'. seqd cannot pass
// collation "simple" on each command instead: the development store (FerretDB
// 1.x) refuses the collation option on every command. So the first call of a
// Counter reads the collection's options (listCollections) and, if they name
// a collation other than simple, every call returns ErrInvalidCounter, and
// nothing is written.
type collationCheck struct {
	simple   atomic.Bool   // the check passed: never read again
	checking chan struct{} // holds one token while a check is in flight
	// spec returns the collection's listCollections entry, or nil if the
	// collection does not exist yet; a seam for tests.
	spec func(ctx context.Context) (bson.Raw, error)
}

// init makes k check coll, reading its options from the primary, as every
// read of this package.
func (k *collationCheck) init(coll *mongo.Collection) {
	db := primaryDatabase(coll.Database())
	k.checking = make(chan struct{}, 1)
	k.spec = func(ctx context.Context) (bson.Raw, error) { return collectionSpec(ctx, db, coll.Name()) }
}

// check returns nil once the collection has been seen without a default
// collation other than simple. Until then it reads the collection's options,
// one caller at a time; a read that fails is tried again by the next call. A
// collection that does not exist yet passes: seqd's first write creates it
// without a collation.
func (k *collationCheck) check(ctx context.Context) error {
	if k.simple.Load() {
		return nil
	}
	select {
	case k.checking <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-k.checking }()
	if k.simple.Load() {
		return nil
	}
	spec, err := k.spec(ctx)
	if err != nil {
		return err
	}
	if err := simpleCollation(spec); err != nil {
		return err
	}
	k.simple.Store(true)
	return nil
}

// collectionSpec returns the entry of db's collection name in
// listCollections, or nil if there is none.
func collectionSpec(ctx context.Context, db *mongo.Database, name string) (bson.Raw, error) {
	cur, err := db.ListCollections(ctx, bson.D{{Key: "name", Value: name}})
	if err != nil {
		return nil, err
	}
	defer cur.Close(context.WithoutCancel(ctx))
	if cur.Next(ctx) {
		return append(bson.Raw(nil), cur.Current...), nil
	}
	return nil, cur.Err()
}

// simpleCollation returns nil if spec, a listCollections entry (or nil for no
// collection), shows no default collation, or collation simple; otherwise an
// error wrapping ErrInvalidCounter that shows the collation. mongod keeps a
// collection's default collation in options.collation, and none for simple.
func simpleCollation(spec bson.Raw) error {
	if spec == nil {
		return nil
	}
	v, err := spec.LookupErr("options", "collation")
	if err != nil {
		return nil
	}
	if doc, ok := v.DocumentOK(); ok {
		if locale, _ := doc.Lookup("locale").StringValueOK(); locale == "simple" {
			return nil
		}
	}
	return fmt.Errorf("%w: the collection %q has the default collation %s; seqd needs names compared as bytes "+
		"(collation simple), or names that differ only in case or accents could share a counter. "+
		"Create the collection without a collation, or use another database",
		ErrInvalidCounter, CounterCollection, cut(v.String(), 120))
}

// primaryDatabase is db read from the primary, as every read of this package:
// a database's own commands (listCollections) take db's read preference,
// which on a replica set may be a secondary's.
func primaryDatabase(db *mongo.Database) *mongo.Database {
	return db.Client().Database(db.Name(), options.Database().SetReadPreference(readpref.Primary()))
}
