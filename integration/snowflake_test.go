//go:build integration

package integration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/seqd/seqd/snowflake"
)

// sfLease is a short lease, so that a worker id changes hands in a second.
const sfLease = 300 * time.Millisecond

// sfLessor starts a Lessor of JS53 ids over the first workers worker ids of
// db, with a clock offset by offset, and closes it when the test ends.
func sfLessor(t *testing.T, db *mongo.Database, workers int, offset *atomic.Int64) *snowflake.Lessor {
	t.Helper()
	opts := snowflake.LeaseOptions{Lease: sfLease, Workers: workers, Timeout: 2 * time.Second}
	if offset != nil {
		opts.Generator = []snowflake.Option{snowflake.WithClock(func() time.Time {
			return time.Now().Add(time.Duration(offset.Load()))
		})}
	}
	l, err := snowflake.NewLessor(testContext(t), db, snowflake.JS53, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close(context.Background()) })
	return l
}

// sfFirst polls g until it makes an id, within a deadline, and returns it
// with when it was made. It may run on a goroutine of its own.
func sfFirst(g *snowflake.Generator, within time.Duration) (snowflake.ID, time.Time, error) {
	deadline := time.Now().Add(within)
	for {
		id, err := g.New()
		if err == nil {
			return id, time.Now(), nil
		}
		if !errors.Is(err, snowflake.ErrNoWorker) && !errors.Is(err, snowflake.ErrClockBehind) {
			return 0, time.Time{}, err
		}
		if time.Now().After(deadline) {
			return 0, time.Time{}, fmt.Errorf("no id within %v: %w", within, err)
		}
		time.Sleep(time.Millisecond)
	}
}

