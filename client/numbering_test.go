package client_test

import (
	"errors"
	"testing"
	"time"

	"github.com/seqd/seqd"
	"github.com/seqd/seqd/counters"
)

// TestNextNumbered: the client reads a numbered sequence's period and
// formatted values, its numbering in Current, and a past period's value.
func TestNextNumbered(t *testing.T) {
	s := newSeqd(t)
	now := time.Date(2026, 12, 31, 23, 0, 0, 0, time.UTC)
	s.seq.SetClock(func() time.Time { return now })
	if err := s.seq.SetNumbering(t.Context(), "inv", counters.Numbering{Period: "year", TimeZone: "Asia/Kolkata", Format: "INV-{yyyy}-{seq:6}"}); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, s.URL)
	got, err := c.NextNumbered(t.Context(), "inv", 2)
	want := seqd.Numbered{Range: seqd.Range{First: 1, Last: 2}, Period: "2027", Formatted: "INV-2027-000002", FormattedFirst: "INV-2027-000001"}
	if err != nil || got != want {
		t.Fatalf("NextNumbered = %+v, %v; want %+v", got, err, want)
	}
	cur, err := c.Current(t.Context(), "inv")
	if err != nil || cur.Period != "year" || cur.TimeZone != "Asia/Kolkata" || cur.Format != "INV-{yyyy}-{seq:6}" || cur.PeriodKey != "2027" || cur.Value != 2 {
		t.Errorf("Current = %+v, %v", cur, err)
	}
	now = now.AddDate(1, 0, 0)
	if got, err := c.NextNumbered(t.Context(), "inv", 1); err != nil || got.Period != "2028" || got.Last != 1 {
		t.Errorf("NextNumbered in 2028 = %+v, %v", got, err)
	}
	if v, err := c.PeriodValue(t.Context(), "inv", "2027"); err != nil || v != 2 {
		t.Errorf("PeriodValue(2027) = %d, %v; want 2", v, err)
	}
	if _, err := c.PeriodValue(t.Context(), "inv", "2026"); !errors.Is(err, seqd.ErrNotFound) {
		t.Errorf("PeriodValue(2026) = %v, want ErrNotFound", err)
	}
	if got, err := c.NextNumbered(t.Context(), "plain", 1); err != nil || got != (seqd.Numbered{Range: seqd.Range{First: 1, Last: 1}}) {
		t.Errorf("NextNumbered of a plain sequence = %+v, %v", got, err)
	}
}
