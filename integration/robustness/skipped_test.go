//go:build integration

package robustness

import (
	"context"
	"net/url"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/seqd/seqd/integration/backend"
	"github.com/seqd/seqd/integration/relay"
)

// TestCheckSkipped: a strict name's gap is an anomaly unless a failed request,
// a Set or a store restart between its two answers explains it.
func TestCheckSkipped(t *testing.T) {
	t0 := time.Now()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	ok := func(start, end int, first, last int64) attempt {
		return attempt{Name: "s", Start: at(start), End: at(end), Status: 200, Count: last - first + 1, First: first, Last: last}
	}
	failed := func(start, end int, count int64) attempt {
		return attempt{Name: "s", Start: at(start), End: at(end), Status: 503, Count: count}
	}
	set := func(start, end int, v int64, answered bool) op {
		return op{Kind: opSet, Name: "s", Start: at(start), End: at(end), Value: v, OK: answered}
	}
	for _, c := range []struct {
		name                   string
		attempts               []attempt
		admin                  []op
		sf                     storeFaults
		explained, unexplained int64
	}{
		{"contiguous", []attempt{ok(0, 10, 1, 1), ok(20, 30, 2, 4), ok(25, 40, 5, 5)}, nil, storeFaults{}, 0, 0},
		{"a write run twice", []attempt{ok(0, 10, 1, 1), ok(20, 30, 4, 6)}, nil, storeFaults{}, 0, 2},
		{"a failed request between", []attempt{ok(0, 10, 1, 1), failed(12, 15, 2), ok(20, 30, 4, 6)}, nil, storeFaults{}, 2, 0},
		{"a failed request too small", []attempt{ok(0, 10, 1, 1), failed(12, 15, 1), ok(20, 30, 4, 6)}, nil, storeFaults{}, 1, 1},
		{"a failed request long before", []attempt{failed(0, 5, 5), ok(10_000, 10_010, 1, 1), ok(10_020, 10_030, 4, 6)}, nil, storeFaults{}, 0, 2},
		{"a failed request whose write lands late", []attempt{failed(0, 5, 2), ok(1_000, 1_010, 1, 1), ok(1_020, 1_030, 4, 6)}, nil, storeFaults{}, 2, 0},
		{"a Set between", []attempt{ok(0, 10, 1, 1), ok(20, 30, 11, 11)}, []op{set(12, 15, 10, true)}, storeFaults{}, 9, 0},
		{"a Set that moved it part of the way", []attempt{ok(0, 10, 1, 1), ok(20, 30, 11, 11)}, []op{set(12, 15, 7, true)}, storeFaults{}, 6, 3},
		{"a Set after", []attempt{ok(0, 10, 1, 1), ok(20, 30, 11, 11)}, []op{set(40, 45, 10, true)}, storeFaults{}, 0, 9},
		{"a Set answered backwards", []attempt{ok(0, 10, 1, 1), ok(20, 30, 11, 11)}, []op{{Kind: opSet, Start: at(12), End: at(15), Value: 10, OK: true, Backwards: true}}, storeFaults{}, 0, 9},
		{"a Set with no answer", []attempt{ok(0, 10, 1, 1), ok(20, 30, 11, 11)}, []op{set(12, 15, 10, false)}, storeFaults{}, 9, 0},
		{"skipped before the first", []attempt{ok(0, 10, 3, 3)}, nil, storeFaults{}, 0, 2},
		{"a store restart between", []attempt{ok(0, 10, 1, 1), ok(20, 30, 4, 6)}, nil, storeFaults{restarts: []window{{at(5), at(8)}}}, 2, 0},
		{"a store restart after", []attempt{ok(0, 10, 1, 1), ok(20, 30, 4, 6)}, nil, storeFaults{restarts: []window{{at(40), at(50)}}}, 0, 2},
		{"a failed request while commands were held", []attempt{failed(0, 5, 2), ok(7_000, 7_010, 1, 1), ok(7_020, 7_030, 4, 6)}, nil, storeFaults{blocked: []window{{at(0), at(1_000)}}}, 2, 0},
		{"a failed request long before, commands held", []attempt{failed(0, 5, 2), ok(10_000, 10_010, 1, 1), ok(10_020, 10_030, 4, 6)}, nil, storeFaults{blocked: []window{{at(0), at(1_000)}}}, 0, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := checkSkipped(c.attempts, c.admin, c.sf, t0)
			if got.explained != c.explained || got.unexplained != c.unexplained {
				t.Errorf("explained %d, unexplained %d; want %d, %d (%v)", got.explained, got.unexplained, c.explained, c.unexplained, got.examples)
			}
			if (got.unexplained > 0) != (len(got.examples) > 0) {
				t.Errorf("%d unexplained with examples %q", got.unexplained, got.examples)
			}
		})
	}
}

