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
