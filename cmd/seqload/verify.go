package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/seqd/seqd/objectid"
)

// The verification works on what each client received, one stream per client. Values are
// never copied into one big slice: each stream is sorted in place and the streams are
// merged, so checking costs no memory beyond the 12 (ObjectId) or 8 (sequence) bytes per
// value already held.

// maxListed bounds how many duplicates, gaps and order violations a report spells out.
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
	duplicates      int64 // copies beyond the first, over all values
	orderViolations int64 // ObjectIds only: adjacent pairs, within a client, not increasing
	span            *span // sequences only
	failures        []string
}

// verifyObjectIDs checks that no id was received twice and that each client's ids
// strictly increase. It sorts the streams in place.
func verifyObjectIDs(streams []stream[objectid.ID]) verdict {
	var v verdict
	var listed int
	for _, s := range streams {
		v.values += int64(len(s.values))
		n, first := orderViolations(s.values, objectid.Compare)
		if n == 0 {
			continue
		}
		v.orderViolations += n
		if listed < maxListed {
			listed++
			v.failures = append(v.failures, fmt.Sprintf(
				"order: %s: oid #%d %s is not above #%d %s (%d violations in this client)",
				s.label(), first, s.values[first], first-1, s.values[first-1], n))
		}
	}
	runs := sortedRuns(streams, objectid.Compare)
	u := uniqueness[objectid.ID]{cmp: objectid.Compare}
	mergeSorted(runs, objectid.Compare, func(id objectid.ID, run int) { u.add(id, run) })
	v.distinct, v.duplicates = u.distinct, u.extra
	v.failures = append(v.failures, u.failures("oid", streams, objectid.ID.String)...)
	return v
}

// verifySequence checks that no value was received twice and, with contiguous, that the
// values form one run without gaps. failed is the number of requests that got no values:
// each may have reserved some on the server all the same, which the report points out.
// It sorts the streams in place.
func verifySequence(streams []stream[int64], contiguous bool, failed int64) verdict {
	var v verdict
	for _, s := range streams {
		v.values += int64(len(s.values))
	}
	runs := sortedRuns(streams, compareInt64)
	u := uniqueness[int64]{cmp: compareInt64}
	sp := new(span)
	mergeSorted(runs, compareInt64, func(x int64, run int) {
		if u.add(x, run) {
			sp.add(x)
		}
	})
	v.distinct, v.duplicates, v.span = u.distinct, u.extra, sp
	v.failures = append(v.failures, u.failures("value", streams, formatInt64)...)
	if contiguous && sp.missing > 0 {
		msg := fmt.Sprintf("contiguity: %d values missing between %d and %d (%s)",
			sp.missing, sp.min, sp.max, sp.describeGaps())
		if failed > 0 {
			msg += fmt.Sprintf("; %d requests failed, and a failed request may have reserved values all the same", failed)
		}
		v.failures = append(v.failures, msg)
	}
	return v
}

func compareInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func formatInt64(x int64) string { return strconv.FormatInt(x, 10) }

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

// span follows an ascending sequence of distinct integers: its bounds and its holes.
type span struct {
	n        int64
	min, max int64
	missing  uint64     // integers between min and max never seen; uint64 so no server can overflow it
	holes    int64      // runs of missing integers
	gaps     [][2]int64 // the first maxListed holes, inclusive bounds
}

func (s *span) add(v int64) {
	if s.n == 0 {
		s.min = v
	} else if v > s.max+1 {
		s.missing += uint64(v) - uint64(s.max) - 1
		s.holes++
		if len(s.gaps) < maxListed {
			s.gaps = append(s.gaps, [2]int64{s.max + 1, v - 1})
		}
	}
	s.n++
	s.max = v
}

func (s *span) describeGaps() string {
	parts := make([]string, 0, len(s.gaps)+1)
	for _, g := range s.gaps {
		if g[0] == g[1] {
			parts = append(parts, strconv.FormatInt(g[0], 10))
		} else {
			parts = append(parts, fmt.Sprintf("%d..%d", g[0], g[1]))
		}
	}
	if s.holes > int64(len(s.gaps)) {
		parts = append(parts, fmt.Sprintf("and %d more holes", s.holes-int64(len(s.gaps))))
	}
	return strings.Join(parts, ", ")
}
