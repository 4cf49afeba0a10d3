//go:build integration

package integration

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/seqd/seqd"
	"github.com/seqd/seqd/blocks"
	"github.com/seqd/seqd/counters"
)

// A write concern error on one of Close's bulk writes says the updates ran
// but may not be replicated (mongod: wtimeout): the store is up. Close still
// sends the rest of its give-backs and reports, and its line does not name as
// failed a name whose give-back the store applied.
func TestCloseWriteConcernErrorGivesBackTheRest(t *testing.T) {
	be.RequireFailCommand(t)
	ctx := testContext(t)
	db := be.Database(t)
	lines := &lineLog{}
	a := counters.NewCounter(db, counters.Options{ModeRefresh: time.Hour, BlockLease: time.Minute,
		Blocks: blocks.Options{MinBlock: 100, MaxBlock: 100}, Logger: slog.New(slog.NewJSONHandler(lines, nil))})
	const names = 120 // 3 commands of give-backs, 3 of reports
	for i := range names {
		name := fmt.Sprintf("n%03d", i)
		mustSetMode(t, a, name, seqd.ModeCached, 0, 0)
		mustNext(t, a, name, 1) // a holds 2…100
	}
	be.FailCommand(t, bson.D{{Key: "times", Value: 1}}, bson.D{
		{Key: "failCommands", Value: bson.A{"update"}},
		{Key: "namespace", Value: db.Name() + "." + counters.CounterCollection},
		{Key: "writeConcernError", Value: bson.D{{Key: "code", Value: 64}, {Key: "errmsg", Value: "waiting for replication timed out"}}},
	})
	err := a.Close(ctx)
	t.Logf("Close: %v", err)
	admin := counters.NewCounter(be.NewClient(t).Database(db.Name()), counters.Options{})
	returned := map[string]bool{}
	lost := 0
	for i := range names {
		name := fmt.Sprintf("n%03d", i)
		s, err := admin.Current(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		returned[name] = s.Blocks.Returned == 99
		if want := (seqd.BlockCounts{Reserved: 100, Served: 1, Returned: 99}); s.Value != 1 || s.Blocks != want {
			lost++
			if lost <= 3 {
				t.Errorf("%s after Close: value %d, counts %+v; want 1, %+v", name, s.Value, s.Blocks, want)
			}
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d names not given back or not reported after one write concern error", lost, names)
	}
	recs := lines.records(t, "given back")
	if len(recs) != 1 {
		t.Fatalf("Close logged %d lines about what it gave back, want 1", len(recs))
	}
	r := recs[0]
	t.Logf("the line: %v", r)
	gb, _ := r["given_back"].(float64)
	applied := 0
	for _, ok := range returned {
		if ok {
			applied++
		}
	}
	if int(gb) != applied {
		t.Errorf("the line says given_back %v; the store shows %d tails given back", r["given_back"], applied)
	}
	failedNames, _ := r["failed_names"].([]any)
	for _, n := range failedNames {
		if returned[n.(string)] {
			t.Errorf("the line names %v as failed; the store shows its tail given back", n)
		}
	}
}

// A forced Set counts itself in forced, so that no give-back of a block
// reserved before it matches after it. Close's tail may span two blocks, the
// last reserved after the forced Set and the one before it reserved before:
// the fence names the last block's forced count, and the tail's first block
// goes back with it. b holds 11…20 (reserved before the Set) when the
// operator forces the sequence to 10, the last value handed out; a reserves
// 11 (strict) and 12…20 (a block) after the Set; b serves 11…15 from its old
// block (a forced Set back does not reach blocks held) and fetches 21…30
// after the Set. b's Close gives 16…30 back: seq goes to 15, below a's block,
// reserved after the Set and after b's, and a value of a's block is handed
// out again by a strict write of another instance. Wanted: seq stays at 20 or
// above, and a and c hand out no value twice.
func TestCloseGiveBackTailAcrossForcedSet(t *testing.T) {
	ctx := testContext(t)
	name := be.Database(t).Name()
	b := counters.NewCounter(be.NewClient(t).Database(name), counters.Options{ModeRefresh: time.Hour, BlockLease: time.Minute,
		Blocks: blocks.Options{MinBlock: 10, MaxBlock: 10, Prefetch: 0.5}})
	a := counters.NewCounter(be.NewClient(t).Database(name), counters.Options{ModeRefresh: time.Hour, BlockLease: time.Minute,
		Blocks: blocks.Options{MinBlock: 9, MaxBlock: 9, Prefetch: 1}})
	c := counters.NewCounter(be.NewClient(t).Database(name), counters.Options{})
	admin := counters.NewCounter(be.NewClient(t).Database(name), counters.Options{})
	t.Cleanup(func() { a.Close(context.Background()); b.Close(context.Background()); c.Close(context.Background()) })
	prefetched := func(c *counters.Counter, first int64) {
		t.Helper()
		pollUntil(t, ctx, fmt.Sprintf("the block from %d", first), func() (bool, error) {
			st, ok := c.BlockStatus("s")
			return ok && st.Next.First == first, nil
		})
	}
	mustSetMode(t, b, "s", seqd.ModeCached, 0, 0)
	for v := range int64(5) {
		mustNext(t, b, "s", v+1) // block 1…10
	}
	prefetched(b, 11) // 11…20, before the Set
	for v := range int64(5) {
		mustNext(t, b, "s", v+6)
	}
	mustSet(t, admin, "s", 10, true)
	mustNext(t, a, "s", 11) // strict: a learns
	mustNext(t, a, "s", 12) // block 12…20, after the Set
	for v := range int64(5) {
		mustNext(t, b, "s", v+11) // b's block from before the Set
	}
	prefetched(b, 21) // 21…30, after the Set
	if err := b.Close(ctx); err != nil {
		t.Fatal(err)
	}
	s, err := admin.Current(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if s.Value < 20 {
		t.Errorf("after b's Close: seq %d, below a's block 12…20, reserved after the forced Set and after b's block: %+v", s.Value, s)
	}
	seen := map[int64]string{11: "a", 12: "a"}
	for range 4 {
		for id, k := range map[string]*counters.Counter{"a": a, "c": c} {
			v, err := k.Next(ctx, "s")
			if err != nil {
				t.Fatal(err)
			}
			if by, ok := seen[v]; ok {
				t.Errorf("%d handed out by %s and by %s, both from reservations after the forced Set", v, by, id)
			}
			seen[v] = id
		}
	}
}

// One update of a give-back command fails on its own (a write error: here
// returned would overflow): an unordered bulk write applies the others, and
// Close counts that one name as failed, the others as given back.
func TestCloseGiveBackOneWriteError(t *testing.T) {
	ctx := testContext(t)
	db := be.Database(t)
	lines := &lineLog{}
	a := counters.NewCounter(db, counters.Options{ModeRefresh: time.Hour, BlockLease: time.Minute,
		Blocks: blocks.Options{MinBlock: 100, MaxBlock: 100}, Logger: slog.New(slog.NewJSONHandler(lines, nil))})
	names := []string{"a", "b", "c", "d", "e"}
	for _, name := range names {
		mustSetMode(t, a, name, seqd.ModeCached, 0, 0)
		mustNext(t, a, name, 1) // a holds 2…100
	}
	const bad = "c"
	if _, err := db.Collection(counters.CounterCollection).UpdateOne(ctx, bson.D{{Key: "_id", Value: bad}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "returned", Value: int64(math.MaxInt64)}}}}); err != nil {
		t.Fatal(err)
	}
	err := a.Close(ctx)
	t.Logf("Close: %v", err)
	for _, name := range names {
		s, err := a.Current(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if name == bad {
			if s.Value != 100 {
				t.Errorf("%s: value %d after a failed give-back; want 100", name, s.Value)
			}
			continue
		}
		if want := (seqd.BlockCounts{Reserved: 100, Served: 1, Returned: 99}); s.Value != 1 || s.Blocks != want {
			t.Errorf("%s after Close: value %d, counts %+v; want 1, %+v", name, s.Value, s.Blocks, want)
		}
	}
	recs := lines.records(t, "given back")
	if len(recs) != 1 {
		t.Fatalf("Close logged %d lines about what it gave back, want 1", len(recs))
	}
	r := recs[0]
	failed, _ := r["failed_names"].([]any)
	if r["given_back"] != 4.0 || r["not_given_back"] != 0.0 || len(failed) != 1 || failed[0] != bad {
		t.Errorf("the line: %v; want given_back 4, not_given_back 0, failed_names [%s]", r, bad)
	}
}

// A retried command of Close must not count twice. Here the command of
// reports holds one update that fails on its own (served would overflow), and
// its answer carries a write concern error labelled RetryableWriteError, so
// the driver sends it again, as the same retryable write (same lsid and
// txnNumber): the reports that applied the first time must not be counted
// again, as mongod, which records each statement it ran, does not.
func TestCloseRetriedReportsCountOnce(t *testing.T) {
	be.RequireFailCommand(t)
	be.RequireReplicaSet(t)
	ctx := testContext(t)
	db := be.Database(t)
	a := counters.NewCounter(db, counters.Options{ModeRefresh: time.Hour, BlockLease: time.Minute,
		Blocks: blocks.Options{MinBlock: 100, MaxBlock: 100}})
	names := []string{"a", "b", "c", "d", "e"}
	for _, name := range names {
		mustSetMode(t, a, name, seqd.ModeCached, 0, 0)
		mustNext(t, a, name, 1) // a holds 2…100, has served 1
	}
	const bad = "e"
	if _, err := db.Collection(counters.CounterCollection).UpdateOne(ctx, bson.D{{Key: "_id", Value: bad}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "served", Value: int64(math.MaxInt64)}}}}); err != nil {
		t.Fatal(err)
	}
	be.FailCommand(t, bson.D{{Key: "times", Value: 2}}, bson.D{
		{Key: "failCommands", Value: bson.A{"update"}},
		{Key: "namespace", Value: db.Name() + "." + counters.CounterCollection},
		{Key: "writeConcernError", Value: bson.D{{Key: "code", Value: 64}, {Key: "errmsg", Value: "waiting for replication timed out"}}},
		{Key: "errorLabels", Value: bson.A{"RetryableWriteError"}},
	})
	err := a.Close(ctx)
	t.Logf("Close: %v", err)
	for _, name := range names {
		s, err := a.Current(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: value %d, counts %+v", name, s.Value, s.Blocks)
		if name != bad && s.Blocks.Served > 1 {
			t.Errorf("%s: served %d after Close; 1 was served: a report counted twice (reserved %d = served + returned + lost no longer holds)", name, s.Blocks.Served, s.Blocks.Reserved)
		}
	}
}

