//go:build integration

package integration

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/seqd/seqd"
	"github.com/seqd/seqd/blocks"
	"github.com/seqd/seqd/counters"
)

// What a switch out of cached mode and a give-back must keep, each as an outside
// review broke it: strict values stay linearizable with every answer before them,
// whichever instance gave it; an instance that cannot confirm its blocks stops
// serving them within its lease; a give-back never goes below a value set; a
// block fetch's report of what was served counts once.

// leaseOpts are the Counters' options in these tests: blocks of 10 fetched only
// when used up, a short lease, and a mode refresh that never comes, so that
// only the lease stops an instance that has not seen the switch.
func leaseOpts(lease time.Duration) counters.Options {
	return counters.Options{Blocks: blocks.Options{MinBlock: 10, MaxBlock: 10, Prefetch: 1}, ModeRefresh: time.Hour, BlockLease: lease}
}

// B holds 2…10 of a cached name; A switches it to strict and takes a value. B's
// next value, asked after A's answer, must be larger: B may serve its block only
// while its lease lasts, and A's first strict value waits until it has run out.
func TestCachedSwitchNoLowerValue(t *testing.T) {
	ctx := testContext(t)
	name := be.Database(t).Name()
	const lease = 300 * time.Millisecond
	a := counters.NewCounter(be.NewClient(t).Database(name), leaseOpts(lease))
	b := counters.NewCounter(be.NewClient(t).Database(name), leaseOpts(lease))
	t.Cleanup(func() { a.Close(context.Background()); b.Close(context.Background()) })

	mustSetMode(t, b, "orders", seqd.ModeCached, 10, 10)
	mustNext(t, b, "orders", 1) // b holds 2…10
	switched := time.Now()
	mustSetMode(t, a, "orders", seqd.ModeStrict, 0, 0)
	s, err := a.Current(ctx, "orders")
	if err != nil || s.Mode != seqd.ModeStrict || s.StrictFrom.IsZero() {
		t.Fatalf("Current after the switch = %+v, %v; want strict, draining (StrictFrom set)", s, err)
	}
	av, err := a.Next(ctx, "orders") // waits for the drain
	if err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(switched); waited < lease {
		t.Errorf("A's first strict value came %v after the switch, before B's lease (%v) could have run out", waited, lease)
	}
	bv, err := b.Next(ctx, "orders")
	if err != nil || bv <= av {
		t.Errorf("B's Next after A's strict %d: %d, %v; want a larger value", av, bv, err)
	}
	if s, err := a.Current(ctx, "orders"); err != nil || !s.StrictFrom.IsZero() {
		t.Errorf("Current after the drain = %+v, %v; want strict without StrictFrom", s, err)
	}
}

// B cannot read the modes (its finds fail), so it never sees A's switch. It must
// stop serving its block once its lease has run out, although 98 values are left
// in it, and from then on give no value at all, rather than one below A's.
func TestCachedLeaseBoundsStaleBlocks(t *testing.T) {
	be.RequireFailCommand(t)
	ctx := testContext(t)
	db := be.Database(t)
	const lease = 300 * time.Millisecond
	opts := leaseOpts(lease)
	opts.Blocks.MinBlock, opts.Blocks.MaxBlock = 100, 100
	opts.ModeRefresh = 20 * time.Millisecond
	a := counters.NewCounter(db, leaseOpts(lease))
	b := counters.NewCounter(be.NewAppClient(t, "cut-off").Database(db.Name()), opts)
	t.Cleanup(func() { a.Close(context.Background()); b.Close(context.Background()) })

	mustSetMode(t, b, "orders", seqd.ModeCached, 0, 0)
	mustNext(t, b, "orders", 1) // b holds 2…100
	f := be.FailCommand(t, "alwaysOn", bson.D{
		{Key: "failCommands", Value: bson.A{"find"}},
		{Key: "namespace", Value: db.Name() + "." + counters.CounterCollection},
		{Key: "appName", Value: "cut-off"},
		{Key: "errorCode", Value: 91}, // ShutdownInProgress: the store cannot answer B
	})
	if err := f.WaitEntered(ctx, 1); err != nil { // B's refresh failed once: its lease runs on
		t.Fatal(err)
	}
	mustSetMode(t, a, "orders", seqd.ModeStrict, 0, 0)
	switched := time.Now()
	av, err := a.Next(ctx, "orders")
	if err != nil || av <= 100 {
		t.Fatalf("A's first strict value: %d, %v; want one above B's block", av, err)
	}
	// Well past B's lease: the switch waits it out, and so does this test.
	time.Sleep(time.Until(switched.Add(lease + 100*time.Millisecond)))
	for i := range 3 {
		v, err := b.Next(ctx, "orders")
		if err == nil && v <= av {
			t.Fatalf("B's Next %d, %v after A's strict %d, its lease over: a value from its old block", v, err, av)
		}
		if err != nil && !errors.Is(err, counters.ErrUnavailable) {
			t.Fatalf("B's Next %d: %v, want a larger value or ErrUnavailable", i, err)
		}
	}
	if err := f.Off(ctx); err != nil {
		t.Fatal(err)
	}
	if v, err := b.Next(ctx, "orders"); err != nil || v <= av {
		t.Errorf("B's Next with the store back: %d, %v; want a strict value above %d", v, err, av)
	}
}

