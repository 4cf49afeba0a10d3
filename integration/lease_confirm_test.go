//go:build integration

package integration

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/seqd/seqd"
	"github.com/seqd/seqd/blocks"
	"github.com/seqd/seqd/counters"
	"github.com/seqd/seqd/integration/backend"
)

// refreshLog records the commands a client sends, as a command monitor sees them.
type refreshLog struct {
	mu   sync.Mutex
	cmds []bson.Raw
}

func (l *refreshLog) started(_ context.Context, e *event.CommandStartedEvent) {
	l.mu.Lock()
	l.cmds = append(l.cmds, append(bson.Raw(nil), e.Command...))
	l.mu.Unlock()
}

// take returns the commands sent since the last take.
func (l *refreshLog) take() []bson.Raw {
	l.mu.Lock()
	defer l.mu.Unlock()
	cmds := l.cmds
	l.cmds = nil
	return cmds
}

// monitoredDB returns a database of its own on a client whose commands log
// records.
func monitoredDB(t testing.TB, log *refreshLog) *mongo.Database {
	t.Helper()
	client := backend.Connect(t, options.Client().ApplyURI(be.URI).SetDirect(be.Direct).
		SetMonitor(&event.CommandMonitor{Started: log.started}))
	db := client.Database(backend.DatabaseName(t))
	t.Cleanup(func() { db.Drop(context.Background()) })
	return db
}

// refreshReads are the finds among cmds that the mode refresh sends: those
// with read concern linearizable or local (Current and List read majority;
// the read after a missed write sends none).
func refreshReads(cmds []bson.Raw) []bson.Raw {
	var out []bson.Raw
	for _, cmd := range cmds {
		if cmd.Index(0).Key() != "find" {
			continue
		}
		if level, _ := cmd.Lookup("readConcern", "level").StringValueOK(); level == "linearizable" || level == "local" {
			out = append(out, cmd)
		}
	}
	return out
}

// standalone reports whether the backend is a standalone server, as hello
// says: no replica set name, and not a mongos.
func standalone(t *testing.T, db *mongo.Database) bool {
	t.Helper()
	var hello struct {
		SetName string `bson:"setName"`
		Msg     string `bson:"msg"`
	}
	if err := db.RunCommand(testContext(t), bson.D{{Key: "hello", Value: 1}}).Decode(&hello); err != nil {
		t.Fatal(err)
	}
	return hello.SetName == "" && hello.Msg != "isdbgrid"
}

// Every read of the mode refresh carries a server-side bound (maxTimeMS) no
// longer than the lease: a linearizable read waits on a primary cut off from
// its majority with no other limit. Its read concern is linearizable on a
// replica set and local on a standalone server, which refuses linearizable
// (NotAReplicaSet) and where a plain read is as strong: no other node can
// accept a write.
func TestLeaseRefreshReadsBounded(t *testing.T) {
	log := &refreshLog{}
	db := monitoredDB(t, log)
	const lease = 2 * time.Second
	c := counters.NewCounter(db, counters.Options{ModeRefresh: 50 * time.Millisecond, BlockLease: lease})
	t.Cleanup(func() { c.Close(context.Background()) })
	mustSetMode(t, c, "orders", seqd.ModeCached, 10, 10)
	mustNext(t, c, "orders", 1)

	var reads []bson.Raw
	ctx := testContext(t)
	pollUntil(t, ctx, "five reads of the mode refresh", func() (bool, error) {
		reads = append(reads, refreshReads(log.take())...)
		return len(reads) >= 5, nil
	})
	want := "linearizable"
	if standalone(t, db) {
		want = "local"
	}
	for _, cmd := range reads {
		level := cmd.Lookup("readConcern", "level").StringValue()
		if level != want {
			t.Errorf("refresh read with read concern %s, want %s: %s", level, want, cmd)
		}
		ms, ok := cmd.Lookup("maxTimeMS").AsInt64OK()
		if !ok || ms <= 0 || ms > lease.Milliseconds() {
			t.Errorf("refresh read with maxTimeMS %v, want 1…%d: %s", cmd.Lookup("maxTimeMS"), lease.Milliseconds(), cmd)
		}
	}
}