// TestDroppedWriteReplyRetried: through a relay that drops the reply to a
// findAndModify the store ran, the driver (directConnection, as seqd's
// connections in the suite) retries it with the same lsid and txnNumber, and
// the replica-set dev store answers from its record: one $inc, not two. The
// mutant store runs it again, which the suite must catch.
func TestDroppedWriteReplyRetried(t *testing.T) {
	if !isReplicaSet(t, be) {
		t.Skipf("the store is not a replica set member, and the driver retries no write on a standalone server: %s", be)
	}
	t.Run("store", func(t *testing.T) {
		if seq := incThroughDroppingRelay(t, be); seq != 1 {
			t.Fatalf("the stored seq is %d after one $inc whose reply was dropped: want 1 (the retry answered from the store's record)", seq)
		}
	})
	t.Run("mutant store", func(t *testing.T) {
		st := openDevStore(t, storeMutant, backend.DevStoreReplSet, "-mutant-rerun-retries")
		if seq := incThroughDroppingRelay(t, st); seq != 2 {
			t.Fatalf("the mutant store's seq is %d after one $inc whose reply was dropped: want 2 (the retry run again)", seq)
		}
	})
}

// incThroughDroppingRelay sends one findAndModify $inc to st through a relay
// that drops its first reply, checks that the driver sent it twice with one
// txnNumber, and returns the stored seq.
func incThroughDroppingRelay(t *testing.T, st *backend.Backend) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	u, err := url.Parse(storeURI(st))
	if err != nil {
		t.Fatal(err)
	}
	r := relay.Start(t, u.Host)
	uri, err := r.Through(storeURI(st))
	if err != nil {
		t.Fatal(err)
	}
	txns := make(chan bson.RawValue, 10)
	monitor := &event.CommandMonitor{Started: func(_ context.Context, e *event.CommandStartedEvent) {
		if e.CommandName == "findAndModify" {
			txns <- e.Command.Lookup("txnNumber")
		}
	}}
	c := backend.Connect(t, options.Client().ApplyURI(uri).SetMonitor(monitor))
	db := st.Client.Database(backend.DatabaseName(t))
	t.Cleanup(func() { db.Drop(context.Background()) })
	coll := c.Database(db.Name()).Collection("counters")

	r.DropWriteReplies(1)
	var doc struct {
		Seq int64 `bson:"seq"`
	}
	err = coll.FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: "n"}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "seq", Value: int64(1)}}}},
		options.FindOneAndUpdate().SetUpsert(true).SetReturnDocument(options.After)).Decode(&doc)
	if err != nil {
		t.Fatalf("findAndModify through the relay: %v (the driver should retry it)", err)
	}
	if d := r.WriteRepliesDropped(); d != 1 {
		t.Fatalf("the relay dropped %d replies, want 1", d)
	}
	close(txns)
	var sent []bson.RawValue
	for v := range txns {
		sent = append(sent, v)
	}
	if len(sent) != 2 || sent[0].Type == 0 || !sent[0].Equal(sent[1]) {
		t.Fatalf("the driver sent findAndModify with txnNumbers %v; want it twice with one txnNumber", sent)
	}
	var stored struct {
		Seq int64 `bson:"seq"`
	}
	if err := db.Collection("counters").FindOne(ctx, bson.D{{Key: "_id", Value: "n"}}).Decode(&stored); err != nil {
		t.Fatal(err)
	}
	return stored.Seq
}
