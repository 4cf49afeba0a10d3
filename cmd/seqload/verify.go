package main

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/seqd/seqd/internal/history"
	"github.com/seqd/seqd/objectid"
	"github.com/seqd/seqd/uuidv7"
)

// The verification works on what each client received, one stream per client.
//
// ObjectIds and UUIDs are never copied into one big slice: each stream is sorted in place
// and the streams are merged, so checking costs no memory beyond the 12 or 16 bytes per id
// already held.
//
// Sequence requests are checked as one history across all clients and addresses (package
// history), and, where the sequence was cached, as one per address. Each is a range of
// values, recorded in 32 bytes whatever its count; the check adds 48 bytes per request
// while it runs, 96 for a cached sequence, and about 400 for a run with a switch of mode,
// whose requests it holds as history.Ops (BenchmarkVerifySequence).

// maxListed bounds how many duplicates and order violations an ObjectId report spells out.
const maxListed = 10

// stream is what one client received from its address, in arrival order.
type stream[T any] struct {
	client int
	addr   string
	values []T
}

func (s stream[T]) label() string { return fmt.Sprintf("client %d (%s)", s.client, s.addr) }

// verdict is what verification found.
type verdict struct {
	values          int64 // values received
	distinct        int64
	duplicates      int64           // copies beyond the first, over all values
	orderViolations int64           // ObjectIds: adjacent pairs, within a client, not increasing; sequences: see history.Result
	sequence        *history.Result // sequences only
	failures        []string
}

// verifyObjectIDs checks that no id was received twice and that each client's ids
// strictly increase. It sorts the streams in place.
func verifyObjectIDs(streams []stream[objectid.ID]) verdict {
	return verifyIDs(streams, "oid", objectid.Compare, objectid.ID.String)
}

// verifyUUIDs is verifyObjectIDs for version 7 UUIDs, which a process hands out in
// increasing order too.
func verifyUUIDs(streams []stream[uuidv7.UUID]) verdict {
	return verifyIDs(streams, "uuid", uuidv7.Compare, uuidv7.UUID.String)
}

// verifyIDs checks ids of one kind, called noun in the report: none received twice,
// and each client's strictly increasing. It sorts the streams in place.
func verifyIDs[T any](streams []stream[T], noun string, cmp func(a, b T) int, format func(T) string) verdict {
	var v verdict
	var listed int
	for _, s := range streams {
		v.values += int64(len(s.values))
		n, first := orderViolations(s.values, cmp)
		if n == 0 {
			continue
		}
		v.orderViolations += n
		if listed < maxListed {
			listed++
			v.failures = append(v.failures, fmt.Sprintf(
				"order: %s: %s #%d %s is not above #%d %s (%d violations in this client)",
				s.label(), noun, first, format(s.values[first]), first-1, format(s.values[first-1]), n))
		}
	}
	runs := sortedRuns(streams, cmp)
	u := uniqueness[T]{cmp: cmp}
	mergeSorted(runs, cmp, func(id T, run int) { u.add(id, run) })
	v.distinct, v.duplicates = u.distinct, u.extra
	v.failures = append(v.failures, u.failures(noun, streams, format)...)
	return v
}

// seqOp is one successful sequence request: when it was sent and when its answer was read,
// as durations since the load began on the monotonic clock, and the values first..last it
// received. It holds no pointer, so that millions of them cost the garbage collector
// nothing while the load runs.
type seqOp struct {
	start, end  time.Duration
	first, last int64
}

// verifySequence checks the requests of every client, over all addresses, as
// package history does: no value received twice, across all; real-time order,
// that is a request sent after another had been answered received larger values,
// among the requests that j binds to each other (promise.go); and, with
// contiguous, no gap. failed is the number of requests that got no values: each
// may have reserved some on the server all the same, which the report points out.
// began is what the seqOp times count from.
func verifySequence(began time.Time, streams []stream[seqOp], contiguous bool, failed int64, j judgement) verdict {
	n, op := seqHistory(began, streams)
	r := history.CheckFunc(n, op, history.Options{Contiguous: contiguous})

	v := verdict{
		values:     r.Values,
		distinct:   r.Values - r.Duplicates,
		duplicates: r.Duplicates,
		sequence:   &r,
	}
	strictOps := 0
	if !j.global {
		for _, s := range streams {
			for _, o := range s.values {
				if j.strict(o.start, o.end) {
					strictOps++
				}
			}
		}
	}
	var order []string // the failures of the order check: counts, then examples
	switch {
	case j.global || strictOps == n && n > 0:
		v.orderViolations = r.OrderViolations
		if r.OrderViolations > 0 {
			order = append(order, fmt.Sprintf(
				"order: %d requests received a value not above one received by a request answered before they were sent",
				r.OrderViolations))
		}
	case strictOps == 0:
		v.orderViolations, order = perAddress(began, streams)
	default:
		v.orderViolations, order = switched(began, streams, j, n, strictOps)
	}
	// r's examples of order are those of the whole history: they stand only where
	// every request binds every other.
	for _, e := range r.Examples {
		if !strings.HasPrefix(e, "order: ") || j.global || strictOps == n {
			v.failures = append(v.failures, e)
		}
	}
	if r.Duplicates > 0 {
		v.failures = append(v.failures, fmt.Sprintf("duplicates: %d values received more than once", r.Duplicates))
	}
	v.failures = append(v.failures, order...)
	if r.Invalid > 0 { // decodeSequence and the monotonic clock rule them out
		v.failures = append(v.failures, fmt.Sprintf("%d requests could not be checked", r.Invalid))
	}
	if contiguous && r.Gaps > 0 {
		msg := fmt.Sprintf("contiguity: %d values missing between %d and %d", r.Gaps, r.Min, r.Max)
		if failed > 0 {
			msg += fmt.Sprintf("; %d requests failed, and a failed request may have reserved values all the same", failed)
		}
		v.failures = append(v.failures, msg)
	}
	return v
}

