//go:build integration

package integration

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/seqd/seqd/counters"
)

// A Set on a sequence whose format another instance set, from an instance
// that has not learned it, is not contention: no other writer got there
// first. With MaxRetries -1 ("no retries") it must still set the value.
// Observed: ErrContention ("0 duplicate key retries"), the value not set:
// the write that learns the format counted as a duplicate key retry.
func TestSetFormatLearnedWithoutRetries(t *testing.T) {
	ctx := testContext(t)
	db := be.Database(t)
	b := counters.NewCounter(db, counters.Options{})
	if err := b.SetNumbering(ctx, "f", counters.Numbering{Format: "F-{seq}"}); err != nil {
		t.Fatal(err)
	}
	a := counters.NewCounter(db, counters.Options{MaxRetries: -1})
	if err := a.Set(ctx, "f", 5, false); err != nil {
		t.Errorf("Set(f, 5) on a format set by another instance, MaxRetries -1: %v, want nil", err)
	}
	if got := mustNumbered(t, a, "f", 1, ""); got.Last != 6 || got.Formatted != "F-6" {
		t.Errorf("after Set 5: %+v, want 6, F-6", got)
	}
}

// A cached sequence has no format: seqd refuses one on it (SetNumbering,
// SetMode), so a document with both is one seqd would not have written.
// Next leaves it as it is and answers ErrInvalidCounter, as it does for a
// cached sequence with a period.
func TestNextCachedWithFormatUnchanged(t *testing.T) {
	ctx := testContext(t)
	db := be.Database(t)
	coll := db.Collection(counters.CounterCollection)
	for _, d := range []bson.D{
		{{Key: "_id", Value: "cf"}, {Key: "seq", Value: int64(3)}, {Key: "mode", Value: "cached"}, {Key: "format", Value: "F-{seq}"}},
		{{Key: "_id", Value: "cp"}, {Key: "seq", Value: int64(3)}, {Key: "mode", Value: "cached"}, {Key: "period", Value: "year"}},
	} {
		if _, err := coll.InsertOne(ctx, d); err != nil {
			t.Fatal(err)
		}
		name := d[0].Value.(string)
		c := counters.NewCounter(db, counters.Options{})
		got, err := c.NextNumbered(ctx, name, 1)
		if !errors.Is(err, counters.ErrInvalidCounter) {
			t.Errorf("NextNumbered(%q) on %v: %+v, %v; want ErrInvalidCounter", name, d, got, err)
		}
		var doc bson.M
		if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: name}}).Decode(&doc); err != nil {
			t.Fatal(err)
		}
		if doc["seq"] != int64(3) {
			t.Errorf("%q after Next: %v, want seq 3 (unchanged)", name, doc)
		}
		closeCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_ = c.Close(closeCtx)
		cancel()
	}
}
