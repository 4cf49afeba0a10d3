//go:build integration

package integration

import (
	"context"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/seqd/seqd"
	"github.com/seqd/seqd/blocks"
	"github.com/seqd/seqd/counters"
)

// A change vector that is missing is not an incarnation. b reads the vector
// while it does not exist yet (no name has changed since the store was made)
// and confirms its lease on x from then on by the vector alone. a switches x
// to strict: its fence creates the vector, and the vector is deleted again
// (a dropped counters.modes) before b's next refresh. b reads "missing"
// twice, takes it for an unchanged vector, and keeps confirming its lease on
// x's old block past the drain: after x is strict and a strict value above
// b's block was handed out, b still serves from that block, below it.
//
// A race makes this pass on the faulty code now and then: b's refresh may
// read the vector in the few milliseconds between a's fence and the delete.
func TestLeaseVectorMissingTwice(t *testing.T) {
	ctx := testContext(t)
	db := be.Database(t)
	const lease = time.Second
	opts := counters.Options{ModeRefresh: 100 * time.Millisecond, BlockLease: lease, Blocks: blocks.Options{MinBlock: 100, MaxBlock: 100}}
	a := counters.NewCounter(db, opts)
	o := &leaseCounts{}
	opts.Observer = o
	b := counters.NewCounter(be.NewClient(t).Database(db.Name()), opts)
	t.Cleanup(func() { a.Close(context.Background()); b.Close(context.Background()) })

	mustSetMode(t, a, "x", seqd.ModeCached, 0, 0)
	mustNext(t, b, "x", 1) // a strict write, which tells b that x is cached
	mustNext(t, b, "x", 2) // b holds the block 2…101
	vector := db.Collection(counters.ModesCollection)
	if n, err := vector.CountDocuments(ctx, bson.D{}); err != nil || n != 0 {
		t.Fatalf("%s holds %d documents, %v; want none before any change", counters.ModesCollection, n, err)
	}
	rounds := o.rounds.Load()
	pollUntil(t, ctx, "two rounds of b's refresh", func() (bool, error) { return o.rounds.Load() >= rounds+2, nil })

	mustSetMode(t, a, "x", seqd.ModeStrict, 0, 0) // draining; a's fence creates the vector
	if _, err := vector.DeleteOne(ctx, bson.D{{Key: "_id", Value: "changes"}}); err != nil {
		t.Fatal(err)
	}
	pollUntil(t, ctx, "x strict", func() (bool, error) {
		var doc struct {
			Mode string `bson:"mode"`
		}
		err := db.Collection(counters.CounterCollection).FindOne(ctx, bson.D{{Key: "_id", Value: "x"}}).Decode(&doc)
		return err == nil && doc.Mode == string(seqd.ModeStrict), err
	})
	strict, err := a.Next(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	got, err := b.Next(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	if got <= strict {
		t.Errorf("after the drain, a handed out the strict value %d, then b served %d from its old block: its lease was confirmed by a missing vector read twice", strict, got)
	}
}
