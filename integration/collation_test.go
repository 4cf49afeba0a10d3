//go:build integration

package integration

import (
	"errors"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/seqd/seqd/counters"
)

// A "counters" collection created beforehand. Without a collation a Counter
// uses it, and names that differ in case are two sequences. With a default
// collation other than simple every call is refused with ErrInvalidCounter that
// shows the collation, and nothing is written. The dev store (FerretDB 1.x)
// refuses the collation option itself, so that part skips there; the unit tests
// (TestSimpleCollation) read mongod's listCollections entry.
func TestCounterCollectionCollation(t *testing.T) {
	t.Run("none", func(t *testing.T) {
		ctx := testContext(t)
		db := be.Database(t)
		if err := db.CreateCollection(ctx, counters.CounterCollection); err != nil {
			t.Fatal(err)
		}
		c := counters.NewCounter(db, counters.Options{})
		mustNext(t, c, "Orders", 1)
		mustNext(t, c, "orders", 1)
	})
	t.Run("strength 2", func(t *testing.T) {
		ctx := testContext(t)
		db := be.Database(t)
		caseless := options.CreateCollection().SetCollation(&options.Collation{Locale: "en", Strength: 2})
		if err := db.CreateCollection(ctx, counters.CounterCollection, caseless); err != nil {
			t.Skipf("the server refuses a collection with a default collation (%s): %v", be.Kind, err)
		}
		coll := db.Collection(counters.CounterCollection)
		if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: "Orders"}, {Key: "seq", Value: int64(5)}}); err != nil {
			t.Fatal(err)
		}
		c := counters.NewCounter(db, counters.Options{})
		_, err := c.Next(ctx, "orders")
		if !errors.Is(err, counters.ErrInvalidCounter) || !strings.Contains(err.Error(), "strength") {
			t.Errorf("Next on a collection with collation strength 2 = %v; want ErrInvalidCounter showing it", err)
		}
		if err := c.Set(ctx, "Orders", 9, true); !errors.Is(err, counters.ErrInvalidCounter) {
			t.Errorf("Set = %v; want ErrInvalidCounter", err)
		}
		var docs []bson.M
		cur, err := coll.Find(ctx, bson.D{})
		if err == nil {
			err = cur.All(ctx, &docs)
		}
		if err != nil || len(docs) != 1 || docs[0]["seq"] != int64(5) {
			t.Errorf("the collection holds %v (%v); want {Orders, 5} alone, unchanged", docs, err)
		}
	})
}
