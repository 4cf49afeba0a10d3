//go:build integration

package integration

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seqd/seqd"
	"github.com/seqd/seqd/counters"
)

// fakeClock is a clock a test moves: an instance's idea of the time.
type fakeClock struct{ ns atomic.Int64 }

func newClock(t time.Time) *fakeClock {
	c := &fakeClock{}
	c.set(t)
	return c
}

func (c *fakeClock) set(t time.Time)        { c.ns.Store(t.UnixNano()) }
func (c *fakeClock) now() time.Time         { return time.Unix(0, c.ns.Load()) }
func (c *fakeClock) opts() counters.Options { return counters.Options{Clock: c.now} }

// keepTaking has 8 goroutines take values of name from c, one at a time,
// until the stop it returns is called; stop waits for them.
func keepTaking(t *testing.T, ctx context.Context, c *counters.Counter, name string) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				if _, err := c.NextNumbered(ctx, name, 1); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	return func() { close(done); wg.Wait() }
}

// mustNumbered takes n values of name and checks their period.
func mustNumbered(t *testing.T, c *counters.Counter, name string, n int64, period string) counters.Numbered {
	t.Helper()
	got, err := c.NextNumbered(testContext(t), name, n)
	if err != nil {
		t.Fatalf("NextNumbered(%q, %d): %v", name, n, err)
	}
	if got.Period != period || got.Count() != n {
		t.Fatalf("NextNumbered(%q, %d) = %+v, want %d values of period %q", name, n, got, n, period)
	}
	return got
}

// Two instances across a minute's start: the one whose clock passes it first
// starts the new minute at 1; the other, its clock still in the old minute,
// joins the new one and never answers the old one again. The old minute's
// last value is remembered.
func TestNumberingTwoInstancesAcrossAMinute(t *testing.T) {
	ctx := testContext(t)
	db := be.Database(t)
	t0 := time.Date(2026, 11, 26, 17, 4, 30, 0, time.UTC)
	ca, cb := newClock(t0), newClock(t0.Add(10*time.Second))
	a, b := counters.NewCounter(db, ca.opts()), counters.NewCounter(db, cb.opts())
	if err := a.SetNumbering(ctx, "inv", counters.Numbering{Period: "minute", Format: "INV-{HH}{mm}-{seq:3}"}); err != nil {
		t.Fatal(err)
	}

	if got := mustNumbered(t, a, "inv", 1, "2026-11-26T17:04"); got.Last != 1 || got.Formatted != "INV-1704-001" {
		t.Fatalf("first value %+v, want 1, INV-1704-001", got)
	}
	mustNumbered(t, b, "inv", 2, "2026-11-26T17:04")       // 2, 3
	mustNumbered(t, a, "inv", 1, "2026-11-26T17:04")       // 4
	cb.set(time.Date(2026, 11, 26, 17, 5, 0, 0, time.UTC)) // b's clock passes 17:05 first
	if got := mustNumbered(t, b, "inv", 1, "2026-11-26T17:05"); got.Last != 1 || got.Formatted != "INV-1705-001" {
		t.Fatalf("b's first value of 17:05: %+v, want 1, INV-1705-001", got)
	}
	ca.set(t0.Add(29 * time.Second)) // a's clock is still in 17:04
	for want := int64(2); want <= 4; want++ {
		if got := mustNumbered(t, a, "inv", 1, "2026-11-26T17:05"); got.Last != want {
			t.Fatalf("a, behind, got %+v, want %d of 17:05", got, want)
		}
	}
	if v, err := a.PeriodValue(ctx, "inv", "2026-11-26T17:04"); err != nil || v != 4 {
		t.Errorf("PeriodValue(17:04) = %d, %v; want 4", v, err)
	}
	if v, err := a.PeriodValue(ctx, "inv", "2026-11-26T17:05"); err != nil || v != 4 {
		t.Errorf("PeriodValue(17:05) = %d, %v; want 4 (the current one)", v, err)
	}
	if _, err := a.PeriodValue(ctx, "inv", "2026-11-26T17:03"); !errors.Is(err, counters.ErrNotFound) {
		t.Errorf("PeriodValue(17:03) = %v, want ErrNotFound", err)
	}
	cur, err := a.Current(ctx, "inv")
	if err != nil || cur.Value != 4 || cur.PeriodKey != "2026-11-26T17:05" || cur.Period != "minute" || cur.Format != "INV-{HH}{mm}-{seq:3}" {
		t.Errorf("Current = %+v, %v", cur, err)
	}
}

