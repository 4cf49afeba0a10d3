package main

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/seqd/seqd/objectid"
)

func oid(n uint32) objectid.ID {
	return objectid.ID{8: byte(n >> 24), 9: byte(n >> 16), 10: byte(n >> 8), 11: byte(n)}
}

func TestOrderViolations(t *testing.T) {
	tests := []struct {
		values []int64
		count  int64
		first  int
	}{
		{nil, 0, -1},
		{[]int64{5}, 0, -1},
		{[]int64{1, 2, 3}, 0, -1},
		{[]int64{1, 1, 2}, 1, 1}, // equal is not increasing
		{[]int64{1, 3, 2, 4, 0}, 2, 2},
	}
	for _, tt := range tests {
		if count, first := orderViolations(tt.values, compareInt64); count != tt.count || first != tt.first {
			t.Errorf("orderViolations(%v) = %d, %d; want %d, %d", tt.values, count, first, tt.count, tt.first)
		}
	}
}

func TestMergeSorted(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, nruns := range []int{0, 1, 2, 3, 7, 64} {
		runs := make([][]int64, nruns)
		var all []int64
		for i := range runs {
			for range r.IntN(50) { // some runs stay empty
				runs[i] = append(runs[i], r.Int64N(100))
			}
			slices.Sort(runs[i])
			all = append(all, runs[i]...)
		}
		slices.Sort(all)
		var got []int64
		left := make([][]int64, nruns) // what each run has not yet given
		copy(left, runs)
		mergeSorted(runs, compareInt64, func(v int64, run int) {
			got = append(got, v)
			if len(left[run]) == 0 || left[run][0] != v {
				t.Fatalf("%d runs: visit(%d, run %d), but run %d holds %v next", nruns, v, run, run, left[run])
			}
			left[run] = left[run][1:]
		})
		if !slices.Equal(got, all) {
			t.Errorf("%d runs: merged %v, want %v", nruns, got, all)
		}
	}
}

func TestUniqueness(t *testing.T) {
	u := uniqueness[int64]{cmp: compareInt64}
	values := []struct {
		v   int64
		run int
	}{{1, 0}, {2, 0}, {2, 1}, {3, 1}, {4, 0}, {4, 1}, {4, 2}, {5, 0}}
	var fresh []int64
	for _, x := range values {
		if u.add(x.v, x.run) {
			fresh = append(fresh, x.v)
		}
	}
	if !slices.Equal(fresh, []int64{1, 2, 3, 4, 5}) || u.distinct != 5 || u.extra != 3 {
		t.Errorf("new %v, %d distinct, %d extra; want 1..5, 5, 3", fresh, u.distinct, u.extra)
	}
	streams := []stream[int64]{{0, "http://a", nil}, {1, "http://b", nil}, {2, "http://a", nil}}
	got := strings.Join(u.failures("value", streams, formatInt64), "\n")
	want := "duplicate value 2: received 2 times, by client 0 (http://a), client 1 (http://b)\n" +
		"duplicate value 4: received 3 times, by client 0 (http://a), client 1 (http://b), client 2 (http://a)\n" +
		"duplicates: 3 values received more than once (2 listed)"
	if got != want {
		t.Errorf("failures:\n%s\nwant:\n%s", got, want)
	}
}

func TestUniquenessListsAtMostMaxListed(t *testing.T) {
	u := uniqueness[int64]{cmp: compareInt64}
	for v := range int64(3 * maxListed) {
		u.add(v, 0)
		u.add(v, 1)
	}
	if len(u.dups) != maxListed || u.extra != 3*maxListed {
		t.Errorf("%d listed, %d extra; want %d, %d", len(u.dups), u.extra, maxListed, 3*maxListed)
	}
}

func TestSpan(t *testing.T) {
	var s span
	for _, v := range []int64{3, 4, 6, 10, 11} {
		s.add(v)
	}
	if s.min != 3 || s.max != 11 || s.missing != 4 || s.describeGaps() != "5, 7..9" {
		t.Errorf("span %+v, gaps %q; want 3..11, 4 missing: 5, 7..9", s, s.describeGaps())
	}

	var many span
	for v := range int64(maxListed + 3) {
		many.add(2 * v)
	}
	if many.missing != maxListed+2 || !strings.HasSuffix(many.describeGaps(), ", 19, and 2 more holes") {
		t.Errorf("%d missing, gaps %q", many.missing, many.describeGaps())
	}
}

