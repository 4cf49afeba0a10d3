//go:build integration

package integration

import (
	"context"
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/seqd/seqd/counters"
	"github.com/seqd/seqd/integration/backend"
)

// PeriodValue with an empty key names no period: before a periodic
// sequence's first value, and after a new time zone left the last value of
// the old one stored, it is ErrNotFound. Observed: 0 and 3, as if "" were the
// current period's key.
func TestNumberingPeriodValueEmptyKey(t *testing.T) {
	ctx := testContext(t)
	c := counters.NewCounter(be.Database(t), newClock(time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)).opts())
	if err := c.SetNumbering(ctx, "e", counters.Numbering{Period: "day"}); err != nil {
		t.Fatal(err)
	}
	if v, err := c.PeriodValue(ctx, "e", ""); !errors.Is(err, counters.ErrNotFound) {
		t.Errorf("before the first value: PeriodValue(\"\") = %d, %v; want ErrNotFound", v, err)
	}
	mustNumbered(t, c, "e", 3, "2026-11-26")
	if v, err := c.PeriodValue(ctx, "e", ""); !errors.Is(err, counters.ErrNotFound) {
		t.Errorf("after values: PeriodValue(\"\") = %d, %v; want ErrNotFound", v, err)
	}
}

// A period that ran out of values ends: the next period starts at 1 even
// while callers of the exhausted one keep coming. Observed: ErrExhausted in
// the new minute, from the coalescer's memory of the old one.
func TestNumberingExhaustedPeriodEnds(t *testing.T) {
	ctx := testContext(t)
	db := be.Database(t)
	clock := newClock(time.Date(2026, 11, 26, 17, 4, 30, 0, time.UTC))
	c := counters.NewCounter(db, clock.opts())
	if err := c.SetNumbering(ctx, "x", counters.Numbering{Period: "minute"}); err != nil {
		t.Fatal(err)
	}
	mustNumbered(t, c, "x", 1, "2026-11-26T17:04")
	if err := c.Set(ctx, "x", math.MaxInt64-1, true); err != nil {
		t.Fatal(err)
	}
	mustNumbered(t, c, "x", 1, "2026-11-26T17:04")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 16 { // callers of the exhausted minute keep coming
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := c.NextNumbered(ctx, "x", 1); err != nil && !errors.Is(err, counters.ErrExhausted) {
					t.Error(err)
					return
				}
			}
		})
	}
	_, err := c.NextNumbered(ctx, "x", 1)
	if !errors.Is(err, counters.ErrExhausted) {
		t.Errorf("at the end of the minute: %v, want ErrExhausted", err)
	}
	clock.set(time.Date(2026, 11, 26, 17, 5, 0, 0, time.UTC))
	got, err := c.NextNumbered(ctx, "x", 1)
	close(stop)
	wg.Wait()
	if err != nil || got.Period != "2026-11-26T17:05" || got.Last < 1 {
		t.Errorf("in the next minute: %+v, %v; want a value of 2026-11-26T17:05", got, err)
	}
}

// An instance whose clock has passed a period's start begins the new period
// while instances whose clocks are still in the old one keep writing: the
// old period's writers must not make every attempt of the new one fail.
func TestNumberingNewPeriodWhileOthersWrite(t *testing.T) {
	ctx := testContext(t)
	db := be.Database(t)
	t0 := time.Date(2026, 11, 26, 17, 4, 59, 0, time.UTC)
	behind, ahead := newClock(t0), newClock(t0.Add(2*time.Second))
	b := counters.NewCounter(db, counters.Options{Clock: behind.now, WritesInFlight: 4})
	a := counters.NewCounter(db, ahead.opts())
	if err := b.SetNumbering(ctx, "inv", counters.Numbering{Period: "minute"}); err != nil {
		t.Fatal(err)
	}
	mustNumbered(t, b, "inv", 1, "2026-11-26T17:04")
	stop := keepTaking(t, ctx, b, "inv")
	got, err := a.NextNumbered(ctx, "inv", 1)
	after, errAfter := b.NextNumbered(ctx, "inv", 1) // begun after a's answer: periods never go back
	stop()
	if err != nil || got.Period != "2026-11-26T17:05" {
		t.Errorf("the new minute's first value: %+v, %v; want a value of 2026-11-26T17:05", got, err)
	}
	if errAfter != nil || after.Period != "2026-11-26T17:05" || after.Last <= got.Last {
		t.Errorf("a value taken by a clock in 17:04 after %+v: %+v, %v; want a later one of 17:05", got, after, errAfter)
	}
}