// Close under load: a's callers keep calling through and after its Close
// (strict from then on), b's callers and, in turn, a mode switch on b, a
// forced Set and a second Close of a race it. No value twice, each instance
// in real-time order, strict answers above every answer that ended before.
func TestCloseRacesCallers(t *testing.T) {
	for _, race := range []string{"callers", "switch", "close twice", "raise"} {
		t.Run(race, func(t *testing.T) {
			ctx := testContext(t)
			name := be.Database(t).Name()
			opts := counters.Options{ModeRefresh: 50 * time.Millisecond, BlockLease: time.Second,
				Blocks: blocks.Options{MinBlock: 3, MaxBlock: 3, Cooldown: time.Millisecond}}
			a := counters.NewCounter(be.NewClient(t).Database(name), opts)
			b := counters.NewCounter(be.NewClient(t).Database(name), opts)
			t.Cleanup(func() { a.Close(context.Background()); b.Close(context.Background()) })
			mustSetMode(t, b, "s", seqd.ModeCached, 0, 0)
			mustSetMode(t, a, "s", seqd.ModeCached, 0, 0)
			rec := &atkRec{}
			load := newAtkLoad(t, rec, 5*time.Second)
			load.callers(ctx, "a", a, 4)
			load.callers(ctx, "b", b, 4)
			time.Sleep(300 * time.Millisecond) // load before the Close; not synchronisation
			var wg sync.WaitGroup
			switch race {
			case "switch":
				wg.Go(func() {
					if err := b.SetMode(ctx, "s", seqd.ModeStrict, 0, 0); err != nil {
						t.Errorf("b's SetMode: %v", err)
					}
				})
			case "close twice":
				wg.Go(func() {
					if err := a.Close(ctx); err != nil {
						t.Errorf("a's second Close: %v", err)
					}
				})
			case "raise":
				wg.Go(func() {
					s, err := b.Current(ctx, "s")
					if err == nil {
						err = b.Set(ctx, "s", s.Value+1, false)
					}
					if err != nil && !errors.Is(err, counters.ErrBackwards) {
						t.Errorf("b's Set: %v", err)
					}
				})
			}
			if err := a.Close(ctx); err != nil {
				t.Errorf("a's Close: %v", err)
			}
			wg.Wait()
			time.Sleep(300 * time.Millisecond) // load after the Close
			load.stop()
			atkCheck(t, rec)
		})
	}
}