// With many names cached, the mode refresh in the steady state reads no
// counter document: nothing changed, so one read of a small document confirms
// every lease. Counted with a command monitor, not timed.
func TestLeaseRefreshReadsConstant(t *testing.T) {
	log := &refreshLog{}
	db := monitoredDB(t, log)
	const names = 100
	c := counters.NewCounter(db, counters.Options{ModeRefresh: 50 * time.Millisecond, BlockLease: 5 * time.Second,
		Blocks: blocks.Options{MinBlock: 100, MaxBlock: 100}})
	t.Cleanup(func() { c.Close(context.Background()) })
	for i := range names {
		name := fmt.Sprintf("n%03d", i)
		mustSetMode(t, c, name, seqd.ModeCached, 0, 0)
		mustNext(t, c, name, 1)
	}
	ctx := testContext(t)
	// The first rounds read the new names; then the steady state, from the
	// third read in a row that reads no counter document.
	quiet := 0
	pollUntil(t, ctx, "three reads of the mode refresh in a row that read no counter document", func() (bool, error) {
		for _, cmd := range refreshReads(log.take()) {
			quiet++
			if coll, _ := cmd.Lookup("find").StringValueOK(); coll == counters.CounterCollection {
				quiet = 0
			}
		}
		return quiet >= 3, nil
	})
	var reads []bson.Raw
	pollUntil(t, ctx, "ten reads of the mode refresh", func() (bool, error) {
		reads = append(reads, refreshReads(log.take())...)
		return len(reads) >= 10, nil
	})
	read := 0
	for _, cmd := range reads {
		if coll, _ := cmd.Lookup("find").StringValueOK(); coll == counters.CounterCollection {
			read++
			t.Logf("a refresh read of counter documents: %.200s", cmd)
		}
	}
	if read > 0 {
		t.Errorf("%d of %d refresh reads in the steady state read counter documents, with %d names cached; want none", read, len(reads), names)
	}
	for i := range names {
		if _, ok := c.BlockStatus(fmt.Sprintf("n%03d", i)); !ok {
			t.Errorf("n%03d is no longer served from blocks: its lease was not confirmed", i)
		}
	}
}

// A mode change on one instance reaches another that holds many names within
// its ModeRefresh and a round trip, whichever change it is: a switch to strict
// (a drain), or other bounds. The lease is long, so only the refresh can tell.
func TestLeaseChangeSeenWithinRefresh(t *testing.T) {
	ctx := testContext(t)
	db := be.Database(t)
	const refresh = 100 * time.Millisecond
	opts := counters.Options{ModeRefresh: refresh, BlockLease: time.Minute, Blocks: blocks.Options{MinBlock: 100, MaxBlock: 100}}
	a := counters.NewCounter(db, opts)
	o := &leaseCounts{}
	opts.Observer = o
	b := counters.NewCounter(be.NewClient(t).Database(db.Name()), opts)
	t.Cleanup(func() { a.Close(context.Background()); b.Close(context.Background()) })
	const names = 50
	for i := range names {
		name := fmt.Sprintf("n%02d", i)
		mustSetMode(t, a, name, seqd.ModeCached, 0, 0)
		mustNext(t, b, name, 1)
	}
	// The steady state: b's refresh has read every name, and confirms them
	// by the change vector alone.
	rounds := o.rounds.Load()
	pollUntil(t, ctx, "two rounds of b's refresh", func() (bool, error) { return o.rounds.Load() >= rounds+2, nil })
	seen := func(name string, change func()) time.Duration {
		t.Helper()
		change()
		start := time.Now()
		pollUntil(t, ctx, "b to see the change of "+name, func() (bool, error) {
			_, ok := b.BlockStatus(name)
			return !ok, nil
		})
		return time.Since(start)
	}
	// A round trip here is well under a second; a refresh that missed the
	// change would leave the name served from blocks for the whole lease.
	const within = refresh + 2*time.Second
	if d := seen("n07", func() { mustSetMode(t, a, "n07", seqd.ModeStrict, 0, 0) }); d > within {
		t.Errorf("b saw n07 go strict after %v; want within %v", d, within)
	}
	if d := seen("n08", func() { mustSetMode(t, a, "n08", seqd.ModeCached, 7, 7) }); d > within {
		t.Errorf("b saw n08's new bounds after %v; want within %v", d, within)
	}
	for i := range names {
		name := fmt.Sprintf("n%02d", i)
		if _, ok := b.BlockStatus(name); ok == (name == "n07" || name == "n08") {
			t.Errorf("BlockStatus(%q) = %v after the changes of n07 and n08", name, ok)
		}
	}
}

// A lease confirmed by the change vector still ends when the store is cut
// off: every read and write of b fails, and b stops serving its blocks once
// its lease has run out, though it holds values.
func TestLeaseEndsStoreCutOff(t *testing.T) {
	be.RequireFailCommand(t)
	ctx := testContext(t)
	db := be.Database(t)
	const lease = time.Second
	opts := counters.Options{ModeRefresh: 50 * time.Millisecond, BlockLease: lease, Blocks: blocks.Options{MinBlock: 1000, MaxBlock: 1000}}
	b := counters.NewCounter(be.NewAppClient(t, "cut-off-b").Database(db.Name()), opts)
	t.Cleanup(func() { b.Close(context.Background()) })
	for i := range 20 {
		name := fmt.Sprintf("n%02d", i)
		mustSetMode(t, b, name, seqd.ModeCached, 0, 0)
		mustNext(t, b, name, 1)
	}
	be.FailCommand(t, "alwaysOn", bson.D{
		{Key: "failCommands", Value: bson.A{"find", "findAndModify", "update", "insert"}},
		{Key: "appName", Value: "cut-off-b"},
		{Key: "errorCode", Value: 91}, // ShutdownInProgress: unavailable
	})
	cut := time.Now()
	for {
		nctx, cancel := context.WithTimeout(ctx, time.Second)
		_, err := b.Next(nctx, "n03")
		cancel()
		if err != nil {
			if !errors.Is(err, counters.ErrUnavailable) {
				t.Fatalf("Next cut off: %v, want ErrUnavailable", err)
			}
			return
		}
		if since := time.Since(cut); since > lease+time.Second {
			t.Fatalf("b still serves from blocks %v after the store was cut off, with a lease of %v", since, lease)
		}
	}
}

