//go:build integration

package integration

import (
	"errors"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/seqd/seqd/counters"
)

// A formatted number is handed out once, also across a change of the
// numbering: fixing the time zone of a yearly invoice sequence mid-year, or
// turning its period off and on again, must not hand out "INV-2026-000001"
// a second time. Observed: both restart the year at 1.
func TestNumberingChangeNeverRepeatsANumber(t *testing.T) {
	for _, tc := range []struct {
		name    string
		between []counters.Numbering // the changes made after the first values
	}{
		{"new time zone", []counters.Numbering{{Period: "year", TimeZone: "Europe/Berlin", Format: "INV-{yyyy}-{seq:6}"}}},
		{"period off and on", []counters.Numbering{{Format: "INV-{seq:6}"}, {Period: "year", Format: "INV-{yyyy}-{seq:6}"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testContext(t)
			clock := newClock(time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC))
			c := counters.NewCounter(be.Database(t), clock.opts())
			if err := c.SetNumbering(ctx, "inv", counters.Numbering{Period: "year", Format: "INV-{yyyy}-{seq:6}"}); err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			for range 3 {
				seen[mustNumbered(t, c, "inv", 1, "2026").Formatted] = true
			}
			for _, nb := range tc.between {
				if err := c.SetNumbering(ctx, "inv", nb); err != nil {
					t.Fatal(err)
				}
			}
			for range 3 {
				got := mustNumbered(t, c, "inv", 1, "2026")
				if seen[got.Formatted] {
					t.Errorf("%s handed out again (value %d of period %s), want a number not handed out before", got.Formatted, got.Last, got.Period)
				}
				seen[got.Formatted] = true
			}
		})
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
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := b.NextNumbered(ctx, "inv", 1); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	got, err := a.NextNumbered(ctx, "inv", 1)
	close(stop)
	wg.Wait()
	if err != nil || got.Period != "2026-11-26T17:05" || got.Last != 1 {
		t.Errorf("the new minute's first value: %+v, %v; want 1 of 2026-11-26T17:05", got, err)
	}
}

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
	if err := c.SetNumbering(ctx, "e", counters.Numbering{Period: "day", TimeZone: "Asia/Kolkata"}); err != nil {
		t.Fatal(err)
	}
	if v, err := c.PeriodValue(ctx, "e", ""); !errors.Is(err, counters.ErrNotFound) {
		t.Errorf("after a new zone: PeriodValue(\"\") = %d, %v; want ErrNotFound", v, err)
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

// A value set on a periodic sequence before its first period began (PUT
// {"value":4211,"period":"year"} sets the value, then the period) is where
// the current period continues, or Set refuses it; it is never dropped in
// silence. Observed: the next value is 1.
func TestNumberingSetBeforeFirstPeriod(t *testing.T) {
	ctx := testContext(t)
	c := counters.NewCounter(be.Database(t), newClock(time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)).opts())
	if err := c.Set(ctx, "inv", 4211, false); err != nil {
		t.Fatal(err)
	}
	if err := c.SetNumbering(ctx, "inv", counters.Numbering{Period: "year", Format: "INV-{yyyy}-{seq:6}"}); err != nil {
		t.Fatal(err)
	}
	if err := c.Set(ctx, "inv", 4211, false); err != nil {
		return // refused: nothing dropped
	}
	if got := mustNumbered(t, c, "inv", 1, "2026"); got.Last != 4212 {
		t.Errorf("after Set 4211: %+v, want 4212 (INV-2026-004212)", got)
	}
}