// Could a retried give-back command give back twice? a's give-back command
// holds one update that fails on its own (returned would overflow) and gets a
// write concern error labelled RetryableWriteError, so the driver sends it
// again as the same retryable write, which the store holds for 500 ms. In
// that time b, which knows the names cached, reserves from each given-back
// name a block that ends where a's tail ended, and hands out its first value.
// mongod answers the retry from its record of the statements that ran; a
// store that runs them again finds seq at the tail's end again, gives the
// tail back a second time, and a strict write of c hands out b's value again.
func TestCloseRetriedGiveBackOnce(t *testing.T) {
	be.RequireFailCommand(t)
	be.RequireReplicaSet(t)
	ctx := testContext(t)
	db := be.Database(t)
	const app = "close-retried-give-back"
	a := counters.NewCounter(be.NewAppClient(t, app).Database(db.Name()), counters.Options{ModeRefresh: time.Hour, BlockLease: time.Minute,
		Blocks: blocks.Options{MinBlock: 10, MaxBlock: 10}})
	b := counters.NewCounter(be.NewClient(t).Database(db.Name()), counters.Options{ModeRefresh: time.Hour, BlockLease: time.Minute,
		Blocks: blocks.Options{MinBlock: 19, MaxBlock: 19, Prefetch: 1}})
	c := counters.NewCounter(be.NewClient(t).Database(db.Name()), counters.Options{})
	t.Cleanup(func() { a.Close(context.Background()); b.Close(context.Background()); c.Close(context.Background()) })
	var names []string
	for i := range 20 {
		names = append(names, fmt.Sprintf("v%02d", i))
	}
	const bad = "x"
	for _, name := range append(names, bad) {
		mustSetMode(t, a, name, seqd.ModeCached, 0, 0)
		mustNext(t, a, name, 1) // block 1…10; the prefetch of 11…20 reports it served
		pollUntil(t, ctx, name+"'s next block", func() (bool, error) {
			st, ok := a.BlockStatus(name)
			return ok && st.Next.First == 11, nil
		})
		mustSetMode(t, b, name, seqd.ModeCached, 0, 0) // b knows it cached, holds nothing
	}
	if _, err := db.Collection(counters.CounterCollection).UpdateOne(ctx, bson.D{{Key: "_id", Value: bad}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "returned", Value: int64(math.MaxInt64)}}}}); err != nil {
		t.Fatal(err)
	}
	fp := be.FailCommand(t, bson.D{{Key: "times", Value: 2}}, bson.D{
		{Key: "failCommands", Value: bson.A{"update"}},
		{Key: "appName", Value: app},
		{Key: "blockConnection", Value: true},
		{Key: "blockTimeMS", Value: 500},
		{Key: "writeConcernError", Value: bson.D{{Key: "code", Value: 64}, {Key: "errmsg", Value: "waiting for replication timed out"}}},
		{Key: "errorLabels", Value: bson.A{"RetryableWriteError"}},
	})
	closed := make(chan error, 1)
	go func() { closed <- a.Close(ctx) }()
	if err := fp.WaitEntered(ctx, 2); err != nil { // the retry waits at the store
		t.Fatal(err)
	}
	bGot := map[string]int64{}
	for _, name := range names {
		s, err := c.Current(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if s.Value != 1 {
			continue // not given back by the first run: after the failing update
		}
		v, err := b.Next(ctx, name) // block 2…20
		if err != nil {
			t.Fatal(err)
		}
		bGot[name] = v
	}
	t.Logf("Close: %v; b took a value of %d given-back names", <-closed, len(bGot))
	for name, v := range bGot {
		w, err := c.Next(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if w <= 20 {
			t.Errorf("%s: c's strict value %d after Close; b holds 2…20 and handed out %d: the tail was given back twice", name, w, v)
		}
	}
}