// leaseCounts counts what the mode refresh tells a LeaseObserver.
type leaseCounts struct {
	observer
	rounds, failed, confirmed, expired atomic.Int64
}

func (o *leaseCounts) Refresh(_, confirmed int, _ time.Duration, err error) {
	o.rounds.Add(1)
	o.confirmed.Add(int64(confirmed))
	if err != nil {
		o.failed.Add(1)
	}
}

func (o *leaseCounts) LeaseExpired() { o.expired.Add(1) }

// A mode refresh whose reads fail (NotAReplicaSet, as a standalone mongod
// answers a linearizable read) is not dropped silently: the Observer counts
// it, the leases it could not confirm run out, and that is counted too.
func TestLeaseRefreshFailureCounted(t *testing.T) {
	be.RequireFailCommand(t)
	ctx := testContext(t)
	db := be.Database(t)
	o := &leaseCounts{}
	opts := counters.Options{ModeRefresh: 50 * time.Millisecond, BlockLease: 500 * time.Millisecond, Observer: o,
		Blocks: blocks.Options{MinBlock: 1000, MaxBlock: 1000}}
	c := counters.NewCounter(be.NewAppClient(t, "refresh-fails").Database(db.Name()), opts)
	t.Cleanup(func() { c.Close(context.Background()) })
	mustSetMode(t, c, "orders", seqd.ModeCached, 0, 0)
	mustNext(t, c, "orders", 1)
	pollUntil(t, ctx, "a refresh that confirms the lease", func() (bool, error) { return o.confirmed.Load() > 0, nil })

	be.FailCommand(t, "alwaysOn", bson.D{
		{Key: "failCommands", Value: bson.A{"find"}},
		{Key: "appName", Value: "refresh-fails"},
		{Key: "errorCode", Value: 123}, // NotAReplicaSet
	})
	pollUntil(t, ctx, "a failed refresh counted", func() (bool, error) { return o.failed.Load() > 0, nil })
	confirmed := o.confirmed.Load()
	// Past the lease, the next value comes from a new block: the old lease ran out.
	pollUntil(t, ctx, "the lease to run out", func() (bool, error) {
		_, err := c.Next(ctx, "orders")
		return o.expired.Load() > 0, err
	})
	if got := o.confirmed.Load(); got != confirmed {
		t.Errorf("%d leases confirmed while every refresh read failed", got-confirmed)
	}
}

// Close gives every tail back in bulk writes of the fenced updates: an update
// command per 25 names (50 updates), not one per name. One of them no longer
// matches (another instance wrote past the tail): that name is left as the
// other instance left it, and the others are given back.
func TestLeaseGiveBackBatch(t *testing.T) {
	ctx := testContext(t)
	log := &refreshLog{}
	db := monitoredDB(t, log)
	opts := counters.Options{ModeRefresh: time.Hour, BlockLease: time.Minute, Blocks: blocks.Options{MinBlock: 100, MaxBlock: 100}}
	a := counters.NewCounter(db, opts)
	other := counters.NewCounter(be.NewClient(t).Database(db.Name()), opts)
	t.Cleanup(func() { a.Close(context.Background()); other.Close(context.Background()) })
	const names = 30
	for i := range names {
		name := fmt.Sprintf("n%02d", i)
		mustSetMode(t, a, name, seqd.ModeCached, 0, 0)
		mustNext(t, a, name, 1) // a holds 2…100
	}
	mustNext(t, other, "n13", 101) // other's strict write, after which it serves n13 from blocks: a's tail no longer ends the sequence
	log.take()
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	updates := 0
	for _, cmd := range log.take() {
		if cmd.Index(0).Key() == "update" {
			updates++
		}
	}
	if want := (2*names + 49) / 50; updates != want {
		t.Errorf("Close sent %d update commands for %d names; want %d bulk writes of 50", updates, names, want)
	}
	for i := range names {
		name := fmt.Sprintf("n%02d", i)
		s, err := a.Current(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		want := seqd.BlockCounts{Reserved: 100, Served: 1, Returned: 99}
		value := int64(1)
		if name == "n13" {
			want = seqd.BlockCounts{Reserved: 100, Served: 1, Returned: 0}
			value = 101
		}
		if s.Value != value || s.Blocks != want {
			t.Errorf("%s after Close: value %d, counts %+v; want %d, %+v", name, s.Value, s.Blocks, value, want)
		}
	}
}
