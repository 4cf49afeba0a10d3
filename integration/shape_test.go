//go:build integration

package integration

import (
	"bytes"
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/readpref"

	"github.com/seqd/seqd/counters"
	"github.com/seqd/seqd/integration/backend"
)

// Counter documents that another client wrote in a shape seqd cannot count on
// from: every call on them fails at once with ErrInvalidCounter, changes nothing,
// and the list still shows the other sequences.
func TestShapeCounterDocuments(t *testing.T) {
	ctx := testContext(t)
	db := be.Database(t)
	coll := db.Collection(counters.CounterCollection)
	bad := []bson.D{
		{{Key: "_id", Value: "double-2p53"}, {Key: "seq", Value: float64(1 << 53)}},
		{{Key: "_id", Value: "fraction"}, {Key: "seq", Value: 41.5}},
		{{Key: "_id", Value: "whole-double"}, {Key: "seq", Value: 7.0}},
		{{Key: "_id", Value: "negative"}, {Key: "seq", Value: int64(-5)}},
		{{Key: "_id", Value: "negative-int"}, {Key: "seq", Value: int32(-5)}},
		{{Key: "_id", Value: "no-seq"}, {Key: "other", Value: 1}},
		{{Key: "_id", Value: "string"}, {Key: "seq", Value: "12"}},
		{{Key: "_id", Value: "period-start-string"}, {Key: "seq", Value: int64(3)}, {Key: "period", Value: "year"}, {Key: "periodStart", Value: "2026"}},
		{{Key: "_id", Value: "next-period-double"}, {Key: "seq", Value: int64(3)}, {Key: "nextPeriodStart", Value: 1.5}},
		{{Key: "_id", Value: "forced-string"}, {Key: "seq", Value: int64(3)}, {Key: "forced", Value: "x"}},
		{{Key: "_id", Value: "periods-number"}, {Key: "seq", Value: int64(3)}, {Key: "period", Value: "year"}, {Key: "periods", Value: int64(5)}},
		{{Key: "_id", Value: "next-period-string"}, {Key: "seq", Value: int64(3)}, {Key: "period", Value: "year"}, {Key: "nextPeriodStart", Value: "x"}},
	}
	good := []bson.D{
		{{Key: "_id", Value: "int32"}, {Key: "seq", Value: int32(5)}},
		{{Key: "_id", Value: "int64"}, {Key: "seq", Value: int64(math.MaxInt64 - 1)}},
	}
	for _, doc := range append(append([]bson.D{}, bad...), good...) {
		if _, err := coll.InsertOne(ctx, doc); err != nil {
			t.Fatal(err)
		}
	}
	obs := &observer{}
	c := counters.NewCounter(db, counters.Options{Observer: obs})

	for _, doc := range bad {
		name := doc[0].Value.(string)
		before, err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: name}}).Raw()
		if err != nil {
			t.Fatal(err)
		}
		for op, call := range map[string]func() error{
			"Next":       func() error { _, err := c.Next(ctx, name); return err },
			"NextN":      func() error { _, err := c.NextN(ctx, name, 3); return err },
			"Current":    func() error { _, err := c.Current(ctx, name); return err },
			"Set":        func() error { return c.Set(ctx, name, 100, false) },
			"Set(force)": func() error { return c.Set(ctx, name, 100, true) },
		} {
			if err := call(); !errors.Is(err, counters.ErrInvalidCounter) {
				t.Errorf("%s(%s) = %v, want ErrInvalidCounter", op, name, err)
			}
		}
		after, err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: name}}).Raw()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(before, after) {
			t.Errorf("%s: the document changed from %v to %v", name, before, after)
		}
	}
	if n := obs.retries.Load(); n != 0 {
		t.Errorf("%d retries, want none: the answer is immediate", n)
	}
	// The error says which sequence and what was found, as a person would write it.
	for name, want := range map[string]string{
		"fraction": `the seq of "fraction" is a double 41.5,`,
		"negative": `the seq of "negative" is a long -5,`,
		"string":   `the seq of "string" is a string "12",`,
		"no-seq":   `the counter document of "no-seq" has no seq field`,
	} {
		if _, err := c.Next(ctx, name); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Next(%s) = %v, want it to say %s", name, err, want)
		}
	}

	if v, err := c.Next(ctx, "int32"); err != nil || v != 6 {
		t.Errorf("Next(int32) = %d, %v; want 6", v, err)
	}
	if v, err := c.Next(ctx, "int64"); err != nil || v != math.MaxInt64 {
		t.Errorf("Next(int64) = %d, %v; want MaxInt64", v, err)
	}
	if _, err := c.Next(ctx, "int64"); !errors.Is(err, counters.ErrExhausted) {
		t.Errorf("Next(int64) at MaxInt64 = %v, want ErrExhausted", err)
	}

	page, err := c.List(ctx, counters.ListOptions{})
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	list := page.Sequences
	if len(list) != len(bad)+len(good) {
		t.Fatalf("List = %+v, want %d sequences", list, len(bad)+len(good))
	}
	invalid := map[string]bool{}
	for _, doc := range bad {
		invalid[doc[0].Value.(string)] = true
	}
	for _, s := range list {
		switch {
		case invalid[s.Name] && !errors.Is(s.Err, counters.ErrInvalidCounter):
			t.Errorf("List: %s = %+v, want ErrInvalidCounter", s.Name, s)
		case !invalid[s.Name] && s.Err != nil:
			t.Errorf("List: %s = %+v, want a value", s.Name, s)
		}
	}
}

