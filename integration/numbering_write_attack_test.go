//go:build integration

package integration

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/seqd/seqd"
	"github.com/seqd/seqd/counters"
)

// holdQueue keeps name's queue on c alive: it sends one write of name that
// the store holds for a few seconds (failCommand blockConnection), and
// returns once the store holds it. The queue, and what a write proved about
// the name's end (ErrExhausted for a count), live while a write is in flight.
// The write ends before the test's cleanup.
func holdQueue(t *testing.T, ctx context.Context, db string, c *counters.Counter, name string) {
	t.Helper()
	be.RequireFailCommand(t)
	held := be.FailCommand(t, bson.D{{Key: "times", Value: 1}}, bson.D{
		{Key: "failCommands", Value: bson.A{"findAndModify"}},
		{Key: "namespace", Value: db + "." + counters.CounterCollection},
		{Key: "blockConnection", Value: true},
		{Key: "blockTimeMS", Value: 3000},
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := c.NextNumbered(ctx, name, 1); err != nil {
			t.Errorf("the held write: %v", err)
		}
	}()
	t.Cleanup(func() { <-done })
	if err := held.WaitEntered(ctx, 1); err != nil {
		t.Fatal(err)
	}
}

// A period begun by SetNumbering (at 1, with the next value) or by
// SetNumberingValue without force (at its value) moves the value back: the
// write counts in forced, as a forced Set does. So a count the plain
// sequence could no longer take fits again: the instance forgets what a
// write proved about the name's end, as after a forced Set
// (TestNumberingValueForcedBackFitsAgain). Observed: ErrExhausted at once,
// "at 9223372036853775808, 1000000 requested", from the queue's memory.
func TestNumberingPeriodBegunFitsAgain(t *testing.T) {
	for _, tc := range []struct {
		name  string
		set   func(ctx context.Context, c *counters.Counter, nb counters.Numbering) error
		first int64
	}{
		{"SetNumbering", func(ctx context.Context, c *counters.Counter, nb counters.Numbering) error {
			return c.SetNumbering(ctx, "p", nb)
		}, 1},
		{"SetNumberingValue", func(ctx context.Context, c *counters.Counter, nb counters.Numbering) error {
			return c.SetNumberingValue(ctx, "p", nb, 5, false)
		}, 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testContext(t)
			db := be.Database(t)
			clock := newClock(time.Date(2026, 11, 26, 17, 4, 30, 0, time.UTC))
			c := counters.NewCounter(db, counters.Options{Clock: clock.now, WritesInFlight: 2})
			if err := c.Set(ctx, "p", math.MaxInt64-999_999, false); err != nil {
				t.Fatal(err)
			}
			holdQueue(t, ctx, db.Name(), c, "p")
			if _, err := c.NextNumbered(ctx, "p", 1_000_000); !errors.Is(err, counters.ErrExhausted) {
				t.Fatalf("1,000,000 values near the end: %v, want ErrExhausted", err)
			}
			if err := tc.set(ctx, c, counters.Numbering{Period: "year", Format: "Y-{yyyy}-{seq}"}); err != nil {
				t.Fatal(err)
			}
			if got, err := c.NextNumbered(ctx, "p", 1_000_000); err != nil || got.Period != "2026" || got.First != tc.first {
				t.Errorf("1,000,000 values of a year just begun: %+v, %v; want them from %d", got, err, tc.first)
			}
		})
	}
}

// A sequence switched from cached to strict drains (no value for one lease)
// and shows strict. A numbering set during the drain waits for its end, as a
// value taken does, or, when the caller's deadline comes first, is
// ErrDraining (503 with Retry-After): it is strict from then on, and nothing
// is wrong with the request. Observed: ErrInvalidMode, "a cached sequence
// has no period or format ... set mode strict first", for a sequence whose
// mode was just set strict; what memseq, which the HTTP tests trust, takes.
func TestNumberingDuringDrain(t *testing.T) {
	ctx := testContext(t)
	clock := newClock(time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC))
	c := counters.NewCounter(be.Database(t), counters.Options{Clock: clock.now, BlockLease: 3 * time.Second})
	defer c.Close(ctx)
	mustSetMode(t, c, "inv", seqd.ModeCached, 0, 0)
	if _, err := c.Next(ctx, "inv"); err != nil {
		t.Fatal(err)
	}
	mustSetMode(t, c, "inv", seqd.ModeStrict, 0, 0)
	nb := counters.Numbering{Period: "year", Format: "INV-{yyyy}-{seq}"}
	// Time for the read and the fence, not for the drain's 3 s.
	short, cancel := context.WithTimeout(ctx, 1500*time.Millisecond)
	defer cancel()
	if err := c.SetNumbering(short, "inv", nb); !errors.Is(err, counters.ErrDraining) {
		t.Errorf("SetNumbering during the drain, 1.5 s to wait: %v, want ErrDraining", err)
	}
	if err := c.SetNumberingValue(ctx, "inv", nb, 41, false); err != nil {
		t.Errorf("SetNumberingValue during the drain: %v, want nil once it ended", err)
	}
	if got, err := c.NextNumbered(ctx, "inv", 1); err != nil || got.Formatted != "INV-2026-42" {
		t.Errorf("after the drain and the numbering: %+v, %v; want INV-2026-42", got, err)
	}
}

