//go:build integration

package integration

import (
	"context"
	"errors"
	"math"
	"slices"
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/seqd/seqd"
	"github.com/seqd/seqd/counters"
)

// sequencer is what both strategies have: counters.Sequencer, and Next for one value.
type sequencer interface {
	counters.Sequencer
	Next(ctx context.Context, name string) (int64, error)
}

// A strategy is one way to build a sequencer. Every test in this file runs on each.
type strategy struct {
	name    string
	new     func(db *mongo.Database, opts counters.Options) sequencer
	batches bool // NextN with n > 1 is supported
}

var strategies = []strategy{
	{
		name:    "counter",
		new:     func(db *mongo.Database, o counters.Options) sequencer { return counters.NewCounter(db, o) },
		batches: true,
	},
	{
		name: "counter-nocoalesce",
		new: func(db *mongo.Database, o counters.Options) sequencer {
			o.NoCoalesce = true
			return counters.NewCounter(db, o)
		},
		batches: true,
	},
	{
		name: "optimistic",
		new:  func(db *mongo.Database, o counters.Options) sequencer { return counters.NewOptimistic(db, o) },
	},
}

func forEachStrategy(t *testing.T, test func(t *testing.T, st strategy)) {
	for _, st := range strategies {
		t.Run(st.name, func(t *testing.T) { test(t, st) })
	}
}

func TestSequentialSemantics(t *testing.T) {
	forEachStrategy(t, func(t *testing.T, st strategy) {
		ctx := testContext(t)
		s := st.new(be.Database(t), counters.Options{})

		if _, err := s.Current(ctx, "orders"); !errors.Is(err, counters.ErrNotFound) {
			t.Fatalf("Current of a new name: %v, want ErrNotFound", err)
		}
		if page, err := s.List(ctx, counters.ListOptions{}); err != nil || len(page.Sequences) != 0 || page.Sequences == nil {
			t.Fatalf("List of an empty database: %+v, %v", page, err)
		}
		for want := int64(1); want <= 3; want++ {
			mustNext(t, s, "orders", want)
		}
		mustCurrent(t, s, "orders", 3)
		mustNext(t, s, "invoices", 1)
		if r, err := s.NextN(ctx, "invoices", 1); err != nil || r != (counters.Range{First: 2, Last: 2}) {
			t.Errorf("NextN(1) = %v, %v; want 2…2", r, err)
		}
		page, err := s.List(ctx, counters.ListOptions{})
		list := page.Sequences
		want := []counters.Sequence{{Name: "invoices", Value: 2, Mode: seqd.ModeStrict}, {Name: "orders", Value: 3, Mode: seqd.ModeStrict}}
		if err != nil || !slices.Equal(list, want) {
			t.Errorf("List = %v, %v; want %v", list, err, want)
		}

		mustSet(t, s, "orders", 10, false)
		mustNext(t, s, "orders", 11)
		mustSet(t, s, "orders", 11, false) // the current value: nothing to do
		mustCurrent(t, s, "orders", 11)
		mustSet(t, s, "fresh", 5, false) // Set creates
		mustCurrent(t, s, "fresh", 5)
		mustNext(t, s, "fresh", 6)
		mustSet(t, s, "zero", 0, false)
		mustCurrent(t, s, "zero", 0)
		mustNext(t, s, "zero", 1)
	})
}

func TestSetBackwards(t *testing.T) {
	forEachStrategy(t, func(t *testing.T, st strategy) {
		ctx := testContext(t)
		s := st.new(be.Database(t), counters.Options{})

		mustSet(t, s, "s", 5, false)
		mustNext(t, s, "s", 6)
		if err := s.Set(ctx, "s", 3, false); !errors.Is(err, counters.ErrBackwards) {
			t.Fatalf("Set backwards: %v, want ErrBackwards", err)
		}
		mustCurrent(t, s, "s", 6)
		mustSet(t, s, "s", 3, true)
		mustCurrent(t, s, "s", 3)
		mustNext(t, s, "s", 4)
	})
}

