//go:build integration

package integration

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/seqd/seqd"
	"github.com/seqd/seqd/counters"
)

// A cached sequence has no numbering: seqd refuses one on it (SetMode,
// SetNumbering), so a cached document that another client gave a format or
// a period is one seqd would not have written. An instance that served the
// name from blocks before that write takes no further block of it: its next
// block fetch answers ErrInvalidCounter and leaves the document as it is,
// as Next does on an instance that meets the document first.
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
		if _, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: name}}, bson.D{{Key: "$set", Value: set}}); err != nil {
			t.Fatal(err)
		}
		if v, err := c.Next(ctx, name); err != nil || v != 2 {
			t.Fatalf("Next(%q): %d, %v; want 2, the block's last", name, v, err)
		}
		if v, err := c.Next(ctx, name); !errors.Is(err, counters.ErrInvalidCounter) {
			t.Errorf("Next(%q) past the block, after $set %v: %d, %v; want ErrInvalidCounter", name, set, v, err)
		}
		var doc bson.M
		if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: name}}).Decode(&doc); err != nil {
			t.Fatal(err)
		}
		if doc["seq"] != int64(2) {
			t.Errorf("%q after Next: %v, want seq 2 (unchanged)", name, doc)
		}
	}
}