// A counter document whose numbering seqd would not have written (a period
// "fortnight", a zone "Mars/Olympus", another client's) gets
// ErrInvalidCounter from SetNumbering and SetNumberingValue, as from Next
// and Set, and stays as it is. Observed: SetNumbering and SetNumberingValue
// wrote their numbering over it; with a period start, ErrInvalidMode ("the
// period and time zone of a sequence that has handed out values … stay").
func TestNumberingOverForeignNumbering(t *testing.T) {
	ctx := testContext(t)
	db := be.Database(t)
	c := counters.NewCounter(db, newClock(time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)).opts())
	coll := db.Collection(counters.CounterCollection)
	docs := []bson.D{
		{{Key: "_id", Value: "fortnight"}, {Key: "seq", Value: int64(3)}, {Key: "period", Value: "fortnight"}},
		{{Key: "_id", Value: "mars"}, {Key: "seq", Value: int64(3)}, {Key: "period", Value: "year"}, {Key: "zone", Value: "Mars/Olympus"}},
		{{Key: "_id", Value: "started"}, {Key: "seq", Value: int64(3)}, {Key: "period", Value: "fortnight"}, {Key: "periodStart", Value: int64(1764115200000)}},
	}
	for _, d := range docs {
		if _, err := coll.InsertOne(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	nb := counters.Numbering{Period: "year", Format: "Y-{yyyy}-{seq}"}
	for _, d := range docs {
		name := d[0].Value.(string)
		if _, err := c.Next(ctx, name); !errors.Is(err, counters.ErrInvalidCounter) {
			t.Errorf("Next(%q): %v, want ErrInvalidCounter", name, err)
		}
		if err := c.SetNumbering(ctx, name, nb); !errors.Is(err, counters.ErrInvalidCounter) {
			t.Errorf("SetNumbering(%q): %v, want ErrInvalidCounter", name, err)
		}
		if err := c.SetNumberingValue(ctx, name, nb, 7, true); !errors.Is(err, counters.ErrInvalidCounter) {
			t.Errorf("SetNumberingValue(%q): %v, want ErrInvalidCounter", name, err)
		}
		var got bson.D
		if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: name}}).Decode(&got); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(d) {
			t.Errorf("%q after the calls: %v, want it unchanged: %v", name, got, d)
		}
	}
}

// Current, List and PeriodValue of a counter document whose numbering seqd
// would not have written say so (ErrInvalidCounter), as Next does, rather
// than show it as a sequence seqd can use. Observed: Current answered it
// (period "fortnight", no period key), List listed it with no Err, and
// PeriodValue answered ErrNotFound.
func TestNumberingForeignShown(t *testing.T) {
	ctx := testContext(t)
	db := be.Database(t)
	c := counters.NewCounter(db, counters.Options{})
	doc := bson.D{{Key: "_id", Value: "fortnight"}, {Key: "seq", Value: int64(3)}, {Key: "period", Value: "fortnight"},
		{Key: "periodStart", Value: int64(1764115200000)}}
	if _, err := db.Collection(counters.CounterCollection).InsertOne(ctx, doc); err != nil {
		t.Fatal(err)
	}
	if got, err := c.Current(ctx, "fortnight"); !errors.Is(err, counters.ErrInvalidCounter) {
		t.Errorf("Current: %+v, %v; want ErrInvalidCounter", got, err)
	}
	page, err := c.List(ctx, counters.ListOptions{})
	if err != nil || len(page.Sequences) != 1 || !errors.Is(page.Sequences[0].Err, counters.ErrInvalidCounter) {
		t.Errorf("List: %+v, %v; want fortnight with Err ErrInvalidCounter", page, err)
	}
	if v, err := c.PeriodValue(ctx, "fortnight", "2025-11-26"); !errors.Is(err, counters.ErrInvalidCounter) {
		t.Errorf("PeriodValue: %d, %v; want ErrInvalidCounter", v, err)
	}
}

