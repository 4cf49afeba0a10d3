package history

import (
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// t0 is a wall-clock time without a monotonic reading, as times from another process are.
var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// op builds an op invoked at t0+start and completed at t0+end, both in microseconds.
func op(client string, start, end, first, last int64) Op {
	return Op{
		Client: client,
		Start:  t0.Add(time.Duration(start) * time.Microsecond),
		End:    t0.Add(time.Duration(end) * time.Microsecond),
		First:  first,
		Last:   last,
	}
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name     string
		ops      []Op
		opts     Options
		want     Result // Examples and the options are compared separately
		examples []string
		fails    bool
	}{
		{name: "empty", want: Result{}},
		{
			name: "one op",
			ops:  []Op{op("a", 0, 10, 5, 7)},
			opts: Options{Contiguous: true},
			want: Result{Ops: 1, Values: 3, Min: 5, Max: 7},
		},
		{
			name: "one after another",
			ops:  []Op{op("a", 0, 10, 1, 1), op("b", 20, 30, 2, 4), op("a", 40, 50, 5, 5)},
			opts: Options{Contiguous: true},
			want: Result{Ops: 3, Values: 5, Min: 1, Max: 5},
		},
		{
			// b was invoked before a completed: the server may have served b first.
			name: "overlapping ops in either order",
			ops:  []Op{op("a", 0, 10, 2, 2), op("b", 9, 20, 1, 1)},
			want: Result{Ops: 2, Values: 2, Min: 1, Max: 2},
		},
		{
			name: "equal times do not constrain",
			ops:  []Op{op("a", 0, 10, 2, 2), op("b", 10, 20, 1, 1)},
			want: Result{Ops: 2, Values: 2, Min: 1, Max: 2},
		},
		{
			name:     "completed before invoked, smaller values",
			ops:      []Op{op("a", 0, 10, 2, 2), op("b", 11, 20, 1, 1)},
			want:     Result{Ops: 2, Values: 2, Min: 1, Max: 2, OrderViolations: 1},
			examples: []string{"order: b got 1 (invoked +11µs, completed +20µs) after a got 2 (completed +10µs)"},
			fails:    true,
		},
		{
			// c ended before b began and holds the largest value: b is below it, though
			// above a, which also ended before b began. One violation, however many values.
			name: "below the largest completed value",
			ops: []Op{
				op("a", 0, 10, 1, 1), op("c", 5, 15, 10, 12), op("b", 20, 30, 4, 9),
				op("d", 35, 40, 13, 13),
			},
			want:     Result{Ops: 4, Values: 11, Min: 1, Max: 13, Gaps: 2, OrderViolations: 1},
			examples: []string{"order: b got 4..9 (invoked +20µs, completed +30µs) after c got 10..12 (completed +15µs)"},
			fails:    true,
		},
		{
			name:     "same value twice",
			ops:      []Op{op("a", 0, 10, 1, 1), op("b", 0, 10, 1, 1)},
			want:     Result{Ops: 2, Values: 2, Min: 1, Max: 1, Duplicates: 1},
			examples: []string{"duplicate 1: a got 1, b got 1"},
			fails:    true,
		},
		{
			name:     "ranges overlapping",
			ops:      []Op{op("a", 0, 10, 1, 5), op("b", 0, 10, 4, 8)},
			want:     Result{Ops: 2, Values: 10, Min: 1, Max: 8, Duplicates: 2},
			examples: []string{"duplicate 4..5: a got 1..5, b got 4..8"},
			fails:    true,
		},
		{
			name: "one value three times, one range inside another",
			ops: []Op{
				op("a", 0, 10, 1, 10), op("b", 0, 10, 3, 4), op("c", 0, 10, 4, 4), op("d", 0, 10, 11, 11),
			},
			want: Result{Ops: 4, Values: 14, Min: 1, Max: 11, Duplicates: 3},
			examples: []string{
				"duplicate 3..4: a got 1..10, b got 3..4",
				"duplicate 4: a got 1..10, c got 4",
			},
			fails: true,
		},
		{
			name: "gaps, not expected",
			ops:  []Op{op("a", 0, 10, 1, 2), op("b", 20, 30, 4, 4), op("c", 40, 50, 8, 9)},
			want: Result{Ops: 3, Values: 5, Min: 1, Max: 9, Gaps: 4},
		},
		{
			name: "gaps, expected not to be",
			ops:  []Op{op("a", 0, 10, 1, 2), op("b", 20, 30, 4, 4), op("c", 40, 50, 8, 9)},
			opts: Options{Contiguous: true},
			want: Result{Ops: 3, Values: 5, Min: 1, Max: 9, Gaps: 4},
			examples: []string{
				"gap 3: nobody got it, between a's 1..2 and b's 4",
				"gap 5..7: nobody got it, between b's 4 and c's 8..9",
			},
			fails: true,
		},
		{
			name: "negative values",
			ops:  []Op{op("a", 0, 10, -3, -1), op("b", 20, 30, 0, 2)},
			opts: Options{Contiguous: true},
			want: Result{Ops: 2, Values: 6, Min: -3, Max: 2},
		},
		{
			name: "extremes: counts saturate",
			ops: []Op{
				op("a", 0, 10, math.MinInt64, math.MinInt64), op("b", 0, 10, math.MaxInt64, math.MaxInt64),
				op("c", 0, 10, math.MinInt64, math.MaxInt64),
			},
			want: Result{Ops: 3, Values: math.MaxInt64, Min: math.MinInt64, Max: math.MaxInt64,
				Duplicates: 2, Gaps: 0},
			examples: []string{
				"duplicate -9223372036854775808: a got -9223372036854775808, c got -9223372036854775808..9223372036854775807",
				"duplicate 9223372036854775807: c got -9223372036854775808..9223372036854775807, b got 9223372036854775807",
			},
			fails: true,
		},
		{
			name: "gap over the whole range saturates",
			ops:  []Op{op("a", 0, 10, math.MinInt64, math.MinInt64), op("b", 20, 30, math.MaxInt64, math.MaxInt64)},
			want: Result{Ops: 2, Values: 2, Min: math.MinInt64, Max: math.MaxInt64, Gaps: math.MaxInt64},
		},
		{
			name: "invalid ops are counted and left out",
			ops: []Op{
				op("a", 0, 10, 1, 1), op("b", 20, 30, 5, 3), op("c", 40, 35, 2, 2), op("d", 50, 60, 2, 2),
			},
			opts: Options{Contiguous: true},
			want: Result{Ops: 4, Values: 2, Min: 1, Max: 2, Invalid: 2},
			examples: []string{
				"invalid op: b got first 5 above last 3",
				"invalid op: c got 2, completed 5µs before it was invoked",
			},
			fails: true,
		},
		{
			name: "only invalid ops",
			ops:  []Op{op("b", 20, 30, 5, 3)},
			want: Result{Ops: 1, Invalid: 1},
			examples: []string{
				"invalid op: b got first 5 above last 3",
			},
			fails: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			orig := slices.Clone(tt.ops)
			got := Check(tt.ops, tt.opts)
			if !slices.Equal(tt.ops, orig) {
				t.Errorf("Check changed its input")
			}
			examples := got.Examples
			got.Examples, got.contiguous = nil, false
			if !got.equal(tt.want) {
				t.Errorf("Check = %+v\nwant    %+v", got, tt.want)
			}
			if !slices.Equal(examples, tt.examples) {
				t.Errorf("examples:\n%s\nwant:\n%s", strings.Join(examples, "\n"), strings.Join(tt.examples, "\n"))
			}
			err := Check(tt.ops, tt.opts).Err()
			if (err != nil) != tt.fails || err != nil && !errors.Is(err, ErrInconsistent) {
				t.Errorf("Err() = %v, want failure %v wrapping ErrInconsistent", err, tt.fails)
			}
		})
	}
}