// byAddress groups streams by address, in the order the addresses first appear.
func byAddress(streams []stream[seqOp]) [][]stream[seqOp] {
	var groups [][]stream[seqOp]
	index := map[string]int{}
	for _, s := range streams {
		i, ok := index[s.addr]
		if !ok {
			i = len(groups)
			index[s.addr] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], s)
	}
	return groups
}

// perAddress checks real-time order among the requests of each address, and
// returns how many requests broke it, with a count and the first examples of each
// address that has any.
func perAddress(began time.Time, streams []stream[seqOp]) (violations int64, failures []string) {
	for _, group := range byAddress(streams) {
		n, op := seqHistory(began, group)
		r := history.CheckFunc(n, op, history.Options{})
		if r.OrderViolations == 0 {
			continue
		}
		violations += r.OrderViolations
		failures = append(failures, fmt.Sprintf(
			"order: %d requests to %s received a value not above one received from it by a request answered before they were sent",
			r.OrderViolations, group[0].addr))
		for _, e := range r.Examples {
			if strings.HasPrefix(e, "order: ") {
				failures = append(failures, e)
			}
		}
	}
	return violations, failures
}

// switched checks a run whose sequence changed modes: the requests answered
// while it was strict (j's windows, strictOps of the n requests) against every
// request answered before they were sent, and each other request against those
// of its address answered before it was sent. It holds every request as a
// history.Op twice while it runs (80 bytes each), and history.CheckAbove a
// sorted copy of what binds.
func switched(began time.Time, streams []stream[seqOp], j judgement, n, strictOps int) (violations int64, failures []string) {
	all := make([]history.Op, 0, n) // grouped by address
	strict, cached := make([]history.Op, 0, strictOps), make([]history.Op, 0, n-strictOps)
	type group struct {
		addr                 string
		from, to             int // its requests in all
		cachedFrom, cachedTo int // and those of them in cached
	}
	var groups []group
	for _, streams := range byAddress(streams) {
		g := group{addr: streams[0].addr, from: len(all), cachedFrom: len(cached)}
		n, op := seqHistory(began, streams)
		for i := range n {
			o := op(i)
			all = append(all, o)
			if j.strict(o.Start.Sub(began), o.End.Sub(began)) {
				strict = append(strict, o)
			} else {
				cached = append(cached, o)
			}
		}
		g.to, g.cachedTo = len(all), len(cached)
		groups = append(groups, g)
	}
	for _, g := range groups {
		if bad := history.CheckAbove(all[g.from:g.to], cached[g.cachedFrom:g.cachedTo]); len(bad) > 0 {
			violations += int64(len(bad))
			failures = append(failures, fmt.Sprintf(
				"order: %d requests to %s, answered while the sequence was not strict, received a value not above one received from it by a request answered before they were sent",
				len(bad), g.addr))
			failures = append(failures, prefixed("order, per address: ", bad[:min(len(bad), maxListed)])...)
		}
	}
	if bad := history.CheckAbove(all, strict); len(bad) > 0 {
		violations += int64(len(bad))
		failures = append(failures, fmt.Sprintf(
			"order: %d requests answered while the sequence was strict received a value not above one received by a request answered before they were sent",
			len(bad)))
		failures = append(failures, prefixed("order, strict: ", bad[:min(len(bad), maxListed)])...)
	}
	return violations, failures
}

func prefixed(prefix string, lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = prefix + l
	}
	return out
}

// seqHistory is the requests of every stream, one after another, as a history of n ops
// for package history: op(i) builds the i-th.
func seqHistory(began time.Time, streams []stream[seqOp]) (n int, op func(i int) history.Op) {
	var (
		ops     []stream[seqOp] // the streams with at least one op
		offsets []int           // index of the first op of each, ascending
		labels  []string
	)
	for _, s := range streams {
		if len(s.values) > 0 {
			ops, offsets, labels = append(ops, s), append(offsets, n), append(labels, s.label())
			n += len(s.values)
		}
	}
	return n, func(i int) history.Op {
		k, found := slices.BinarySearch(offsets, i)
		if !found {
			k--
		}
		o := ops[k].values[i-offsets[k]]
		return history.Op{Client: labels[k], Start: began.Add(o.start), End: began.Add(o.end), First: o.first, Last: o.last}
	}
}