func TestExhaustion(t *testing.T) {
	forEachStrategy(t, func(t *testing.T, st strategy) {
		ctx := testContext(t)
		s := st.new(be.Database(t), counters.Options{})

		mustSet(t, s, "full", math.MaxInt64-1, false)
		mustNext(t, s, "full", math.MaxInt64)
		for range 2 {
			if v, err := s.Next(ctx, "full"); !errors.Is(err, counters.ErrExhausted) {
				t.Fatalf("Next at MaxInt64 = %d, %v; want ErrExhausted", v, err)
			}
		}
		mustCurrent(t, s, "full", math.MaxInt64)

		if !st.batches {
			return
		}
		mustSet(t, s, "almost", math.MaxInt64-1, false)
		if r, err := s.NextN(ctx, "almost", 2); !errors.Is(err, counters.ErrExhausted) {
			t.Fatalf("NextN(2) with 1 value left = %v, %v; want ErrExhausted", r, err)
		}
		mustCurrent(t, s, "almost", math.MaxInt64-1)
		if r, err := s.NextN(ctx, "almost", 1); err != nil || r != (counters.Range{First: math.MaxInt64, Last: math.MaxInt64}) {
			t.Fatalf("NextN(1) with 1 value left = %v, %v; want the last value", r, err)
		}
	})
}

// Callers that queue together near the end: those that fit get the last values,
// and the rest get ErrExhausted. For the coalescing counter this is the batch that
// does not fit and is split.
func TestExhaustionUnderConcurrency(t *testing.T) {
	forEachStrategy(t, func(t *testing.T, st strategy) {
		ctx := testContext(t)
		s := st.new(be.Database(t), counters.Options{})
		mustSet(t, s, "end", math.MaxInt64-3, false)

		const callers = 8
		var mu sync.Mutex
		var got []int64
		exhausted := 0
		var wg sync.WaitGroup
		for range callers {
			wg.Go(func() {
				v, err := s.Next(ctx, "end")
				mu.Lock()
				defer mu.Unlock()
				switch {
				case errors.Is(err, counters.ErrExhausted):
					exhausted++
				case err != nil:
					t.Error(err)
				default:
					got = append(got, v)
				}
			})
		}
		wg.Wait()
		slices.Sort(got)
		want := []int64{math.MaxInt64 - 2, math.MaxInt64 - 1, math.MaxInt64}
		if !slices.Equal(got, want) || exhausted != callers-len(want) {
			t.Errorf("got %v and %d × ErrExhausted; want %v and %d", got, exhausted, want, callers-len(want))
		}
		mustCurrent(t, s, "end", math.MaxInt64)
	})
}

func mustNext(t *testing.T, s sequencer, name string, want int64) {
	t.Helper()
	if got, err := s.Next(testContext(t), name); err != nil || got != want {
		t.Fatalf("Next(%q) = %d, %v; want %d", name, got, err, want)
	}
}

func mustCurrent(t *testing.T, s counters.Sequencer, name string, want int64) {
	t.Helper()
	if got, err := s.Current(testContext(t), name); err != nil || got.Value != want || got.Mode != seqd.ModeStrict {
		t.Fatalf("Current(%q) = %+v, %v; want %d, strict", name, got, err, want)
	}
}

func mustSet(t *testing.T, s counters.Sequencer, name string, value int64, force bool) {
	t.Helper()
	if err := s.Set(testContext(t), name, value, force); err != nil {
		t.Fatalf("Set(%q, %d, force=%v): %v", name, value, force, err)
	}
}

// checkExactly checks that values are exactly 1…n, each once.
func checkExactly(t *testing.T, values []int64, n int64) {
	t.Helper()
	slices.Sort(values)
	if int64(len(values)) != n {
		t.Errorf("%d values, want %d", len(values), n)
	}
	dups, missing := 0, 0
	next := int64(1)
	for i, v := range values {
		switch {
		case i > 0 && v == values[i-1]:
			dups++
			continue
		case v > next:
			missing += int(v - next)
		}
		next = v + 1
	}
	if dups > 0 || missing > 0 || next-1 != n {
		t.Errorf("values are not exactly 1…%d: %d duplicates, %d missing, last %d", n, dups, missing, next-1)
	}
}
