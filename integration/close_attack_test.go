//go:build integration

package integration

import (
	"fmt"
	"log/slog"
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