func TestResultText(t *testing.T) {
	ops := []Op{op("a", 0, 10, 2, 2), op("b", 11, 20, 1, 1), op("c", 0, 30, 1, 1), op("d", 40, 50, 5, 5)}
	r := Check(ops, Options{Contiguous: true})
	if got, want := r.String(), "4 ops, 4 values in [1, 5]: 1 duplicates, 2 gaps, 1 order violations"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	want := "history: inconsistent: 4 ops, 4 values in [1, 5]: 1 duplicates, 2 gaps, 1 order violations; " +
		"duplicate 1: b got 1, c got 1; " +
		"order: b got 1 (invoked +11µs, completed +20µs) after a got 2 (completed +10µs); " +
		"gap 3..4: nobody got it, between a's 2 and d's 5"
	if err := r.Err(); err == nil || err.Error() != want {
		t.Errorf("Err() = %v\nwant %s", err, want)
	}
	if err := Check(ops[:1], Options{}).Err(); err != nil {
		t.Errorf("Err() of a correct history = %v", err)
	}
}

func TestExamplesBounded(t *testing.T) {
	// 30 duplicates and 30 order violations: 10 examples, of both kinds.
	var ops []Op
	for i := range int64(30) {
		ops = append(ops, op("a", 100*i, 100*i+10, 100-i, 100-i), op("b", 100*i, 100*i+10, 100-i, 100-i))
	}
	r := Check(ops, Options{})
	if r.Duplicates != 30 || r.OrderViolations != 58 || len(r.Examples) != maxExamples {
		t.Fatalf("%v, %d examples; want 30 duplicates, 58 order violations, %d examples", r, len(r.Examples), maxExamples)
	}
	var dups, order int
	for _, e := range r.Examples {
		switch {
		case strings.HasPrefix(e, "duplicate "):
			dups++
		case strings.HasPrefix(e, "order: "):
			order++
		}
	}
	if dups != 5 || order != 5 {
		t.Errorf("%d duplicate and %d order examples, want 5 and 5: %q", dups, order, r.Examples)
	}
}

