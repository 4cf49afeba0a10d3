// Package history checks a recorded history of sequence allocations for what a
// linearizable counter promises.
//
// # What is recorded
//
// An Op is one allocation that succeeded: a client invoked it at Start and, at End,
// received the values First..Last. The caller reads Start before the request leaves and
// End once the answer is in, so that the recorded interval contains the one in which the
// server really served it. All times come from one clock: time.Now() readings of one
// process (they carry the monotonic clock, which no clock step moves), or wall-clock times
// of one machine.
//
// # What is checked
//
//   - No value twice. Duplicates counts receipts beyond the first of each value, over all
//     clients.
//   - Real-time order. If op A completed before op B was invoked (A.End strictly before
//     B.Start), every value of B is above every value of A. Check sorts the ops by End
//     and sweeps them in order of Start, folding every op that ended strictly before the
//     current one started into a running maximum of Last; the current op is a violation
//     if its First is not above that maximum. Each op counts once, however many values it
//     holds. Ops whose intervals overlap, even in a single instant (equal times), do not
//     constrain each other: the server may have served them in either order.
//   - Real-time order from some ops to others. CheckAbove asks it of two sets only: every
//     op of the later set holds values above every op of the binding set that completed
//     before it was invoked; the ops within either set do not constrain one another. So
//     a caller can hold every answer to the answers known to be strict, or the answers
//     after a fault healed to those before it, where the history as a whole promises less.
//   - Gaps, where expected. Gaps counts the values in [Min, Max] no op received. It is
//     always counted, and a failure only with Options.Contiguous.
//
// A history without duplicates and order violations is exactly one that a linearizable
// counter could have produced, a counter that may skip values (or, with Contiguous and no
// gap, one that does not): ordering the ops by their values is then a linearization, since
// an op that completed before another was invoked holds smaller values.
//
// # Failed requests are not ops
//
// A request that failed (a timeout, a lost connection, a 503) has an unknown outcome: the
// server may have allocated values for it and lost the answer on the way back, as when a
// findOneAndUpdate runs and its reply never arrives. Nothing is known of those values, so
// such a request is not an op. It can leave a gap in a correct history, which is why gaps
// fail the check only where the caller knows they cannot occur. It can never excuse a
// duplicate or an order violation: both are made of values that were received.
//
// # What it cannot prove
//
// The check sees only the history. A violation it reports is real, to the precision of the
// clock that recorded it. A history that passes shows that these ops are consistent with a
// linearizable counter, not that the counter is one: values handed to clients outside the
// history are not seen (they may repeat values recorded here as unique), slow requests
// overlap many others and so constrain little, and a race the run did not hit is not found.
//
// # Cost
//
// O(n log n) in the number of ops and 48 bytes per op beyond the ops themselves; nothing
// per value, since an op is a range whatever its length. Ops that cannot be checked (First
// above Last, End before Start) are counted as Invalid and otherwise left out.
package history

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// An Op is one allocation that succeeded: the values First..Last (inclusive, First <= Last),
// invoked at Start and completed at End. Start/End come from one process's clock (time.Now()
// readings carry the monotonic clock; across processes use wall-clock times on one machine).
type Op struct {
	Client      string // who asked: e.g. "http-7 -> 127.0.0.1:8081", "driver-2"; for messages
	Start, End  time.Time
	First, Last int64
}

// Options say what else the history must show.
type Options struct {
	Contiguous bool // the values must cover [Min, Max] with no gap
}

// Result is what Check found. Duplicates, Gaps and OrderViolations are counts;
// Examples spells out at most 10 of them, each naming the clients and values.
type Result struct {
	Ops        int
	Values     int64 // values received, duplicates included
	Min, Max   int64
	Duplicates int64 // receipts beyond the first of a value
	Gaps       int64 // values in [Min, Max] no op received (counted always)
	// OrderViolations counts the ops that received a value not above the largest value
	// of an op that completed before they were invoked.
	OrderViolations int64
	Invalid         int // ops with First above Last or End before Start, left out of every other count
	Examples        []string

	contiguous bool // gaps are failures
}

// ErrInconsistent is what Result.Err wraps: the history is not one a linearizable
// counter (without gaps, where asked) could have produced, or holds invalid ops.
var ErrInconsistent = errors.New("history: inconsistent")

// maxExamples bounds Result.Examples.
const maxExamples = 10

// Check checks ops as the package comment describes. It does not modify ops.
func Check(ops []Op, opts Options) Result {
	return CheckFunc(len(ops), func(i int) Op { return ops[i] }, opts)
}

