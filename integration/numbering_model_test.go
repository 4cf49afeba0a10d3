//go:build integration

package integration

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/seqd/seqd"
	"github.com/seqd/seqd/counters"
	"github.com/seqd/seqd/internal/memseq"
)

// outcome names err by the sentinel it wraps, as the HTTP API's status
// table reads it: "nil", "ErrBackwards", …
func outcome(err error) string {
	if err == nil {
		return "nil"
	}
	for _, s := range []struct {
		name string
		err  error
	}{
		{"ErrBackwards", counters.ErrBackwards}, {"ErrInvalidMode", counters.ErrInvalidMode},
		{"ErrNotFound", counters.ErrNotFound}, {"ErrExhausted", counters.ErrExhausted},
		{"ErrInvalidValue", counters.ErrInvalidValue}, {"ErrContention", counters.ErrContention},
	} {
		if errors.Is(err, s.err) {
			return s.name
		}
	}
	return "other: " + err.Error()
}

// memseq, which the HTTP tests trust, answers as Counters with one clock do
// (two instances, taking turns at random): the same random calls
// (numberings and values set, values taken, modes switched, the clock moved
// across minutes, hours and the year's end) get the same values, periods,
// formatted text and errors from both, in 20 runs of 100 calls, each seeded
// by its number. Observed: SetMode cached on a numbered
// sequence taken by memseq (ErrInvalidMode from the Counter); a numbering
// set while a switch to strict drains taken by memseq (ErrInvalidMode from
// the Counter).
func TestNumberingLikeMemseq(t *testing.T) {
	numberings := []counters.Numbering{
		{}, {Period: "none"}, {Format: "P-{seq}"}, {Period: "minute"}, {Period: "minute", Format: "M-{HH}{mm}-{seq}"},
		{Period: "hour", TimeZone: "Europe/Berlin", Format: "H-{HH}-{seq}"}, {Period: "year", Format: "Y-{yyyy}-{seq}"},
		{Period: "minute", TimeZone: "Asia/Kolkata"},
	}
	for run := range 20 {
		r := rand.New(rand.NewPCG(uint64(run), 0))
		ctx := testContext(t)
		clock := newClock(time.Date(2026, 12, 31, 22, 58, 0, 0, time.UTC))
		db := be.Database(t)
		opts := counters.Options{Clock: clock.now, BlockLease: 200 * time.Millisecond, ModeRefresh: 50 * time.Millisecond}
		instances := []*counters.Counter{counters.NewCounter(db, opts), counters.NewCounter(db, opts)}
		m := memseq.New(counters.StrategyCounter)
		m.SetClock(clock.now)
		mode := seqd.ModeStrict
		var keys, calls []string // the periods answered; the calls made, for the failure's message
		for range 100 {
			var call, got, want string
			c := instances[r.IntN(2)] // two instances, one clock: each learns what the other changed
			switch r.IntN(11) {
			case 0, 1:
				if mode == seqd.ModeCached {
					continue // values from blocks: the Counter's document shows the blocks
				}
				n := int64(1 + r.IntN(3))
				call = fmt.Sprintf("NextNumbered(%d)", n)
				a, errA := c.NextNumbered(ctx, "x", n)
				b, errB := m.NextNumbered(ctx, "x", n)
				got, want = fmt.Sprintf("%+v %s", a, outcome(errA)), fmt.Sprintf("%+v %s", b, outcome(errB))
				if a.Period != "" {
					keys = append(keys, a.Period)
				}
			case 2:
				v, force := int64(r.IntN(12)), r.IntN(3) == 0
				call = fmt.Sprintf("Set(%d, %v)", v, force)
				got, want = outcome(c.Set(ctx, "x", v, force)), outcome(m.Set(ctx, "x", v, force))
			case 3:
				v := int64(math.MaxInt64 - r.IntN(4))
				call = fmt.Sprintf("Set(%d, true)", v)
				got, want = outcome(c.Set(ctx, "x", v, true)), outcome(m.Set(ctx, "x", v, true))
			case 4:
				nb := numberings[r.IntN(len(numberings))]
				call = fmt.Sprintf("SetNumbering(%+v)", nb)
				got, want = outcome(c.SetNumbering(ctx, "x", nb)), outcome(m.SetNumbering(ctx, "x", nb))
			case 5:
				nb := numberings[r.IntN(len(numberings))]
				v, force := int64(r.IntN(12)), r.IntN(3) == 0
				call = fmt.Sprintf("SetNumberingValue(%+v, %d, %v)", nb, v, force)
				got, want = outcome(c.SetNumberingValue(ctx, "x", nb, v, force)), outcome(m.SetNumberingValue(ctx, "x", nb, v, force))
			case 6:
				md := []seqd.Mode{seqd.ModeStrict, seqd.ModeCached}[r.IntN(2)]
				call = fmt.Sprintf("SetMode(%s)", md)
				got, want = outcome(c.SetMode(ctx, "x", md, 0, 0)), outcome(m.SetMode(ctx, "x", md, 0, 0))
				if got == "nil" {
					mode = md
				}
			case 7:
				clock.set(clock.now().Add(time.Duration(r.IntN(90)) * time.Second))
				calls = append(calls, "clock "+clock.now().UTC().Format(time.TimeOnly))
				continue
			case 8:
				call = "Current"
				a, errA := c.Current(ctx, "x")
				b, errB := m.Current(ctx, "x")
				show := func(s counters.Sequence, err error) string {
					return fmt.Sprintf("%d %s %q %q %q %q %s", s.Value, s.Mode, s.Period, s.TimeZone, s.Format, s.PeriodKey, outcome(err))
				}
				got, want = show(a, errA), show(b, errB)
			case 9, 10:
				cur, _ := m.Current(ctx, "x")
				key := cur.PeriodKey
				if len(keys) > 0 && r.IntN(2) == 0 {
					key = keys[r.IntN(len(keys))]
				}
				call = fmt.Sprintf("PeriodValue(%q)", key)
				a, errA := c.PeriodValue(ctx, "x", key)
				b, errB := m.PeriodValue(ctx, "x", key)
				got, want = fmt.Sprintf("%d %s", a, outcome(errA)), fmt.Sprintf("%d %s", b, outcome(errB))
			}
			calls = append(calls, call+": "+got)
			if got != want {
				t.Fatalf("run %d: %s: the Counter answers %s, memseq %s; the calls:\n%s", run, call, got, want, strings.Join(calls, "\n"))
			}
		}
		for _, c := range instances {
			if err := c.Close(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
}