// A ledger whose largest _id is not a whole number: Next refuses it, and the list
// marks it and shows the others.
func TestShapeLedger(t *testing.T) {
	ctx := testContext(t)
	db := be.Database(t)
	if _, err := db.Collection(counters.LedgerPrefix+"huge").InsertOne(ctx, bson.D{{Key: "_id", Value: 1e300}}); err != nil {
		t.Fatal(err)
	}
	o := counters.NewOptimistic(db, counters.Options{})
	if _, err := o.Next(ctx, "huge"); !errors.Is(err, counters.ErrInvalidCounter) {
		t.Errorf("Next(huge) = %v, want ErrInvalidCounter", err)
	}
	if _, err := o.Next(ctx, "fine"); err != nil {
		t.Fatal(err)
	}
	page, err := o.List(ctx, counters.ListOptions{})
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	list := page.Sequences
	if len(list) != 2 || list[0].Name != "fine" || list[0].Value != 1 || list[0].Err != nil ||
		list[1].Name != "huge" || !errors.Is(list[1].Err, counters.ErrInvalidCounter) {
		t.Errorf("List = %+v, want fine at 1 and huge marked invalid", list)
	}
}

// TestOptimisticCallersOfOneProcessDoNotCollide runs 64 callers on one name, and
// on one collection, through one Optimistic that allows no retry: callers of one
// process wait for each other instead of colliding, so none needs a retry, and
// the values are exactly 1…N. Two Optimistics on one name, as two processes would
// be, still collide; the bounded retry settles that, and the values stay exact.
func TestOptimisticCallersOfOneProcessDoNotCollide(t *testing.T) {
	const callers, perCaller = 64, 5
	run := func(t *testing.T, next func(i int) (int64, error)) []int64 {
		var mu sync.Mutex
		var values []int64
		var wg sync.WaitGroup
		for i := range callers {
			wg.Go(func() {
				for range perCaller {
					v, err := next(i)
					mu.Lock()
					if err != nil {
						t.Error(err)
					} else {
						values = append(values, v)
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		return values
	}

	t.Run("Next", func(t *testing.T) {
		ctx := testContext(t)
		obs := &observer{}
		o := counters.NewOptimistic(be.Database(t), counters.Options{Observer: obs, MaxRetries: -1})
		values := run(t, func(int) (int64, error) { return o.Next(ctx, "tickets") })
		checkExactly(t, values, callers*perCaller)
		if n := obs.retries.Load(); n != 0 {
			t.Errorf("%d retries in one process, want none", n)
		}
	})
	t.Run("Insert", func(t *testing.T) {
		ctx := testContext(t)
		obs := &observer{}
		o := counters.NewOptimistic(be.Database(t), counters.Options{Observer: obs, MaxRetries: -1})
		values := run(t, func(i int) (int64, error) {
			return o.Insert(ctx, "invoices", bson.D{{Key: "caller", Value: i}})
		})
		checkExactly(t, values, callers*perCaller)
		if n := obs.retries.Load(); n != 0 {
			t.Errorf("%d retries in one process, want none", n)
		}
	})
	t.Run("two processes", func(t *testing.T) {
		ctx := testContext(t)
		db := be.Database(t)
		obs := &observer{}
		procs := []*counters.Optimistic{
			counters.NewOptimistic(db, counters.Options{Observer: obs, MaxRetries: 10_000}),
			counters.NewOptimistic(db, counters.Options{Observer: obs, MaxRetries: 10_000}),
		}
		values := run(t, func(i int) (int64, error) { return procs[i%2].Next(ctx, "tickets") })
		checkExactly(t, values, callers*perCaller)
		t.Logf("%d retries between the two", obs.retries.Load())
	})
}

// commandLog records the commands a client sends.
type commandLog struct {
	mu   sync.Mutex
	cmds []bson.Raw
}

func (l *commandLog) started(_ context.Context, e *event.CommandStartedEvent) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cmds = append(l.cmds, append(bson.Raw(nil), e.Command...))
}

// take returns the commands sent since the last take.
func (l *commandLog) take() []bson.Raw {
	l.mu.Lock()
	defer l.mu.Unlock()
	cmds := l.cmds
	l.cmds = nil
	return cmds
}

// TestReadsOfPeeksAndWrites runs both strategies on a client whose URI prefers
// secondaries: no command they send asks for anything but the primary, and the
// reads of Current and List carry read concern majority (which the server then
// accepts). Against a standalone server the driver sends no read preference at
// all; against a replica set it would send the client's, unless pinned.
func TestReadsOfPeeksAndWrites(t *testing.T) {
	ctx := testContext(t)
	log := &commandLog{}
	client, err := mongo.Connect(options.Client().ApplyURI(be.URI).SetDirect(be.Direct).
		SetReadPreference(readpref.SecondaryPreferred()).
		SetMonitor(&event.CommandMonitor{Started: log.started}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Disconnect(context.Background()) })
	db := client.Database(backend.DatabaseName(t))
	t.Cleanup(func() { db.Drop(context.Background()) })

	check := func(what string, majority bool) {
		t.Helper()
		reads := 0
		for _, cmd := range log.take() {
			name := cmd.Index(0).Key()
			if rp, err := cmd.LookupErr("$readPreference", "mode"); err == nil {
				if mode := rp.StringValue(); mode != "primary" && mode != "primaryPreferred" {
					t.Errorf("%s: %s with read preference %s, want the primary", what, name, mode)
				}
			}
			if name != "find" {
				continue
			}
			reads++
			level, _ := cmd.Lookup("readConcern", "level").StringValueOK()
			if majority && level != "majority" {
				t.Errorf("%s: find with read concern %q, want majority", what, level)
			}
		}
		if majority && reads == 0 {
			t.Errorf("%s: no find sent", what)
		}
	}
	for _, s := range []sequencer{
		counters.NewCounter(db, counters.Options{}),
		counters.NewOptimistic(db, counters.Options{}),
	} {
		if _, err := s.Next(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		check(s.Strategy()+" Next", false)
		if v, err := s.Current(ctx, "a"); err != nil || v.Value != 1 {
			t.Errorf("%s Current = %+v, %v; want 1", s.Strategy(), v, err)
		}
		check(s.Strategy()+" Current", true)
		if l, err := s.List(ctx, counters.ListOptions{}); err != nil || len(l.Sequences) != 1 {
			t.Errorf("%s List = %v, %v; want one sequence", s.Strategy(), l, err)
		}
		check(s.Strategy()+" List", true)
	}
}