// CheckFunc is Check for n ops kept in some other form: op(i) returns the i-th, for i in
// [0, n). It may be called more than once for one i and must return the same op each time.
// A caller with millions of ops can keep them in a compact, pointer-free form and build
// each Op on demand.
func CheckFunc(n int, op func(i int) Op, opts Options) Result {
	r := Result{Ops: n, contiguous: opts.Contiguous}
	if n == 0 {
		return r
	}
	var ex examples
	base := op(0).Start // times become durations since base, on the clock they carry

	// spans holds (First, Last) and starts (Start, First) of every valid op.
	spans := make([]point, 0, n)
	starts := make([]point, 0, n)
	for i := range n {
		o := op(i)
		if !valid(o) {
			r.Invalid++
			ex.invalid.add(describeInvalid(o))
			continue
		}
		r.Values = addSat(r.Values, uint64(o.Last)-uint64(o.First)+1)
		spans = append(spans, point{o.First, o.Last, i})
		starts = append(starts, point{int64(o.Start.Sub(base)), o.First, i})
	}
	if len(spans) > 0 {
		checkValues(&r, spans, op, &ex)
		// spans is no longer needed: it becomes the ops' (End, Last), the other half of the
		// real-time check. Going through the ops in their own order, not spans', reads
		// them from memory in sequence.
		ends := spans[:0]
		for i := range n {
			if o := op(i); valid(o) {
				ends = append(ends, point{int64(o.End.Sub(base)), o.Last, i})
			}
		}
		checkOrder(&r, starts, ends, op, base, &ex)
	}
	if !opts.Contiguous {
		ex.gaps = nil // counted, not failures: not worth an example
	}
	r.Examples = ex.merge()
	return r
}

// CheckAbove checks that every op of later holds values above every op of binding that
// completed before it was invoked (End strictly before Start), and describes each op of
// later that does not, in the order of later, next to the binding op with the largest
// Last among those that completed before it. The ops of binding do not bind one another,
// nor those of later one another; overlapping ops never bind. It does not modify binding
// or later, and takes O((m+n) log m) for m ops in binding and n in later.
func CheckAbove(binding, later []Op) []string {
	byEnd := slices.Clone(binding) // one allocation: collecting an iterator grows the slice again and again
	slices.SortFunc(byEnd, func(a, b Op) int { return a.End.Compare(b.End) })
	top := make([]int, len(byEnd)) // top[i]: the op of byEnd[:i+1] with the largest Last
	for i := range byEnd {
		if top[i] = i; i > 0 && byEnd[top[i-1]].Last >= byEnd[i].Last {
			top[i] = top[i-1]
		}
	}
	var out []string
	for _, o := range later {
		// byEnd[:n] completed before o was invoked
		n, _ := slices.BinarySearchFunc(byEnd, o.Start, func(b Op, start time.Time) int { return b.End.Compare(start) })
		if n == 0 {
			continue
		}
		if b := byEnd[top[n-1]]; o.First <= b.Last {
			out = append(out, fmt.Sprintf("%s got %s, invoked %v after %s got %s",
				o.Client, values(o.First, o.Last), o.Start.Sub(b.End), b.Client, values(b.First, b.Last)))
		}
	}
	return out
}

func valid(o Op) bool { return o.First <= o.Last && !o.End.Before(o.Start) }

// point is an op's index with two of its values, sorted by t.
type point struct {
	t, v int64
	op   int
}

func byTime(a, b point) int {
	switch {
	case a.t < b.t:
		return -1
	case a.t > b.t:
		return 1
	}
	return a.op - b.op // ties broken so that the examples do not depend on sorting
}

// checkValues counts duplicates and gaps, and finds Min and Max, sweeping the value ranges
// in order of First. Every range seen so far with the largest Last covers [First, covered]
// of the current range, since it started at or below First: the current range repeats
// exactly the values up to covered, and leaves out exactly those between covered and First.
func checkValues(r *Result, spans []point, op func(int) Op, ex *examples) {
	slices.SortFunc(spans, byTime)
	r.Min = spans[0].t
	covered, coverer := spans[0].v, spans[0].op // the largest Last so far, and its op
	for _, s := range spans[1:] {
		first, last := s.t, s.v
		switch {
		case first <= covered:
			hi := min(last, covered)
			r.Duplicates = addSat(r.Duplicates, uint64(hi)-uint64(first)+1)
			if ex.dups.wants() {
				a, b := op(coverer), op(s.op)
				ex.dups.add(fmt.Sprintf("duplicate %s: %s got %s, %s got %s",
					values(first, hi), a.Client, values(a.First, a.Last), b.Client, values(b.First, b.Last)))
			}
		case first-1 > covered: // first > covered, so first-1 does not overflow
			r.Gaps = addSat(r.Gaps, uint64(first)-uint64(covered)-1)
			if ex.gaps.wants() {
				a, b := op(coverer), op(s.op)
				ex.gaps.add(fmt.Sprintf("gap %s: nobody got it, between %s's %s and %s's %s",
					values(covered+1, first-1), a.Client, values(a.First, a.Last), b.Client, values(b.First, b.Last)))
			}
		}
		if last > covered {
			covered, coverer = last, s.op
		}
	}
	r.Max = covered
}