func TestVerifyObjectIDs(t *testing.T) {
	t.Run("order per client", func(t *testing.T) {
		// Client 1's ids are all below client 0's: fine, they talk to different processes.
		v := verifyObjectIDs([]stream[objectid.ID]{
			{0, "http://a", []objectid.ID{oid(10), oid(11), oid(12)}},
			{1, "http://b", []objectid.ID{oid(1), oid(2)}},
		})
		if len(v.failures) != 0 || v.values != 5 || v.distinct != 5 {
			t.Errorf("verdict %+v, want 5 distinct and no failure", v)
		}
	})
	t.Run("out of order", func(t *testing.T) {
		v := verifyObjectIDs([]stream[objectid.ID]{
			{0, "http://a", []objectid.ID{oid(1), oid(2)}},
			{1, "http://a", []objectid.ID{oid(10), oid(12), oid(11), oid(13)}},
		})
		want := fmt.Sprintf("order: client 1 (http://a): oid #2 %s is not above #1 %s (1 violations in this client)", oid(11), oid(12))
		if v.orderViolations != 1 || len(v.failures) != 1 || v.failures[0] != want {
			t.Errorf("verdict %+v, want %q", v, want)
		}
	})
	t.Run("duplicate across addresses", func(t *testing.T) {
		v := verifyObjectIDs([]stream[objectid.ID]{
			{0, "http://a", []objectid.ID{oid(1), oid(5)}},
			{1, "http://b", []objectid.ID{oid(2), oid(5)}},
		})
		want := "duplicate oid " + oid(5).String() + ": received 2 times, by client 0 (http://a), client 1 (http://b)"
		if v.duplicates != 1 || v.distinct != 3 || len(v.failures) != 2 || v.failures[0] != want {
			t.Errorf("verdict %+v, want %q", v, want)
		}
	})
}

func TestVerifySequence(t *testing.T) {
	contiguous := func() []stream[int64] {
		return []stream[int64]{{0, "http://a", []int64{1, 4, 5}}, {1, "http://a", []int64{3, 2, 6}}}
	}
	gappy := func() []stream[int64] {
		return []stream[int64]{{0, "http://a", []int64{1, 4}}, {1, "http://a", []int64{7, 2}}}
	}
	if v := verifySequence(contiguous(), true, 0); len(v.failures) != 0 || v.span.min != 1 || v.span.max != 6 || v.span.missing != 0 {
		t.Errorf("contiguous: %+v, span %+v", v, *v.span)
	}
	if v := verifySequence(gappy(), false, 0); len(v.failures) != 0 || v.span.missing != 3 {
		t.Errorf("gaps not expected: %+v, span %+v", v, *v.span)
	}
	v := verifySequence(gappy(), true, 2)
	want := "contiguity: 3 values missing between 1 and 7 (3, 5..6); 2 requests failed, and a failed request may have reserved values all the same"
	if len(v.failures) != 1 || v.failures[0] != want {
		t.Errorf("gaps expected: %q, want %q", v.failures, want)
	}
	v = verifySequence([]stream[int64]{{0, "http://a", []int64{1, 2, 3}}, {1, "http://b", []int64{3, 4}}}, true, 0)
	if v.duplicates != 1 || v.distinct != 4 || len(v.failures) != 2 || !strings.HasPrefix(v.failures[0], "duplicate value 3: ") {
		t.Errorf("duplicate: %+v", v)
	}
}

// BenchmarkVerifyObjectIDs measures the end-of-run check per ObjectId received.
func BenchmarkVerifyObjectIDs(b *testing.B) {
	const clients, perClient = 16, 1 << 16
	streams := make([]stream[objectid.ID], clients)
	for i := range streams {
		streams[i].values = make([]objectid.ID, perClient)
	}
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		for i, s := range streams { // interleaved, as clients of one process receive them
			for j := range s.values {
				s.values[j] = oid(uint32(j*clients + i))
			}
		}
		b.StartTimer()
		if v := verifyObjectIDs(streams); len(v.failures) != 0 {
			b.Fatal(v.failures)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*clients*perClient), "ns/id")
}
