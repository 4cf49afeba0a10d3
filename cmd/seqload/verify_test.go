package main

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

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
		if count, first := orderViolations(tt.values, cmp.Compare[int64]); count != tt.count || first != tt.first {
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
		mergeSorted(runs, cmp.Compare[int64], func(v int64, run int) {
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
	u := uniqueness[int64]{cmp: cmp.Compare[int64]}
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
	got := strings.Join(u.failures("value", streams, func(x int64) string { return strconv.FormatInt(x, 10) }), "\n")
	want := "duplicate value 2: received 2 times, by client 0 (http://a), client 1 (http://b)\n" +
		"duplicate value 4: received 3 times, by client 0 (http://a), client 1 (http://b), client 2 (http://a)\n" +
		"duplicates: 3 values received more than once (2 listed)"
	if got != want {
		t.Errorf("failures:\n%s\nwant:\n%s", got, want)
	}
}

func TestUniquenessListsAtMostMaxListed(t *testing.T) {
	u := uniqueness[int64]{cmp: cmp.Compare[int64]}
	for v := range int64(3 * maxListed) {
		u.add(v, 0)
		u.add(v, 1)
	}
	if len(u.dups) != maxListed || u.extra != 3*maxListed {
		t.Errorf("%d listed, %d extra; want %d, %d", len(u.dups), u.extra, maxListed, 3*maxListed)
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

// seqs builds one client's stream of sequence requests; each op is {start, end, first,
// last}, times in microseconds since the load began.
func seqs(client int, addr string, ops ...[4]int64) stream[seqOp] {
	s := stream[seqOp]{client: client, addr: addr}
	for _, o := range ops {
		s.values = append(s.values, seqOp{time.Duration(o[0]) * time.Microsecond, time.Duration(o[1]) * time.Microsecond, o[2], o[3]})
	}
	return s
}

// strictly binds every request to every request answered before it was sent.
var strictly = judgement{global: true}

func TestVerifySequence(t *testing.T) {
	began := time.Now()
	// Client 1 got 2..3 before client 0 got 1, but their requests overlapped: fine.
	contiguous := []stream[seqOp]{
		seqs(0, "http://a", [4]int64{0, 10, 1, 1}, [4]int64{20, 30, 4, 5}),
		{client: 2, addr: "http://b"}, // no successful request
		seqs(1, "http://b", [4]int64{5, 15, 2, 3}, [4]int64{31, 40, 6, 6}),
	}
	gappy := []stream[seqOp]{
		seqs(0, "http://a", [4]int64{0, 10, 1, 1}, [4]int64{20, 30, 4, 4}),
		seqs(1, "http://b", [4]int64{5, 15, 2, 2}, [4]int64{31, 40, 7, 7}),
	}
	if v := verifySequence(began, contiguous, true, 0, strictly); len(v.failures) != 0 || v.values != 6 || v.distinct != 6 ||
		v.sequence.Min != 1 || v.sequence.Max != 6 || v.sequence.Gaps != 0 {
		t.Errorf("contiguous: %+v, %v", v, v.sequence)
	}
	if v := verifySequence(began, gappy, false, 0, strictly); len(v.failures) != 0 || v.sequence.Gaps != 3 {
		t.Errorf("gaps not expected: %+v, %v", v, v.sequence)
	}
	v := verifySequence(began, gappy, true, 2, strictly)
	want := []string{
		"gap 3: nobody got it, between client 1 (http://b)'s 2 and client 0 (http://a)'s 4",
		"gap 5..6: nobody got it, between client 0 (http://a)'s 4 and client 1 (http://b)'s 7",
		"contiguity: 3 values missing between 1 and 7; 2 requests failed, and a failed request may have reserved values all the same",
	}
	if !slices.Equal(v.failures, want) {
		t.Errorf("gaps expected:\n%s\nwant:\n%s", strings.Join(v.failures, "\n"), strings.Join(want, "\n"))
	}

	v = verifySequence(began, []stream[seqOp]{
		seqs(0, "http://a", [4]int64{0, 10, 1, 3}),
		seqs(1, "http://b", [4]int64{5, 15, 3, 4}),
	}, true, 0, strictly)
	want = []string{
		"duplicate 3: client 0 (http://a) got 1..3, client 1 (http://b) got 3..4",
		"duplicates: 1 values received more than once",
	}
	if v.duplicates != 1 || v.distinct != 4 || v.orderViolations != 0 || !slices.Equal(v.failures, want) {
		t.Errorf("duplicate: %+v", v)
	}

	// Across addresses: client 1 sent its request after client 0 had its answer.
	v = verifySequence(began, []stream[seqOp]{
		seqs(0, "http://a", [4]int64{0, 10, 2, 2}),
		seqs(1, "http://b", [4]int64{11, 15, 1, 1}),
	}, true, 0, strictly)
	want = []string{
		"order: client 1 (http://b) got 1 (invoked +11µs, completed +15µs) after client 0 (http://a) got 2 (completed +10µs)",
		"order: 1 requests received a value not above one received by a request answered before they were sent",
	}
	if v.duplicates != 0 || v.orderViolations != 1 || !slices.Equal(v.failures, want) {
		t.Errorf("order: %+v", v)
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

// BenchmarkVerifySequence measures the end-of-run check per sequence request
// received, by the promise it checks: strict (one history), cached (one per
// address, two addresses) and switched (strict in the second half of the run:
// every request as a history.Op, and history.CheckAbove).
//
//	go test -run '^$' -bench VerifySequence -benchmem -count 5 ./cmd/seqload/
func BenchmarkVerifySequence(b *testing.B) {
	const clients, perClient = 16, 1 << 16
	streams := make([]stream[seqOp], clients)
	for i := range streams {
		streams[i].addr = []string{"http://a", "http://b"}[i%2]
		streams[i].values = make([]seqOp, perClient)
		for j := range streams[i].values { // interleaved, as clients of one counter receive them
			n := int64(j*clients + i)
			streams[i].values[j] = seqOp{time.Duration(n) * time.Microsecond, time.Duration(n+3) * time.Microsecond, n + 1, n + 1}
		}
	}
	half := time.Duration(clients*perClient/2) * time.Microsecond
	for _, tc := range []struct {
		name string
		j    judgement
	}{
		{"strict", strictly},
		{"cached", judgement{}},
		{"switched", judgement{windows: []window{{half, 2 * half}}}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			began := time.Now()
			b.ReportAllocs()
			for b.Loop() {
				if v := verifySequence(began, streams, true, 0, tc.j); len(v.failures) != 0 {
					b.Fatal(v.failures)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*clients*perClient), "ns/request")
		})
	}
}