// A counter document with a numbering that parses but is not as seqd writes
// it (period "none", zone "UTC", an empty string: seqd leaves such fields
// out) gets ErrInvalidCounter from Next and Current, as any other numbering
// seqd would not have written. Observed: Next answered ErrContention after
// its retries (every write's filter asks for the field as seqd writes it,
// matches nothing, and reading the document tells nothing new), and Current
// showed it as usable.
func TestNumberingNotAsWritten(t *testing.T) {
	ctx := testContext(t)
	db := be.Database(t)
	c := counters.NewCounter(db, counters.Options{MaxRetries: 3})
	docs := []bson.D{
		{{Key: "_id", Value: "none"}, {Key: "seq", Value: int64(3)}, {Key: "period", Value: "none"}},
		{{Key: "_id", Value: "utc"}, {Key: "seq", Value: int64(3)}, {Key: "period", Value: "year"}, {Key: "zone", Value: "UTC"}},
		{{Key: "_id", Value: "empty"}, {Key: "seq", Value: int64(3)}, {Key: "period", Value: ""}},
	}
	for _, d := range docs {
		if _, err := db.Collection(counters.CounterCollection).InsertOne(ctx, d); err != nil {
			t.Fatal(err)
		}
		name := d[0].Value.(string)
		if got, err := c.Next(ctx, name); !errors.Is(err, counters.ErrInvalidCounter) {
			t.Errorf("Next(%q): %d, %v; want ErrInvalidCounter", name, got, err)
		}
		if got, err := c.Current(ctx, name); !errors.Is(err, counters.ErrInvalidCounter) {
			t.Errorf("Current(%q): %+v, %v; want ErrInvalidCounter", name, got, err)
		}
	}
}

// A numbering set by another instance restarts a plain sequence's values at
// 1 of a period: once this instance learns it (a write of its own finds the
// new numbering), a count the plain sequence could no longer take fits
// again. Observed: ErrExhausted at once for 1,000,000 values of the minute,
// after a value of it was taken, from the queue's memory of the plain
// sequence's end.
func TestNumberingLearnedFitsAgain(t *testing.T) {
	ctx := testContext(t)
	db := be.Database(t)
	clock := newClock(time.Date(2026, 11, 26, 17, 4, 30, 0, time.UTC))
	a := counters.NewCounter(db, counters.Options{Clock: clock.now, WritesInFlight: 2})
	b := counters.NewCounter(db, clock.opts())
	if err := a.Set(ctx, "p", math.MaxInt64-999_999, false); err != nil {
		t.Fatal(err)
	}
	holdQueue(t, ctx, db.Name(), a, "p")
	if _, err := a.NextNumbered(ctx, "p", 1_000_000); !errors.Is(err, counters.ErrExhausted) {
		t.Fatalf("1,000,000 values near the end: %v, want ErrExhausted", err)
	}
	if err := b.SetNumbering(ctx, "p", counters.Numbering{Period: "minute"}); err != nil {
		t.Fatal(err)
	}
	mustNumbered(t, a, "p", 1, "2026-11-26T17:04") // a learns the minute
	if got, err := a.NextNumbered(ctx, "p", 1_000_000); err != nil || got.First != 2 {
		t.Errorf("1,000,000 values of the minute: %+v, %v; want them from 2", got, err)
	}
}

// A counter document without a period whose other numbering fields seqd
// would not have written (a format that does not parse, an empty one, a
// time zone, which seqd stores only with a period) gets ErrInvalidCounter
// from Next and Set and is never changed, as README says of data seqd did
// not write. Observed: Next answers ErrInvalidCounter after its write (seq 3
// became 4, a value lost), and Set takes it (nil, seq 10).
func TestNumberingForeignWithoutPeriodUnchanged(t *testing.T) {
	ctx := testContext(t)
	db := be.Database(t)
	c := counters.NewCounter(db, counters.Options{MaxRetries: 3})
	coll := db.Collection(counters.CounterCollection)
	docs := []bson.D{
		{{Key: "_id", Value: "badformat"}, {Key: "seq", Value: int64(3)}, {Key: "format", Value: "F-{nope}"}},
		{{Key: "_id", Value: "emptyformat"}, {Key: "seq", Value: int64(3)}, {Key: "format", Value: ""}},
		{{Key: "_id", Value: "zoneonly"}, {Key: "seq", Value: int64(3)}, {Key: "zone", Value: "Europe/Berlin"}},
		{{Key: "_id", Value: "utconly"}, {Key: "seq", Value: int64(3)}, {Key: "zone", Value: "UTC"}},
	}
	for _, d := range docs {
		if _, err := coll.InsertOne(ctx, d); err != nil {
			t.Fatal(err)
		}
		name := d[0].Value.(string)
		unchanged := func(after string) {
			t.Helper()
			var doc bson.M
			if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: name}}).Decode(&doc); err != nil {
				t.Fatal(err)
			}
			if doc["seq"] != int64(3) {
				t.Errorf("%q after %s: seq %v, want 3 (unchanged)", name, after, doc["seq"])
			}
		}
		if got, err := c.Next(ctx, name); !errors.Is(err, counters.ErrInvalidCounter) {
			t.Errorf("Next(%q): %d, %v; want ErrInvalidCounter", name, got, err)
		}
		unchanged("Next")
		if err := c.Set(ctx, name, 10, false); !errors.Is(err, counters.ErrInvalidCounter) {
			t.Errorf("Set(%q, 10): %v; want ErrInvalidCounter", name, err)
		}
		unchanged("Set")
	}
}