// Many callers of two instances, in two rounds: in the first both clocks
// read 17:04; then one instance's clock passes 17:05 and it takes a value,
// and in the second round the other instance's clock stays behind. Every
// (period, value) once, each period's values 1…k, and every answer of the
// second round is of 17:05: the instance behind joins the newer period.
func TestNumberingCallersAcrossAMinute(t *testing.T) {
	ctx := testContext(t)
	db := be.Database(t)
	t0 := time.Date(2026, 11, 26, 17, 4, 59, 0, time.UTC)
	ca, cb := newClock(t0), newClock(t0)
	a, b := counters.NewCounter(db, ca.opts()), counters.NewCounter(db, cb.opts())
	if err := a.SetNumbering(ctx, "hot", counters.Numbering{Period: "minute"}); err != nil {
		t.Fatal(err)
	}
	const goroutines, each = 32, 20
	seen := map[string]map[int64]bool{}
	var mu sync.Mutex
	round := func(want string) {
		var wg sync.WaitGroup
		for g := range goroutines {
			c := a
			if g%2 == 1 {
				c = b
			}
			wg.Go(func() {
				for i := range each {
					got, err := c.NextNumbered(ctx, "hot", int64(i%3+1))
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					if got.Period != want {
						t.Errorf("an answer of %q, want %q", got.Period, want)
					}
					if seen[got.Period] == nil {
						seen[got.Period] = map[int64]bool{}
					}
					for v := got.First; v <= got.Last; v++ {
						if seen[got.Period][v] {
							t.Errorf("%s: %d twice", got.Period, v)
						}
						seen[got.Period][v] = true
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
	}
	round("2026-11-26T17:04")
	cb.set(t0.Add(time.Second)) // b's clock passes 17:05; a's never does
	got := mustNumbered(t, b, "hot", 1, "2026-11-26T17:05")
	seen[got.Period] = map[int64]bool{got.Last: true}
	round("2026-11-26T17:05")

	for p, vs := range seen {
		for v := int64(1); v <= int64(len(vs)); v++ {
			if !vs[v] {
				t.Errorf("%s: %d missing of 1…%d", p, v, len(vs))
			}
		}
	}
}

// A batch never spans two periods: NextNumbered(5) just before and just after
// the start of a minute.
func TestNumberingBatchAtBoundary(t *testing.T) {
	ctx := testContext(t)
	clock := newClock(time.Date(2026, 12, 31, 23, 59, 59, 999e6, time.UTC))
	c := counters.NewCounter(be.Database(t), clock.opts())
	if err := c.SetNumbering(ctx, "b", counters.Numbering{Period: "year", Format: "{yy}/{seq}"}); err != nil {
		t.Fatal(err)
	}
	mustNumbered(t, c, "b", 3, "2026")
	got := mustNumbered(t, c, "b", 5, "2026")
	if got.First != 4 || got.Last != 8 || got.FormattedFirst != "26/4" || got.Formatted != "26/8" {
		t.Fatalf("the batch before the year's end: %+v", got)
	}
	clock.set(time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC))
	got = mustNumbered(t, c, "b", 5, "2027")
	if got.First != 1 || got.Last != 5 || got.FormattedFirst != "27/1" || got.Formatted != "27/5" {
		t.Fatalf("the batch after the year's start: %+v", got)
	}
}

// Periods begin in the sequence's time zone: Asia/Kolkata's hours begin at
// half past in UTC, and on Europe/Berlin's last Sunday of March 2027 the day
// begins at 23:00 UTC the day before and the hour after 01:00 is 03:00.
func TestNumberingTimeZones(t *testing.T) {
	ctx := testContext(t)
	for _, tc := range []struct {
		name      string
		nb        counters.Numbering
		at        time.Time
		period    string
		formatted string
	}{
		{"kolkata-before", counters.Numbering{Period: "hour", TimeZone: "Asia/Kolkata", Format: "{yyyy}{MM}{dd}{HH}-{seq}"},
			time.Date(2026, 11, 26, 11, 29, 59, 0, time.UTC), "2026-11-26T16", "2026112616-1"},
		{"kolkata-after", counters.Numbering{Period: "hour", TimeZone: "Asia/Kolkata", Format: "{yyyy}{MM}{dd}{HH}-{seq}"},
			time.Date(2026, 11, 26, 11, 30, 0, 0, time.UTC), "2026-11-26T17", "2026112617-1"},
		{"berlin-day", counters.Numbering{Period: "day", TimeZone: "Europe/Berlin", Format: "B{yy}{MM}{dd}.{seq:2}"},
			time.Date(2027, 3, 27, 23, 0, 0, 0, time.UTC), "2027-03-28", "B270328.01"},
		{"berlin-day-before", counters.Numbering{Period: "day", TimeZone: "Europe/Berlin", Format: "B{yy}{MM}{dd}.{seq:2}"},
			time.Date(2027, 3, 27, 22, 59, 59, 0, time.UTC), "2027-03-27", "B270327.01"},
		{"berlin-spring-hour", counters.Numbering{Period: "hour", TimeZone: "Europe/Berlin", Format: "{HH}/{seq}"},
			time.Date(2027, 3, 28, 1, 0, 0, 0, time.UTC), "2027-03-28T03", "03/1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := counters.NewCounter(be.Database(t), newClock(tc.at).opts())
			if err := c.SetNumbering(ctx, "z", tc.nb); err != nil {
				t.Fatal(err)
			}
			if got := mustNumbered(t, c, "z", 1, tc.period); got.Formatted != tc.formatted {
				t.Errorf("formatted %q, want %q", got.Formatted, tc.formatted)
			}
		})
	}
}

// A format without a period: values go on, formatted; taking the period off
// keeps the value.
func TestNumberingFormatOnly(t *testing.T) {
	ctx := testContext(t)
	c := counters.NewCounter(be.Database(t), counters.Options{})
	if _, err := c.Next(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	if err := c.SetNumbering(ctx, "t", counters.Numbering{Format: "T-{seq:5} {{x}}"}); err != nil {
		t.Fatal(err)
	}
	if got := mustNumbered(t, c, "t", 1, ""); got.Last != 2 || got.Formatted != "T-00002 {x}" {
		t.Fatalf("%+v, want 2, T-00002 {x}", got)
	}
	if err := c.SetNumbering(ctx, "t", counters.Numbering{}); err != nil {
		t.Fatal(err)
	}
	if got := mustNumbered(t, c, "t", 1, ""); got.Last != 3 || got.Formatted != "" {
		t.Fatalf("%+v, want 3 unformatted", got)
	}
}

// An instance that learned a numbering is told when another instance changes
// it: its next write finds the stored one.
func TestNumberingChangedByAnotherInstance(t *testing.T) {
	ctx := testContext(t)
	db := be.Database(t)
	clock := newClock(time.Date(2026, 11, 26, 17, 4, 30, 0, time.UTC))
	a, b := counters.NewCounter(db, clock.opts()), counters.NewCounter(db, clock.opts())
	if _, err := a.Next(ctx, "x"); err != nil { // a knows x as plain
		t.Fatal(err)
	}
	if err := b.SetNumbering(ctx, "x", counters.Numbering{Period: "month"}); err != nil {
		t.Fatal(err)
	}
	mustNumbered(t, a, "x", 1, "2026-11")
	if err := b.SetNumbering(ctx, "x", counters.Numbering{Period: "month", Format: "{MM}-{seq}"}); err != nil {
		t.Fatal(err)
	}
	if got := mustNumbered(t, a, "x", 1, "2026-11"); got.Last != 2 || got.Formatted != "11-2" {
		t.Fatalf("%+v, want 2 of the month, 11-2", got)
	}
}

// A new format alone keeps the period, its value and the past periods; a new
// period or time zone, once values of a period were handed out, is refused.
func TestNumberingChanges(t *testing.T) {
	ctx := testContext(t)
	clock := newClock(time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC))
	c := counters.NewCounter(be.Database(t), clock.opts())
	if err := c.SetNumbering(ctx, "n", counters.Numbering{Period: "day", Format: "A{seq}"}); err != nil {
		t.Fatal(err)
	}
	mustNumbered(t, c, "n", 3, "2026-11-26")
	clock.set(time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC))
	mustNumbered(t, c, "n", 2, "2026-11-27")
	if err := c.SetNumbering(ctx, "n", counters.Numbering{Period: "day", Format: "B{seq}"}); err != nil {
		t.Fatal(err)
	}
	if got := mustNumbered(t, c, "n", 1, "2026-11-27"); got.Last != 3 || got.Formatted != "B3" {
		t.Errorf("after a new format: %+v, want 3, B3", got)
	}
	if v, err := c.PeriodValue(ctx, "n", "2026-11-26"); err != nil || v != 3 {
		t.Errorf("after a new format, PeriodValue(2026-11-26) = %d, %v; want 3", v, err)
	}
	// Another zone, another period, or none and then one again would number
	// 2026-11-27 from 1 again (B1 twice): refused, and the numbering stays.
	for _, nb := range []counters.Numbering{
		{Period: "day", TimeZone: "Asia/Kolkata", Format: "B{seq}"},
		{Period: "month", Format: "B{seq}"},
		{Format: "B{seq}"},
	} {
		if err := c.SetNumbering(ctx, "n", nb); !errors.Is(err, counters.ErrInvalidMode) {
			t.Errorf("SetNumbering(%+v) after values of a period: %v, want ErrInvalidMode", nb, err)
		}
	}
	if got := mustNumbered(t, c, "n", 1, "2026-11-27"); got.Last != 4 || got.Formatted != "B4" {
		t.Errorf("after the refused changes: %+v, want 4, B4", got)
	}
}

// A sequence remembers its latest 32 finished periods.
func TestNumberingPastPeriodsBounded(t *testing.T) {
	ctx := testContext(t)
	t0 := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	clock := newClock(t0)
	c := counters.NewCounter(be.Database(t), clock.opts())
	if err := c.SetNumbering(ctx, "p", counters.Numbering{Period: "minute"}); err != nil {
		t.Fatal(err)
	}
	const minutes = 40
	for m := range minutes {
		clock.set(t0.Add(time.Duration(m) * time.Minute))
		if _, err := c.NextN(ctx, "p", int64(m+1)); err != nil {
			t.Fatal(err)
		}
	}
	for m := range minutes {
		key := fmt.Sprintf("2026-11-26T00:%02d", m)
		v, err := c.PeriodValue(ctx, "p", key)
		switch {
		case m < minutes-1-32:
			if !errors.Is(err, counters.ErrNotFound) {
				t.Errorf("%s: %d, %v; want forgotten", key, v, err)
			}
		case err != nil || v != int64(m+1):
			t.Errorf("%s: %d, %v; want %d", key, v, err, m+1)
		}
	}
}

// What SetNumbering and SetMode refuse: a numbering that does not parse, a
// period on a cached sequence, cached mode on a numbered one.
func TestNumberingRefused(t *testing.T) {
	ctx := testContext(t)
	c := counters.NewCounter(be.Database(t), counters.Options{})
	for _, nb := range []counters.Numbering{
		{Period: "week"},
		{Period: "day", TimeZone: "Mars/Olympus"},
		{Period: "day", TimeZone: "Local"},
		{TimeZone: "Europe/Berlin"}, // a zone without a period
		{Format: "no value"},
		{Format: "{yyyy}-{seq}"},                // a date without a period
		{Period: "month", Format: "{dd}-{seq}"}, // finer than the period
		{Format: "{seq:20}"},
	} {
		if err := c.SetNumbering(ctx, "r", nb); !errors.Is(err, counters.ErrInvalidMode) {
			t.Errorf("SetNumbering(%+v) = %v, want ErrInvalidMode", nb, err)
		}
	}
	if err := c.SetMode(ctx, "cached", seqd.ModeCached, 0, 0); err != nil {
		t.Fatal(err)
	}
	if err := c.SetNumbering(ctx, "cached", counters.Numbering{Period: "year"}); !errors.Is(err, counters.ErrInvalidMode) {
		t.Errorf("SetNumbering on a cached sequence = %v, want ErrInvalidMode", err)
	}
	if err := c.SetNumbering(ctx, "numbered", counters.Numbering{Period: "year"}); err != nil {
		t.Fatal(err)
	}
	if err := c.SetMode(ctx, "numbered", seqd.ModeCached, 0, 0); !errors.Is(err, counters.ErrInvalidMode) {
		t.Errorf("SetMode cached on a numbered sequence = %v, want ErrInvalidMode", err)
	}
	if err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// Two seqd on one periodic sequence, over HTTP: the numbering set through one
// is the other's too (it has never seen the name, and learns it from the
// document at its first write), and their answers share the period, never
// repeat, and are formatted alike.
func TestNumberingTwoSeqd(t *testing.T) {
	db := be.Database(t).Name()
	a := startSeqdAt(t, seqdURI(), db, "SEQD_ADMIN_TOKEN="+adminToken)
	b := startSeqdAt(t, seqdURI(), db, "SEQD_ADMIN_TOKEN="+adminToken)
	do(t, "http://"+a.Addr(), call{method: http.MethodPut, path: "/seq/inv", token: adminToken,
		body: `{"period":"year","time_zone":"Europe/Berlin","format":"INV-{yyyy}-{seq:6}"}`}).want(t, http.StatusOK, nil)
	type answer struct {
		Value          int64
		Period         string
		Formatted      string
		FormattedFirst string `json:"formatted_first"`
	}
	seen := map[int64]bool{}
	var period string
	for i := range 10 {
		base := "http://" + a.Addr()
		if i%2 == 1 {
			base = "http://" + b.Addr()
		}
		var got answer
		do(t, base, call{method: http.MethodPost, path: "/seq/inv/next?count=2"}).want(t, http.StatusOK, &got)
		if i == 0 {
			period = got.Period
		}
		if got.Period != period || len(period) != 4 || seen[got.Value] ||
			got.Formatted != fmt.Sprintf("INV-%s-%06d", period, got.Value) || got.FormattedFirst != fmt.Sprintf("INV-%s-%06d", period, got.Value-1) {
			t.Fatalf("answer %d: %+v (period %q, seen %v)", i, got, period, seen)
		}
		seen[got.Value] = true
	}
	var cur struct {
		Value         int64
		CurrentPeriod string `json:"current_period"`
	}
	do(t, "http://"+b.Addr(), call{path: "/seq/inv"}).want(t, http.StatusOK, &cur)
	if cur.Value != 20 || cur.CurrentPeriod != period {
		t.Errorf("GET /seq/inv = %+v, want 20 of %s", cur, period)
	}
	var pv struct{ Value int64 }
	do(t, "http://"+a.Addr(), call{path: "/seq/inv?period=" + period}).want(t, http.StatusOK, &pv)
	if pv.Value != 20 {
		t.Errorf("GET ?period=%s = %+v, want 20", period, pv)
	}
	do(t, "http://"+b.Addr(), call{method: http.MethodPut, path: "/seq/inv", token: adminToken,
		body: `{"period":"fortnight"}`}).wantError(t, http.StatusBadRequest, "invalid_period")
}