// A value set on a periodic sequence is the current period's: set before its
// first period began (PUT {"value":4211,"period":"year"} on a new name), it is
// where that period continues; set when the stored period is over, it begins
// the clock's at that value and keeps the old one's last value; within the
// period, it moves the value up, and back only with force. Observed before:
// the first is dropped in silence, the next value is INV-2026-000001.
func TestNumberingSetBeforeFirstPeriod(t *testing.T) {
	ctx := testContext(t)
	clock := newClock(time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC))
	db := be.Database(t)
	c := counters.NewCounter(db, clock.opts())
	if err := c.SetNumbering(ctx, "inv", counters.Numbering{Period: "year", Format: "INV-{yyyy}-{seq:6}"}); err != nil {
		t.Fatal(err)
	}
	if err := c.Set(ctx, "inv", 4211, false); err != nil {
		t.Fatal(err)
	}
	if got := mustNumbered(t, c, "inv", 1, "2026"); got.Last != 4212 || got.Formatted != "INV-2026-004212" {
		t.Errorf("after Set 4211 before the first period: %+v, want INV-2026-004212", got)
	}
	if err := c.Set(ctx, "inv", 4000, false); !errors.Is(err, counters.ErrBackwards) {
		t.Errorf("Set 4000 at 4212 of 2026: %v, want ErrBackwards", err)
	}
	if err := c.Set(ctx, "inv", 5000, false); err != nil {
		t.Fatal(err)
	}
	mustNumbered(t, c, "inv", 1, "2026")
	if err := c.Set(ctx, "inv", 4500, true); err != nil {
		t.Fatal(err)
	}
	if got := mustNumbered(t, c, "inv", 1, "2026"); got.Last != 4501 {
		t.Errorf("after a forced Set 4500: %+v, want 4501", got)
	}
	// 2027: a Set begins the clock's year at its value; 2026's last value stays.
	clock.set(time.Date(2027, 1, 2, 0, 0, 0, 0, time.UTC))
	if err := c.Set(ctx, "inv", 17, false); err != nil {
		t.Fatal(err)
	}
	if got := mustNumbered(t, c, "inv", 1, "2027"); got.Last != 18 {
		t.Errorf("after Set 17 in 2027: %+v, want 18 of 2027", got)
	}
	if v, err := c.PeriodValue(ctx, "inv", "2026"); err != nil || v != 4501 {
		t.Errorf("PeriodValue 2026 = %d, %v; want 4501", v, err)
	}
	// A clock behind the stored year sets the stored year's value: periods never go back.
	behind := counters.NewCounter(db, newClock(time.Date(2026, 12, 31, 23, 0, 0, 0, time.UTC)).opts())
	if err := behind.Set(ctx, "inv", 30, false); err != nil {
		t.Fatal(err)
	}
	if got := mustNumbered(t, c, "inv", 1, "2027"); got.Last != 31 {
		t.Errorf("after Set 30 from a clock in 2026: %+v, want 31 of 2027", got)
	}
}

