//go:build integration

package integration

import (
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