func sfWaitFor(t *testing.T, g *snowflake.Generator, within time.Duration) snowflake.ID {
	t.Helper()
	id, _, err := sfFirst(g, within)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestSnowflakeWorkerChangesHandsOnClose: with one worker id between two
// Lessors, the second gets none until the first gives it back, and then makes
// ids above every id the first made.
func TestSnowflakeWorkerChangesHandsOnClose(t *testing.T) {
	db := be.Database(t)
	a := sfLessor(t, db, 1, nil)
	b := sfLessor(t, db, 1, nil)
	var last snowflake.ID
	for range 1000 {
		id, err := a.Generator().New()
		if err != nil {
			t.Fatalf("holder: %v", err)
		}
		last = id
	}
	if _, err := b.Generator().New(); !errors.Is(err, snowflake.ErrNoWorker) {
		t.Fatalf("second Lessor while the first holds the only worker id: %v, want ErrNoWorker", err)
	}
	if err := a.Close(testContext(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Generator().New(); !errors.Is(err, snowflake.ErrNoWorker) {
		t.Fatalf("closed Lessor's Generator: %v, want ErrNoWorker", err)
	}
	first := sfWaitFor(t, b.Generator(), 5*sfLease)
	if first <= last {
		t.Fatalf("new holder's first id %d is not above the last holder's last, %d", first, last)
	}
	if s := b.Status(); !s.Held || s.Worker != 0 {
		t.Errorf("new holder's status: %+v", s)
	}
}

// TestSnowflakePartitionedHolderStopsFirst cuts the holder of the only worker
// id off the workers collection: it stops making ids when its lease runs out,
// before the other Lessor makes its first, whose ids are above all of its.
// The holder's wall clock runs at half speed, so that only its lease, timed
// on the monotonic clock, can stop it in time (the millisecond it recorded
// with its last renewal would stop it only after two leases); the other's
// runs an hour ahead, so that it makes ids as soon as it has the worker id.
func TestSnowflakePartitionedHolderStopsFirst(t *testing.T) {
	be.RequireFailCommand(t)
	db := be.Database(t)
	start := time.Now()
	a := sfLessorOn(t, be.NewAppClient(t, "sfHolder").Database(db.Name()), func() time.Time {
		return start.Add(time.Since(start) / 2)
	})
	ahead := func() time.Time { return time.Now().Add(time.Hour) }
	b := sfLessorOn(t, db, ahead)
	if _, err := a.Generator().New(); err != nil {
		t.Fatalf("holder: %v", err)
	}
	be.FailCommand(t, "alwaysOn", bson.D{
		{Key: "failCommands", Value: bson.A{"update", "find", "insert"}},
		{Key: "appName", Value: "sfHolder"},
		{Key: "closeConnection", Value: true},
	})
	cut := time.Now()
	// The other Lessor tries all along; the holder makes ids while its lease
	// lasts, and then none.
	type first struct {
		id  snowflake.ID
		at  time.Time
		err error
	}
	fromB := make(chan first, 1)
	go func() {
		id, at, err := sfFirst(b.Generator(), 10*sfLease)
		fromB <- first{id, at, err}
	}()
	var lastA snowflake.ID
	var lastAt time.Time
	deadline := time.Now().Add(10 * sfLease)
	for {
		id, err := a.Generator().New()
		if err != nil {
			if !errors.Is(err, snowflake.ErrNoWorker) {
				t.Fatalf("partitioned holder: %v", err)
			}
			break
		}
		lastA, lastAt = id, time.Now()
		if time.Now().After(deadline) {
			t.Fatalf("partitioned holder still makes ids %v after the cut", 10*sfLease)
		}
	}
	fb := <-fromB
	if fb.err != nil {
		t.Fatalf("new holder: %v", fb.err)
	}
	firstB, firstAt := fb.id, fb.at
	t.Logf("holder stopped %v after it was cut off; the new holder started %v after", lastAt.Sub(cut), firstAt.Sub(cut))
	if !lastAt.Before(firstAt) {
		t.Errorf("partitioned holder's last id at %v, not before the new holder's first at %v", lastAt, firstAt)
	}
	if firstB <= lastA {
		t.Errorf("new holder's first id %d is not above the partitioned holder's last, %d", firstB, lastA)
	}
	if _, err := a.Generator().New(); !errors.Is(err, snowflake.ErrNoWorker) {
		t.Errorf("partitioned holder after the takeover: %v, want ErrNoWorker", err)
	}
}

// sfLessorOn starts a Lessor of JS53 ids over worker id 0 of db, on clock,
// and closes it when the test ends.
func sfLessorOn(t *testing.T, db *mongo.Database, clock func() time.Time) *snowflake.Lessor {
	t.Helper()
	l, err := snowflake.NewLessor(testContext(t), db, snowflake.JS53, snowflake.LeaseOptions{
		Lease: sfLease, Workers: 1, Timeout: 2 * time.Second,
		Generator: []snowflake.Option{snowflake.WithClock(clock)},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close(context.Background()) })
	return l
}

// TestSnowflakeRestartWithClockSetBack restarts a Lessor with its clock an
// hour behind: with only the worker id it had, it makes no id until its clock
// passes the last one recorded (never one at or below it); with a second
// worker id free, it takes that one instead.
func TestSnowflakeRestartWithClockSetBack(t *testing.T) {
	db := be.Database(t)
	a := sfLessor(t, db, 1, nil)
	for range 100 {
		if _, err := a.Generator().New(); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Close(testContext(t)); err != nil {
		t.Fatal(err)
	}
	var back atomic.Int64
	back.Store(int64(-time.Hour))
	b := sfLessor(t, db, 1, &back)
	if s := b.Status(); !s.Held || s.Worker != 0 {
		t.Fatalf("restarted Lessor: %+v, want worker id 0", s)
	}
	if id, err := b.Generator().New(); !errors.Is(err, snowflake.ErrClockBehind) {
		t.Fatalf("restarted an hour behind, same worker id: %d, %v, want ErrClockBehind", id, err)
	}
	if err := b.Close(testContext(t)); err != nil {
		t.Fatal(err)
	}
	c := sfLessor(t, db, 2, &back)
	id := sfWaitFor(t, c.Generator(), 5*sfLease)
	p, err := snowflake.JS53.Decode(id)
	if err != nil {
		t.Fatal(err)
	}
	if p.Worker != 1 {
		t.Errorf("restarted an hour behind with worker id 1 free: made %d under worker id %d, want 1", id, p.Worker)
	}
}

// TestSnowflakeOverHTTP runs two seqd instances in the js53 layout on one
// database: each leases a worker id of its own, their ids never meet,
// /snowflake/{id} and /healthz name the layout (and /healthz the worker id),
// and a clean stop gives the worker id back.
func TestSnowflakeOverHTTP(t *testing.T) {
	dbName := be.Database(t).Name()
	env := []string{"SEQD_SNOWFLAKE_LAYOUT=js53"}
	a, b := startSeqdAt(t, seqdURI(), dbName, env...), startSeqdAt(t, seqdURI(), dbName, env...)
	seen := map[int64]bool{}
	workers := map[int]bool{}
	for _, srv := range []string{a.URL(), b.URL()} {
		var r struct{ Snowflakes []int64 }
		do(t, srv, call{path: "/snowflake?count=1000"}).want(t, 200, &r)
		for i, id := range r.Snowflakes {
			if seen[id] || i > 0 && id <= r.Snowflakes[i-1] || id > 1<<53-1 {
				t.Fatalf("%s: id %d repeated, out of order or past 2^53-1", srv, id)
			}
			seen[id] = true
		}
		var info struct {
			Worker int
			Layout string
		}
		do(t, srv, call{path: fmt.Sprintf("/snowflake/%d", r.Snowflakes[0])}).want(t, 200, &info)
		if info.Layout != "js53" || workers[info.Worker] {
			t.Errorf("%s: decoded %+v; want layout js53 and a worker id of its own", srv, info)
		}
		workers[info.Worker] = true
		var h struct {
			Snowflake struct {
				Layout string
				Worker *int
				Until  string
			}
		}
		do(t, srv, call{path: "/healthz"}).want(t, 200, &h)
		if h.Snowflake.Layout != "js53" || h.Snowflake.Worker == nil || *h.Snowflake.Worker != info.Worker || h.Snowflake.Until == "" {
			t.Errorf("%s: /healthz %+v; want js53, worker id %d and until when", srv, h.Snowflake, info.Worker)
		}
	}
	if err := a.Stop(testContext(t)); err != nil {
		t.Fatal(err)
	}
	var doc struct{ Holder string }
	err := be.Client.Database(dbName).Collection(snowflake.WorkerCollection).FindOne(testContext(t), bson.D{{Key: "holder", Value: ""}}).Decode(&doc)
	if err != nil {
		t.Errorf("after a clean stop, no worker id given back: %v", err)
	}
}

// TestSnowflakePausedHolderAnswers503 pauses a seqd (SIGSTOP) past its 1 s
// lease on worker id 0, the only one free (the others are held by a holder
// the test renews), lets a Lessor take worker id 0 meanwhile, and wakes it with
// its renewals held up by failCommand: its answers are then 503 with
// Retry-After, never an id under the lease that ran out, and the new holder's
// ids are above all of its.
func TestSnowflakePausedHolderAnswers503(t *testing.T) {
	be.RequireFailCommand(t)
	db := be.Database(t)
	ctx := testContext(t)
	workers := db.Collection(snowflake.WorkerCollection)
	for w := 1; w < snowflake.JS53.Workers(); w++ {
		if _, err := workers.InsertOne(ctx, bson.D{{Key: "_id", Value: w}, {Key: "layout", Value: "js53"}, {Key: "holder", Value: "other"},
			{Key: "version", Value: int64(1)}, {Key: "lastMs", Value: int64(0)}, {Key: "leaseMs", Value: int64(1000)}}); err != nil {
			t.Fatal(err)
		}
	}
	renewCtx, stopRenewing := context.WithCancel(ctx)
	renewed := make(chan struct{})
	go func() { // the other holder renews its worker ids until the test ends
		defer close(renewed)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-renewCtx.Done():
				return
			case <-tick.C:
				workers.UpdateMany(renewCtx, bson.D{{Key: "holder", Value: "other"}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "version", Value: int64(1)}}}})
			}
		}
	}()
	t.Cleanup(func() { stopRenewing(); <-renewed })

	a := startSeqdAt(t, seqdURI(), db.Name(), "SEQD_SNOWFLAKE_LAYOUT=js53", "SEQD_BLOCK_LEASE=1s", "SEQD_MODE_REFRESH=200ms")
	var r struct{ Snowflakes []int64 }
	do(t, a.URL(), call{path: "/snowflake?count=10"}).want(t, 200, &r)
	lastA := r.Snowflakes[len(r.Snowflakes)-1]
	if p, err := snowflake.JS53.Decode(snowflake.ID(lastA)); err != nil || p.Worker != 0 {
		t.Fatalf("seqd's id %d: %+v, %v; want worker id 0", lastA, p, err)
	}

	if err := a.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Signal(syscall.SIGCONT) })
	b, err := snowflake.NewLessor(ctx, db, snowflake.JS53, snowflake.LeaseOptions{Lease: time.Second, Workers: 1, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close(context.Background()) })
	firstB := sfWaitFor(t, b.Generator(), 10*time.Second)
	if firstB <= snowflake.ID(lastA) {
		t.Errorf("new holder's first id %d is not above the paused holder's last, %d", firstB, lastA)
	}

	// seqd's renewals hang on waking, so that its answers meet a lease that ran
	// out, not one it learned it lost.
	be.FailCommand(t, "alwaysOn", bson.D{
		{Key: "failCommands", Value: bson.A{"update", "find"}},
		{Key: "appName", Value: "seqd"},
		{Key: "blockConnection", Value: true},
		{Key: "blockTimeMS", Value: 3000},
	})
	if err := a.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	for range 10 {
		rep := do(t, a.URL(), call{path: "/snowflake"})
		if rep.status != http.StatusServiceUnavailable || rep.header.Get("Retry-After") == "" {
			t.Fatalf("woken holder: %d %s (Retry-After %q), want 503 with Retry-After", rep.status, rep.body, rep.header.Get("Retry-After"))
		}
		time.Sleep(50 * time.Millisecond) // a client's pace
	}
}

// TestSnowflakeLayoutMismatch: a Lessor of one layout refuses a workers
// collection of the other, and changes none of its documents.
func TestSnowflakeLayoutMismatch(t *testing.T) {
	db := be.Database(t)
	ctx := testContext(t)
	a := sfLessor(t, db, 1, nil) // js53
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	coll := db.Collection(snowflake.WorkerCollection)
	before, err := coll.FindOne(ctx, bson.D{}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := snowflake.NewLessor(ctx, db, snowflake.Twitter, snowflake.LeaseOptions{Lease: sfLease}); !errors.Is(err, snowflake.ErrLayoutMismatch) {
		t.Fatalf("twitter Lessor on a js53 collection: %v, want ErrLayoutMismatch", err)
	}
	after, err := coll.FindOne(ctx, bson.D{}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) { // bson.M's String follows map order, which varies
		t.Errorf("worker document changed: %v, then %v", before, after)
	}
}