// A holds 2…10 and the stored seq is 10; a Set to 10 (equal, so allowed) must keep
// the give-back of 2…10 from moving seq below it, at the switch and at Close.
func TestCachedGiveBackAfterSet(t *testing.T) {
	for _, via := range []string{"switch", "close"} {
		t.Run(via, func(t *testing.T) {
			ctx := testContext(t)
			name := be.Database(t).Name()
			a := counters.NewCounter(be.NewClient(t).Database(name), leaseOpts(300*time.Millisecond))
			other := counters.NewCounter(be.NewClient(t).Database(name), leaseOpts(300*time.Millisecond))
			t.Cleanup(func() { a.Close(context.Background()); other.Close(context.Background()) })
			mustSetMode(t, a, "orders", seqd.ModeCached, 10, 10)
			mustNext(t, a, "orders", 1) // a holds 2…10
			if err := other.Set(ctx, "orders", 10, false); err != nil {
				t.Fatal(err)
			}
			switch via {
			case "switch":
				mustSetMode(t, a, "orders", seqd.ModeStrict, 0, 0) // a gives back as it switches
			case "close":
				if err := a.Close(ctx); err != nil {
					t.Fatal(err)
				}
				mustSetMode(t, other, "orders", seqd.ModeStrict, 0, 0)
			}
			if s, err := other.Current(ctx, "orders"); err != nil || s.Value < 10 {
				t.Errorf("after the give-back: %+v, %v; want the value set, 10, or more", s, err)
			}
			if v, err := other.Next(ctx, "orders"); err != nil || v <= 10 {
				t.Errorf("Next after Set(10): %d, %v; want a value above 10", v, err)
			}
		})
	}
}

// A block fetch that the store applied, but whose answer fails the one check a
// filter cannot make (minBlock above maxBlock, written by someone else), has
// reported what was served: the give-back at Close must not report it again.
func TestCachedFetchReportCountsOnce(t *testing.T) {
	ctx := testContext(t)
	db := be.Database(t)
	c := counters.NewCounter(db, leaseOpts(time.Minute))
	t.Cleanup(func() { c.Close(context.Background()) })
	mustSetMode(t, c, "orders", seqd.ModeCached, 10, 10)
	coll := db.Collection(counters.CounterCollection)
	setBounds := func(min, max int64) {
		t.Helper()
		if _, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: "orders"}}, bson.D{{Key: "$set", Value: bson.D{{Key: "minBlock", Value: min}, {Key: "maxBlock", Value: max}}}}); err != nil {
			t.Fatal(err)
		}
	}
	for want := int64(1); want <= 10; want++ {
		if want == 10 {
			// Before the last value of the block, whose taking starts the
			// fetch of the next (Prefetch 1): that fetch must see these bounds.
			setBounds(30, 20) // each bound valid alone: the fetch's filter matches
		}
		mustNext(t, c, "orders", want)
	}
	if v, err := c.Next(ctx, "orders"); !errors.Is(err, counters.ErrInvalidCounter) {
		t.Fatalf("Next with bounds 30 and 20: %d, %v; want ErrInvalidCounter", v, err)
	}
	setBounds(10, 10)
	if err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}
	s, err := c.Current(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	if s.Blocks.Served != 10 || s.Blocks.Reserved != 20 || s.Blocks.Unaccounted() != 10 {
		t.Errorf("counts %+v; want 10 served of 20 reserved, the lost block of 10 unaccounted", s.Blocks)
	}
}
