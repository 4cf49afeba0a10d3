package history

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// simulate returns the history of clients that each make perClient allocations, one at a
// time, from an atomic counter: each op takes effect at one instant inside its interval
// and gets the next 1 to 3 values there. Idle times between a client's ops are sometimes
// long enough that no op is in flight, so some ops are ordered in real time and others
// overlap. The ops come back shuffled.
func simulate(r *rand.Rand, clients, perClient int) []Op {
	type sim struct {
		op Op
		at time.Duration // when the counter served it
		n  int64
	}
	all := make([]sim, 0, clients*perClient)
	for c := range clients {
		name := fmt.Sprintf("client %d", c)
		now := time.Duration(r.Int64N(1000))
		for range perClient {
			start := now + time.Duration(r.Int64N(300))
			at := start + time.Duration(r.Int64N(100))
			end := at + time.Duration(r.Int64N(100))
			all = append(all, sim{Op{Client: name, Start: t0.Add(start), End: t0.Add(end)}, at, 1 + r.Int64N(3)})
			now = end
		}
	}
	slices.SortStableFunc(all, func(a, b sim) int { return cmp.Compare(a.at, b.at) })
	ops := make([]Op, len(all))
	next := int64(1)
	for i, s := range all {
		s.op.First, s.op.Last = next, next+s.n-1
		next += s.n
		ops[i] = s.op
	}
	r.Shuffle(len(ops), func(i, j int) { ops[i], ops[j] = ops[j], ops[i] })
	return ops
}

// byValue returns the indexes of ops in order of First.
func byValue(ops []Op) []int {
	idx := make([]int, len(ops))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(ops[a].First, ops[b].First) })
	return idx
}

// reorder gives b the values of a, and a those of b, keeping their union: a and b hold
// adjacent ranges, a's below b's.
func reorder(a, b *Op) {
	nb := b.Last - b.First + 1
	last := b.Last
	b.First, b.Last = a.First, a.First+nb-1
	a.First, a.Last = b.Last+1, last
}

func TestCheckSimulated(t *testing.T) {
	for seed := range uint64(30) {
		r := rand.New(rand.NewPCG(seed, 42))
		ops := simulate(r, 2+r.IntN(15), 3+r.IntN(200))
		n := len(ops)
		total := int64(0)
		for _, o := range ops {
			total += o.Last - o.First + 1
		}
		order := byValue(ops)
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) {
			res := Check(ops, Options{Contiguous: true})
			if want := (Result{Ops: n, Values: total, Min: 1, Max: total, contiguous: true}); !res.equal(want) {
				t.Fatalf("linearizable history: %v, examples %q; want %v", res, res.Examples, want)
			}

			// A repeated answer: a second client gets exactly what another got, as long as it.
			dup := ops[order[r.IntN(n)]]
			dup.Client = "intruder"
			res = Check(append(slices.Clone(ops), dup), Options{Contiguous: true})
			if want := (Result{Ops: n + 1, Values: total + dup.Last - dup.First + 1, Min: 1, Max: total,
				Duplicates: dup.Last - dup.First + 1, contiguous: true}); !res.equal(want) || !strings.Contains(res.Examples[0], "intruder got") {
				t.Errorf("with a duplicate: %v, examples %q; want %v", res, res.Examples, want)
			}

			// Two ops adjacent in value order swap their values. If the first completed
			// before the second was invoked, that is one order violation and nothing else;
			// if they overlapped, the history is still linearizable.
			var ordered, overlapping []int // positions k in order: ops order[k] and order[k+1]
			for k := range n - 1 {
				if ops[order[k]].End.Before(ops[order[k+1]].Start) {
					ordered = append(ordered, k)
				} else {
					overlapping = append(overlapping, k)
				}
			}
			if len(ordered) == 0 || len(overlapping) == 0 {
				t.Fatalf("%d ordered and %d overlapping adjacent pairs: the simulation should give both", len(ordered), len(overlapping))
			}
			k := ordered[r.IntN(len(ordered))]
			swapped := slices.Clone(ops)
			a, b := &swapped[order[k]], &swapped[order[k+1]]
			reorder(a, b)
			res = Check(swapped, Options{Contiguous: true})
			prefix := fmt.Sprintf("order: %s got %s (", b.Client, values(b.First, b.Last))
			if want := (Result{Ops: n, Values: total, Min: 1, Max: total, OrderViolations: 1, contiguous: true}); !res.equal(want) ||
				len(res.Examples) != 1 || !strings.HasPrefix(res.Examples[0], prefix) {
				t.Errorf("reordered: %v, examples %q; want %v, %s…", res, res.Examples, want, prefix)
			}
			k = overlapping[r.IntN(len(overlapping))]
			swapped = slices.Clone(ops)
			reorder(&swapped[order[k]], &swapped[order[k+1]])
			if res = Check(swapped, Options{Contiguous: true}); res.Err() != nil {
				t.Errorf("overlapping ops reordered: %v", res.Err())
			}

			// An op lost: its values are a gap, a failure only where none is expected.
			k = 1 + r.IntN(n-2)
			lost := ops[order[k]]
			gappy := slices.Delete(slices.Clone(ops), order[k], order[k]+1)
			res = Check(gappy, Options{})
			want := Result{Ops: n - 1, Values: total - (lost.Last - lost.First + 1), Min: 1, Max: total, Gaps: lost.Last - lost.First + 1}
			if !res.equal(want) || res.Err() != nil {
				t.Errorf("with a gap, not expected: %v, %v; want %v and no error", res, res.Err(), want)
			}
			res = Check(gappy, Options{Contiguous: true})
			gap := fmt.Sprintf("gap %s: ", values(lost.First, lost.Last))
			if want.contiguous = true; !res.equal(want) || res.Err() == nil || len(res.Examples) != 1 || !strings.HasPrefix(res.Examples[0], gap) {
				t.Errorf("with a gap, expected none: %v, examples %q; want %v, %s…", res, res.Examples, want, gap)
			}
		})
	}
}

