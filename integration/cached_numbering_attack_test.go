//go:build integration

package integration

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/seqd/seqd"
	"github.com/seqd/seqd/counters"
)

// A cached sequence has no numbering: seqd refuses one on it (SetMode,
// SetNumbering), so a cached document that another client gave a format or
// a period is one seqd would not have written. An instance that served the
// name from blocks before that write serves the blocks it fetched before it
// and takes no further one: its next block fetch answers ErrInvalidCounter
// and leaves the document as it is, as Next does on an instance that meets
// the document first.
func TestCachedBlockFetchWithNumberingUnchanged(t *testing.T) {
	ctx := testContext(t)
	db := be.Database(t)
	coll := db.Collection(counters.CounterCollection)
	for _, set := range []bson.D{
		{{Key: "format", Value: "F-{seq}"}},
		{{Key: "period", Value: "year"}},
	} {
		name := "cb" + set[0].Key
		c := counters.NewCounter(db, counters.Options{})
		t.Cleanup(func() {
			closeCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = c.Close(closeCtx)
		})
		if err := c.SetMode(ctx, name, seqd.ModeCached, 2, 2); err != nil {
			t.Fatal(err)
		}
		if v, err := c.Next(ctx, name); err != nil || v != 1 {
			t.Fatalf("Next(%q): %d, %v; want 1 from a block of 2", name, v, err)
		}
		// The document as the $set leaves it: blocks fetched before it
		// (the allocator fetches ahead) are this instance's to serve.
		var at struct {
			Seq int64 `bson:"seq"`
		}
		after := options.FindOneAndUpdate().SetReturnDocument(options.After)
		if err := coll.FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: name}}, bson.D{{Key: "$set", Value: set}}, after).Decode(&at); err != nil {
			t.Fatal(err)
		}
		var err error
		for i := 0; i < 10 && err == nil; i++ {
			var v int64
			if v, err = c.Next(ctx, name); err == nil && v > at.Seq {
				t.Errorf("Next(%q) after $set %v at seq %d: %d, a value of a block fetched since", name, set, at.Seq, v)
			}
		}
		if !errors.Is(err, counters.ErrInvalidCounter) {
			t.Errorf("Next(%q) after $set %v at seq %d, ten times: last error %v; want ErrInvalidCounter once its blocks are served", name, set, at.Seq, err)
		}
		var doc bson.M
		if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: name}}).Decode(&doc); err != nil {
			t.Fatal(err)
		}
		if doc["seq"] != at.Seq {
			t.Errorf("%q after Next: %v, want seq %d (unchanged)", name, doc, at.Seq)
		}
	}
}