func TestMonotonicClock(t *testing.T) {
	// time.Now() readings compare on the monotonic clock, which wall-clock steps do not move.
	start := time.Now()
	a := Op{Client: "a", Start: start, End: start.Add(time.Millisecond), First: 2, Last: 2}
	b := Op{Client: "b", Start: start.Add(2 * time.Millisecond), End: start.Add(3 * time.Millisecond), First: 1, Last: 1}
	if r := Check([]Op{a, b}, Options{}); r.OrderViolations != 1 {
		t.Errorf("Check = %v, want 1 order violation", r)
	}
}

func TestRecorder(t *testing.T) {
	// A linearizable counter, used by concurrent goroutines: the history must pass.
	var (
		counter atomic.Int64
		rec     Recorder
		wg      sync.WaitGroup
	)
	const clients, perClient = 8, 500
	for c := range clients {
		wg.Go(func() {
			for i := range perClient {
				n := int64(i%3 + 1)
				start := time.Now()
				last := counter.Add(n)
				rec.Add(Op{Client: string(rune('a' + c)), Start: start, End: time.Now(), First: last - n + 1, Last: last})
			}
		})
	}
	wg.Wait()
	ops := rec.Ops()
	r := Check(ops, Options{Contiguous: true})
	if err := r.Err(); err != nil || r.Ops != clients*perClient || r.Min != 1 || r.Max != counter.Load() || r.Values != r.Max {
		t.Errorf("Check = %v, %v; want %d ops, 1..%d", r, err, clients*perClient, counter.Load())
	}
	ops[0].First = -1 // a copy
	if rec.Ops()[0].First == -1 {
		t.Error("Ops returned the recorder's own slice")
	}
}

func TestCheckFunc(t *testing.T) {
	ops := []Op{op("a", 0, 10, 2, 2), op("b", 11, 20, 1, 1)}
	calls := 0
	r := CheckFunc(len(ops), func(i int) Op { calls++; return ops[i] }, Options{})
	if r.OrderViolations != 1 || r.Values != 2 || calls == 0 {
		t.Errorf("CheckFunc = %v after %d calls", r, calls)
	}
}

func TestCheckAbove(t *testing.T) {
	tests := []struct {
		name           string
		binding, later []Op
		want           []string
	}{
		{name: "no binding op", later: []Op{op("b", 20, 30, 1, 1)}},
		{name: "no later op", binding: []Op{op("a", 0, 10, 5, 5)}},
		{
			// b was invoked before a completed, or as it did: the server may have served b first.
			name:    "overlapping ops are not bound",
			binding: []Op{op("a", 0, 10, 5, 5)},
			later:   []Op{op("b", 9, 20, 1, 1), op("c", 10, 20, 2, 5)},
		},
		{
			name:    "invoked after the binding op completed",
			binding: []Op{op("a", 0, 10, 5, 7)},
			later:   []Op{op("b", 11, 20, 1, 1), op("c", 12, 20, 7, 9), op("d", 13, 20, 8, 8)},
			want:    []string{"b got 1, invoked 1µs after a got 5..7", "c got 7..9, invoked 2µs after a got 5..7"},
		},
		{
			// At 20, a and c have completed, not b: c's 12 binds. At 31, b's 20 binds.
			name:    "the largest Last of those that completed binds",
			binding: []Op{op("a", 0, 10, 8, 8), op("b", 0, 30, 20, 20), op("c", 5, 15, 12, 12)},
			later: []Op{
				op("w", 20, 40, 13, 13), op("x", 20, 40, 12, 12), op("y", 31, 40, 15, 15), op("z", 31, 40, 21, 21),
			},
			want: []string{"x got 12, invoked 5µs after c got 12", "y got 15, invoked 1µs after b got 20"},
		},
		{
			// Within binding and within later, nothing is ordered.
			name:    "each set alone binds nothing",
			binding: []Op{op("a", 0, 10, 5, 5), op("b", 20, 30, 1, 1)},
			later:   []Op{op("c", 40, 50, 9, 9), op("d", 60, 70, 6, 6)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			binding, later := slices.Clone(tt.binding), slices.Clone(tt.later)
			if got := CheckAbove(binding, later); !slices.Equal(got, tt.want) {
				t.Errorf("CheckAbove =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			if !slices.Equal(binding, tt.binding) || !slices.Equal(later, tt.later) {
				t.Error("CheckAbove modified its arguments")
			}
		})
	}
}