// equal compares the counts of two results, not their examples.
func (r Result) equal(s Result) bool {
	return r.Ops == s.Ops && r.Values == s.Values && r.Min == s.Min && r.Max == s.Max &&
		r.Duplicates == s.Duplicates && r.Gaps == s.Gaps && r.OrderViolations == s.OrderViolations &&
		r.Invalid == s.Invalid && r.contiguous == s.contiguous
}

// BenchmarkCheck checks a linearizable history of a million ops from 64 clients.
func BenchmarkCheck(b *testing.B) {
	const clients, ops = 64, 1 << 20
	history := simulate(rand.New(rand.NewPCG(1, 2)), clients, ops/clients)
	b.ReportAllocs()
	for b.Loop() {
		if err := Check(history, Options{Contiguous: true}).Err(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*ops), "ns/historyop")
}

// TestCheckAgainstDefinition compares Check with the definitions, value by value and pair
// by pair, on small arbitrary histories: overlapping ranges, equal times, anything.
func TestCheckAgainstDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for range 2000 {
		ops := make([]Op, 1+r.IntN(12))
		for i := range ops {
			start := r.Int64N(20)
			first := r.Int64N(30) - 5
			ops[i] = op(fmt.Sprint(i), start, start+r.Int64N(8), first, first+r.Int64N(4))
		}

		want := Result{Ops: len(ops), Min: ops[0].First, Max: ops[0].Last, contiguous: true}
		received := map[int64]int64{}
		for _, o := range ops {
			want.Min, want.Max = min(want.Min, o.First), max(want.Max, o.Last)
			for v := o.First; v <= o.Last; v++ {
				received[v]++
				want.Values++
			}
		}
		for v := want.Min; v <= want.Max; v++ {
			if n := received[v]; n == 0 {
				want.Gaps++
			} else {
				want.Duplicates += n - 1
			}
		}
		for _, b := range ops {
			for _, a := range ops {
				if a.End.Before(b.Start) && a.Last >= b.First {
					want.OrderViolations++
					break
				}
			}
		}

		if got := Check(ops, Options{Contiguous: true}); !got.equal(want) {
			t.Fatalf("Check(%v) = %v, want %v", ops, got, want)
		}
	}
}

// TestCheckAboveAgainstDefinition compares CheckAbove with its definition, pair by pair,
// on small arbitrary sets, and with Check's order violations when a history binds itself.
func TestCheckAboveAgainstDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	arbitrary := func(client string, n int) []Op {
		ops := make([]Op, n)
		for i := range ops {
			start, first := r.Int64N(20), r.Int64N(30)-5
			ops[i] = op(fmt.Sprint(client, i), start, start+r.Int64N(8), first, first+r.Int64N(4))
		}
		return ops
	}
	for range 2000 {
		binding, later := arbitrary("a", r.IntN(8)), arbitrary("b", r.IntN(8))
		var want []string // the clients of later bound by an op of binding
		for _, o := range later {
			for _, b := range binding {
				if b.End.Before(o.Start) && b.Last >= o.First {
					want = append(want, o.Client)
					break
				}
			}
		}
		got := CheckAbove(binding, later)
		clients := make([]string, len(got))
		for i, g := range got {
			clients[i], _, _ = strings.Cut(g, " ")
		}
		if !slices.Equal(clients, want) {
			t.Fatalf("CheckAbove(%v, %v) = %q, want the ops of %v", binding, later, got, want)
		}
		if n := Check(later, Options{}).OrderViolations; len(CheckAbove(later, later)) != int(n) {
			t.Fatalf("CheckAbove(%v, itself) = %q, Check counts %d order violations", later, CheckAbove(later, later), n)
		}
	}
}