// checkOrder counts the ops that received a value not above the largest value of an op
// that ended before they started. starts holds (Start, First) and ends (End, Last).
func checkOrder(r *Result, starts, ends []point, op func(int) Op, base time.Time, ex *examples) {
	slices.SortFunc(starts, byTime)
	slices.SortFunc(ends, byTime)
	origin := starts[0].t // the first invocation: example times are given from it
	since := func(t time.Time) time.Duration { return time.Duration(int64(t.Sub(base)) - origin) }

	var (
		done    int   // ends[:done] ended before the current op started
		maxLast int64 // their largest Last, valid when done > 0
		maxOp   int
	)
	for _, s := range starts {
		for done < len(ends) && ends[done].t < s.t {
			if e := ends[done]; done == 0 || e.v > maxLast {
				maxLast, maxOp = e.v, e.op
			}
			done++
		}
		if done == 0 || s.v > maxLast {
			continue
		}
		r.OrderViolations++
		if ex.order.wants() {
			a, b := op(maxOp), op(s.op)
			ex.order.add(fmt.Sprintf("order: %s got %s (invoked +%v, completed +%v) after %s got %s (completed +%v)",
				b.Client, values(b.First, b.Last), since(b.Start), since(b.End),
				a.Client, values(a.First, a.Last), since(a.End)))
		}
	}
}

func describeInvalid(o Op) string {
	if o.First > o.Last {
		return fmt.Sprintf("invalid op: %s got first %d above last %d", o.Client, o.First, o.Last)
	}
	return fmt.Sprintf("invalid op: %s got %s, completed %v before it was invoked",
		o.Client, values(o.First, o.Last), o.Start.Sub(o.End))
}

// values renders the range first..last, or a single value.
func values(first, last int64) string {
	if first == last {
		return strconv.FormatInt(first, 10)
	}
	return strconv.FormatInt(first, 10) + ".." + strconv.FormatInt(last, 10)
}

// addSat adds n to the count c, stopping at math.MaxInt64: a range of int64s can hold more
// values than an int64 counts. n == 0 stands for 2⁶⁴, the one count a uint64 wraps to 0.
func addSat(c int64, n uint64) int64 {
	if n == 0 || n > uint64(math.MaxInt64-c) {
		return math.MaxInt64
	}
	return c + int64(n)
}

// exampleList keeps the first maxExamples examples of one kind.
type exampleList []string

func (l exampleList) wants() bool { return len(l) < maxExamples }

func (l *exampleList) add(s string) {
	if l.wants() {
		*l = append(*l, s)
	}
}

type examples struct {
	invalid, dups, order, gaps exampleList
}

// merge takes examples of each kind in turn, so that one kind's many do not hide another's.
func (e *examples) merge() []string {
	var out []string
	kinds := []exampleList{e.invalid, e.dups, e.order, e.gaps}
	for i := 0; len(out) < maxExamples; i++ {
		took := false
		for _, k := range kinds {
			if i < len(k) && len(out) < maxExamples {
				out = append(out, k[i])
				took = true
			}
		}
		if !took {
			break
		}
	}
	return out
}

// Err returns nil unless the history has duplicates, order violations or invalid ops, or
// gaps where Options.Contiguous was asked. The error wraps ErrInconsistent and gives the
// counts and the first examples.
func (r Result) Err() error {
	if r.Duplicates == 0 && r.OrderViolations == 0 && r.Invalid == 0 && (!r.contiguous || r.Gaps == 0) {
		return nil
	}
	msg := r.String()
	if n := min(len(r.Examples), 3); n > 0 {
		msg += "; " + strings.Join(r.Examples[:n], "; ")
	}
	return fmt.Errorf("%w: %s", ErrInconsistent, msg)
}

// String gives the counts on one line.
func (r Result) String() string {
	s := fmt.Sprintf("%d ops, %d values in [%d, %d]: %d duplicates, %d gaps, %d order violations",
		r.Ops, r.Values, r.Min, r.Max, r.Duplicates, r.Gaps, r.OrderViolations)
	if r.Invalid > 0 {
		s += fmt.Sprintf(", %d invalid ops", r.Invalid)
	}
	return s
}