// SetNumbering refuses another time zone once values of a period were handed
// out, also when the first value is handed out between its read and its
// write: the write must not match a document whose period has begun since.
// Observed: the zone changes, the next value is INV-2026-000001 again.
func TestNumberingZoneChangeRacingFirstValue(t *testing.T) {
	ctx := testContext(t)
	db := be.Database(t)
	clock := newClock(time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC))
	a := counters.NewCounter(db, clock.opts())
	inv := counters.Numbering{Period: "year", Format: "INV-{yyyy}-{seq:6}"}
	if err := a.SetNumbering(ctx, "inv", inv); err != nil {
		t.Fatal(err)
	}
	// b's SetNumbering reads the document before the first value, and a hands
	// that value out just before b's write is sent.
	var first counters.Numbered
	var once sync.Once
	hook := &event.CommandMonitor{Started: func(_ context.Context, e *event.CommandStartedEvent) {
		if e.CommandName == "findAndModify" {
			once.Do(func() { first = mustNumbered(t, a, "inv", 1, "2026") })
		}
	}}
	client := backend.Connect(t, options.Client().ApplyURI(be.URI).SetDirect(be.Direct).SetMonitor(hook))
	b := counters.NewCounter(client.Database(db.Name()), clock.opts())
	berlin := inv
	berlin.TimeZone = "Europe/Berlin"
	errZone := b.SetNumbering(ctx, "inv", berlin)
	if first.Formatted != "INV-2026-000001" {
		t.Fatalf("the first value: %+v, want INV-2026-000001 (the hook did not run before the write)", first)
	}
	next := mustNumbered(t, a, "inv", 1, "2026")
	if errZone == nil || next.Formatted == first.Formatted {
		t.Errorf("a new zone racing the first value: SetNumbering = %v, then %+v; want ErrInvalidMode and no number twice", errZone, next)
	}
}

// A Set from an instance whose clock has passed a period's start begins that
// period at its value while instances whose clocks are still in the old one
// keep writing, as a value taken there does (TestNumberingNewPeriodWhileOthersWrite).
// Observed: ErrContention, every write that begins the period missed.
func TestNumberingSetNewPeriodWhileOthersWrite(t *testing.T) {
	ctx := testContext(t)
	db := be.Database(t)
	t0 := time.Date(2026, 11, 26, 17, 4, 59, 0, time.UTC)
	behind, ahead := newClock(t0), newClock(t0.Add(2*time.Second))
	b := counters.NewCounter(db, counters.Options{Clock: behind.now, WritesInFlight: 4})
	a := counters.NewCounter(db, ahead.opts())
	if err := b.SetNumbering(ctx, "inv", counters.Numbering{Period: "minute"}); err != nil {
		t.Fatal(err)
	}
	mustNumbered(t, b, "inv", 1, "2026-11-26T17:04")
	stop := keepTaking(t, ctx, b, "inv")
	err := a.Set(ctx, "inv", 100, false)
	stop()
	if err != nil {
		t.Errorf("Set 100 from a clock in 17:05: %v, want nil", err)
	}
	if got := mustNumbered(t, a, "inv", 1, "2026-11-26T17:05"); err == nil && got.Last <= 100 {
		t.Errorf("after Set 100 in 17:05: %+v, want above 100", got)
	}
}

// Moving an invoice numbering that stands at 4211 to seqd is one request,
// PUT {"period":"year",…,"value":4211}: one SetNumberingValue, whose write
// sets both. A value taken between its read and its write is a plain one
// (before the PUT: no plain write matches after it); none is formatted as a
// value of 2026 below 4212, a number the old system has handed out already.
// Observed, when the PUT was SetNumbering, then Set: INV-2026-000001.
func TestNumberingValueWithPeriodIsOneStep(t *testing.T) {
	ctx := testContext(t)
	db := be.Database(t)
	clock := newClock(time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC))
	a := counters.NewCounter(db, clock.opts())
	var between counters.Numbered
	var betweenErr error
	var writes atomic.Int64
	hook := &event.CommandMonitor{Started: func(_ context.Context, e *event.CommandStartedEvent) {
		if e.CommandName == "findAndModify" && writes.Add(1) == 1 { // the PUT's first write, after its read
			between, betweenErr = a.NextNumbered(ctx, "inv", 1)
		}
	}}
	client := backend.Connect(t, options.Client().ApplyURI(be.URI).SetDirect(be.Direct).SetMonitor(hook))
	admin := counters.NewCounter(client.Database(db.Name()), clock.opts())
	if err := admin.SetNumberingValue(ctx, "inv", counters.Numbering{Period: "year", Format: "INV-{yyyy}-{seq:6}"}, 4211, false); err != nil {
		t.Fatal(err)
	}
	if betweenErr != nil || between.Period != "" {
		t.Errorf("a value taken during the PUT: %+v, %v; want a plain one, from before it", between, betweenErr)
	}
	if got := mustNumbered(t, a, "inv", 1, "2026"); got.Formatted != "INV-2026-004212" {
		t.Errorf("after the PUT: %+v, want INV-2026-004212", got)
	}
}