// writeRanges writes the sequence values every client of out received to the file
// path, as ascending ranges (history.WriteRanges), for a check of uniqueness across
// processes.
func writeRanges(path string, out outcome) error {
	streams := make([]stream[seqOp], len(out.workers))
	for i, w := range out.workers {
		streams[i] = stream[seqOp]{w.client, w.addr, w.seqs}
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("-ranges: %w", err)
	}
	n, op := seqHistory(out.began, streams)
	if err := errors.Join(history.WriteRanges(f, n, op), f.Close()); err != nil {
		return fmt.Errorf("-ranges: %w", err)
	}
	return nil
}

// orderViolations counts the values that are not strictly above the one before them and
// returns the index of the first, or -1.
func orderViolations[T any](values []T, cmp func(a, b T) int) (count int64, first int) {
	first = -1
	for i := 1; i < len(values); i++ {
		if cmp(values[i-1], values[i]) >= 0 {
			if count == 0 {
				first = i
			}
			count++
		}
	}
	return count, first
}

// sortedRuns sorts each stream's values in place and returns them as runs for mergeSorted.
// Streams that are in order already (every correct ObjectId stream) cost one pass.
func sortedRuns[T any](streams []stream[T], cmp func(a, b T) int) [][]T {
	runs := make([][]T, len(streams))
	for i, s := range streams {
		slices.SortFunc(s.values, cmp)
		runs[i] = s.values
	}
	return runs
}

// mergeSorted calls visit for every value of the ascending runs, in ascending order, with
// the index of the run it came from; equal values come out one after the other.
// It is a k-way merge over a binary heap of run heads.
func mergeSorted[T any](runs [][]T, cmp func(a, b T) int, visit func(v T, run int)) {
	type head struct {
		values []T // never empty while in the heap
		run    int
	}
	less := func(a, b head) bool {
		if c := cmp(a.values[0], b.values[0]); c != 0 {
			return c < 0
		}
		return a.run < b.run
	}
	var h []head
	for i, r := range runs {
		if len(r) > 0 {
			h = append(h, head{r, i})
		}
	}
	siftDown := func(i int) {
		for {
			smallest := i
			if l := 2*i + 1; l < len(h) && less(h[l], h[smallest]) {
				smallest = l
			}
			if r := 2*i + 2; r < len(h) && less(h[r], h[smallest]) {
				smallest = r
			}
			if smallest == i {
				return
			}
			h[i], h[smallest] = h[smallest], h[i]
			i = smallest
		}
	}
	for i := len(h)/2 - 1; i >= 0; i-- {
		siftDown(i)
	}
	for len(h) > 1 {
		top := &h[0]
		visit(top.values[0], top.run)
		if top.values = top.values[1:]; len(top.values) == 0 {
			h[0] = h[len(h)-1]
			h = h[:len(h)-1]
		}
		siftDown(0)
	}
	if len(h) == 1 { // the last run needs no heap
		for _, x := range h[0].values {
			visit(x, h[0].run)
		}
	}
}

// duplicate is a value received more than once, with the run (client) of every copy.
type duplicate[T any] struct {
	value T
	runs  []int
}

// uniqueness counts the distinct values of an ascending sequence and collects the
// values seen more than once.
type uniqueness[T any] struct {
	cmp      func(a, b T) int
	distinct int64
	extra    int64          // copies beyond the first
	dups     []duplicate[T] // the first maxListed duplicated values
	last     T
	lastRun  int
}

// add takes the next value in ascending order and reports whether it is new.
func (u *uniqueness[T]) add(v T, run int) bool {
	if u.distinct == 0 || u.cmp(u.last, v) != 0 {
		u.distinct++
		u.last, u.lastRun = v, run
		return true
	}
	u.extra++
	if n := len(u.dups); n > 0 && u.cmp(u.dups[n-1].value, v) == 0 {
		u.dups[n-1].runs = append(u.dups[n-1].runs, run)
	} else if n < maxListed {
		u.dups = append(u.dups, duplicate[T]{value: v, runs: []int{u.lastRun, run}})
	}
	return false
}

// failures describes each listed duplicate, naming the clients that received it.
func (u *uniqueness[T]) failures(noun string, streams []stream[T], format func(T) string) []string {
	var out []string
	for _, d := range u.dups {
		who := make([]string, len(d.runs))
		for i, r := range d.runs {
			who[i] = streams[r].label()
		}
		out = append(out, fmt.Sprintf("duplicate %s %s: received %d times, by %s",
			noun, format(d.value), len(d.runs), strings.Join(who, ", ")))
	}
	if u.extra > 0 {
		out = append(out, fmt.Sprintf("duplicates: %d values received more than once (%d listed)",
			u.extra, len(u.dups)))
	}
	return out
}
