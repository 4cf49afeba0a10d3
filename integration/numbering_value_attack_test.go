//go:build integration

package integration

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/seqd/seqd"
	"github.com/seqd/seqd/counters"
)

// SetNumberingValue with no numbering on a cached sequence is a Set (memseq,
// which the HTTP tests trust, takes it): PUT {"period":"none","value":5} on a
// cached sequence. Observed: ErrContention after MaxRetries retries, since
// its write matches only a strict document.
func TestNumberingValueNoneOnCached(t *testing.T) {
	ctx := testContext(t)
	c := counters.NewCounter(be.Database(t), counters.Options{MaxRetries: 3})
	mustSetMode(t, c, "orders", seqd.ModeCached, 0, 0)
	if err := c.SetNumberingValue(ctx, "orders", counters.Numbering{}, 5, false); err != nil {
		t.Errorf("SetNumberingValue(none, 5) on a cached sequence: %v, want nil (as Set)", err)
	} else if err := c.Set(ctx, "orders", 4, false); !errors.Is(err, counters.ErrBackwards) {
		t.Errorf("Set 4 after SetNumberingValue(none, 5): %v, want ErrBackwards", err)
	}
	if err := c.SetNumbering(ctx, "orders", counters.Numbering{}); err != nil {
		t.Errorf("SetNumbering(none) on a cached sequence: %v, want nil", err)
	}
}

// SetNumberingValue on a sequence that is handing out values succeeds, as Set
// does: PUT {"period":"minute","value":100} while instances keep taking values,
// in the same period (same) and from a clock in the next one (ahead).
// Observed: ErrContention, since its write matches only the value read, and
// every write missed.
func TestNumberingValueWhileOthersWrite(t *testing.T) {
	for _, tc := range []struct {
		name   string
		ahead  time.Duration
		period string
	}{{"same", 0, "2026-11-26T17:04"}, {"ahead", 2 * time.Second, "2026-11-26T17:05"}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testContext(t)
			db := be.Database(t)
			t0 := time.Date(2026, 11, 26, 17, 4, 59, 0, time.UTC)
			b := counters.NewCounter(db, counters.Options{Clock: newClock(t0).now, WritesInFlight: 4})
			a := counters.NewCounter(db, newClock(t0.Add(tc.ahead)).opts())
			nb := counters.Numbering{Period: "minute", Format: "M-{seq}"}
			if err := b.SetNumbering(ctx, "inv", nb); err != nil {
				t.Fatal(err)
			}
			mustNumbered(t, b, "inv", 1, "2026-11-26T17:04")
			stop := keepTaking(t, ctx, b, "inv")
			err := a.SetNumberingValue(ctx, "inv", nb, 1_000_000, false)
			stop()
			if err != nil {
				t.Errorf("SetNumberingValue 1000000 while values are taken: %v, want nil", err)
			}
			if got := mustNumbered(t, a, "inv", 1, tc.period); err == nil && got.Last <= 1_000_000 {
				t.Errorf("after SetNumberingValue 1000000: %+v, want above 1000000", got)
			}
		})
	}
}

// A Counter with no retries (MaxRetries < 0) sets the value of a period its
// clock has begun, with SetNumberingValue and with Set: announcing the period
// is not a conflict with another write. Observed: ErrContention, "0
// duplicate key retries", for both.
func TestNumberingValueNewPeriodNoRetries(t *testing.T) {
	ctx := testContext(t)
	clock := newClock(time.Date(2026, 11, 26, 17, 4, 30, 0, time.UTC))
	c := counters.NewCounter(be.Database(t), counters.Options{Clock: clock.now, MaxRetries: -1})
	nb := counters.Numbering{Period: "minute"}
	for _, name := range []string{"a", "b"} {
		if err := c.SetNumbering(ctx, name, nb); err != nil {
			t.Fatal(err)
		}
		mustNumbered(t, c, name, 3, "2026-11-26T17:04")
	}
	clock.set(time.Date(2026, 11, 26, 17, 5, 0, 0, time.UTC))
	if err := c.SetNumberingValue(ctx, "a", nb, 10, false); err != nil {
		t.Errorf("SetNumberingValue 10 in 17:05: %v, want nil", err)
	}
	if err := c.Set(ctx, "b", 10, false); err != nil {
		t.Errorf("Set 10 in 17:05: %v, want nil", err)
	}
	for _, name := range []string{"a", "b"} {
		if got := mustNumbered(t, c, name, 1, "2026-11-26T17:05"); got.Last != 11 {
			t.Errorf("%s after 10 in 17:05: %+v, want 11", name, got)
		}
	}
}

// A forced SetNumberingValue that moves a sequence back makes a count that
// did not fit fit again, as a forced Set does: the instance forgets what a
// write proved about the name's end. Observed: the next 1,000,000 values
// answered ErrExhausted at once, while other callers kept the name's queue.
func TestNumberingValueForcedBackFitsAgain(t *testing.T) {
	ctx := testContext(t)
	c := counters.NewCounter(be.Database(t), counters.Options{WritesInFlight: 1})
	nb := counters.Numbering{Format: "P-{seq}"}
	if err := c.SetNumberingValue(ctx, "p", nb, math.MaxInt64-999_999, false); err != nil {
		t.Fatal(err)
	}
	stop := keepTaking(t, ctx, c, "p") // callers of one value keep the name's queue
	defer stop()
	if _, err := c.NextNumbered(ctx, "p", 1_000_000); !errors.Is(err, counters.ErrExhausted) {
		t.Fatalf("1,000,000 values near the end: %v, want ErrExhausted", err)
	}
	if err := c.SetNumberingValue(ctx, "p", nb, 5, true); err != nil {
		t.Fatal(err)
	}
	if got, err := c.NextNumbered(ctx, "p", 1_000_000); err != nil {
		t.Errorf("1,000,000 values after a forced value 5: %+v, %v; want them", got.Range, err)
	}
}