// SetNumberingValue is both or neither: a value refused (backwards) leaves
// the numbering as it was, and a numbering refused leaves the value.
func TestNumberingValueRefusedChangesNothing(t *testing.T) {
	ctx := testContext(t)
	c := counters.NewCounter(be.Database(t), newClock(time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)).opts())
	if err := c.SetNumberingValue(ctx, "inv", counters.Numbering{Period: "year", Format: "A-{yyyy}-{seq}"}, 3, false); err != nil {
		t.Fatal(err)
	}
	if err := c.SetNumberingValue(ctx, "inv", counters.Numbering{Period: "year", Format: "B-{yyyy}-{seq}"}, 1, false); !errors.Is(err, counters.ErrBackwards) {
		t.Errorf("value 1 at 3: %v, want ErrBackwards", err)
	}
	if err := c.SetNumberingValue(ctx, "inv", counters.Numbering{Period: "month", Format: "C-{seq}"}, 9, true); !errors.Is(err, counters.ErrInvalidMode) {
		t.Errorf("another period: %v, want ErrInvalidMode", err)
	}
	if got := mustNumbered(t, c, "inv", 1, "2026"); got.Formatted != "A-2026-4" {
		t.Errorf("after two refusals: %+v, want A-2026-4", got)
	}
	// Forced back, and a plain sequence's value with its numbering turned off.
	if err := c.SetNumberingValue(ctx, "inv", counters.Numbering{Period: "year", Format: "B-{yyyy}-{seq}"}, 1, true); err != nil {
		t.Fatal(err)
	}
	if got := mustNumbered(t, c, "inv", 1, "2026"); got.Formatted != "B-2026-2" {
		t.Errorf("after a forced value 1: %+v, want B-2026-2", got)
	}
	if err := c.SetNumberingValue(ctx, "plain", counters.Numbering{Format: "P-{seq:3}"}, 41, false); err != nil {
		t.Fatal(err)
	}
	if got := mustNumbered(t, c, "plain", 1, ""); got.Formatted != "P-042" {
		t.Errorf("a format and a value on a new name: %+v, want P-042", got)
	}
}

// A Set from a clock in the stored period sets that period's value, also
// while another instance's announcement of the next period is on the
// document (left by an instance that stopped before beginning it): the
// announced period is not stored, and begins at 1 with the next value.
// Observed: the Set begins the announced minute at its value (no
// ErrBackwards for 2 at 3; 17:05 starts at 11, and 17:04 ends at 3).
func TestNumberingSetWhileAnnounced(t *testing.T) {
	ctx := testContext(t)
	db := be.Database(t)
	t0 := time.Date(2026, 11, 26, 17, 4, 30, 0, time.UTC)
	a := counters.NewCounter(db, newClock(t0).opts())
	b := counters.NewCounter(db, newClock(t0.Add(time.Minute)).opts())
	if err := a.SetNumbering(ctx, "inv", counters.Numbering{Period: "minute"}); err != nil {
		t.Fatal(err)
	}
	mustNumbered(t, a, "inv", 3, "2026-11-26T17:04")
	// The announcement an instance in 17:05 leaves when it stops after it.
	next := time.Date(2026, 11, 26, 17, 5, 0, 0, time.UTC).UnixMilli()
	if _, err := db.Collection(counters.CounterCollection).UpdateByID(ctx, "inv", bson.D{{Key: "$set", Value: bson.D{{Key: "nextPeriodStart", Value: next}}}}); err != nil {
		t.Fatal(err)
	}
	if err := a.Set(ctx, "inv", 2, false); !errors.Is(err, counters.ErrBackwards) {
		t.Errorf("Set 2 at 3 of 17:04, 17:05 announced: %v, want ErrBackwards", err)
	}
	if err := a.Set(ctx, "inv", 10, false); err != nil {
		t.Fatal(err)
	}
	if got := mustNumbered(t, b, "inv", 1, "2026-11-26T17:05"); got.Last != 1 {
		t.Errorf("17:05's first value: %+v, want 1", got)
	}
	if v, err := a.PeriodValue(ctx, "inv", "2026-11-26T17:04"); err != nil || v != 10 {
		t.Errorf("17:04's last value: %d, %v; want 10", v, err)
	}
}
