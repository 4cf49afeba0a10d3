package uuidv7

import (
	"bytes"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func checkV7(t *testing.T, u UUID) {
	if !u.IsV7() {
		t.Fatalf("not v7/variant 10: %s", u)
	}
}

// Many goroutines mixing New and Fill on the process generator: per-goroutine
// strict order, global uniqueness, v7 always, Fill runs consecutive.
func TestAttackMixedNewFillUnique(t *testing.T) {
	const workers = 16
	per := 200000
	if testing.Short() || RaceEnabled { // the race detector makes each contended add cost ~1.5 µs
		per = 20000
	}
	out := make([][]UUID, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			ids := make([]UUID, 0, per+70000)
			sizes := []int{1, 3, 70000, 17, 0, 1000}
			i := 0
			for len(ids) < per {
				if w%2 == 0 && i%5 != 0 {
					ids = append(ids, New())
				} else {
					n := sizes[i%len(sizes)]
					dst := make([]UUID, n)
					Fill(dst)
					for j := 1; j < n; j++ {
						if dst[j].Counter() != dst[j-1].Counter()+1 && !(dst[j-1].Counter() == 0xffff && dst[j].Counter() == 0 && dst[j].UnixMilli() == dst[j-1].UnixMilli()+1) {
							t.Errorf("Fill not consecutive at %d: %s %s", j, dst[j-1], dst[j])
							return
						}
					}
					ids = append(ids, dst...)
				}
				i++
			}
			out[w] = ids
		})
	}
	wg.Wait()
	var all []UUID
	for w, ids := range out {
		for i, u := range ids {
			checkV7(t, u)
			if i > 0 && bytes.Compare(ids[i-1][:], u[:]) >= 0 {
				t.Fatalf("worker %d: id %d not increasing: %s then %s", w, i, ids[i-1], u)
			}
			if s, err := Parse(u.String()); err != nil || s != u {
				t.Fatalf("round trip %s: %s %v", u, s, err)
			}
		}
		all = append(all, ids...)
	}
	slices.SortFunc(all, Compare)
	for i := 1; i < len(all); i++ {
		if all[i] == all[i-1] {
			t.Fatalf("duplicate %s", all[i])
		}
	}
}

// A clock jumping back and forth by large amounts, concurrently.
func TestAttackClockSteps(t *testing.T) {
	var ms atomic.Int64
	ms.Store(1_700_000_000_000)
	g := NewGenerator(WithClock(func() time.Time { return time.UnixMilli(ms.Load()) }))
	stop := make(chan struct{})
	var stepper sync.WaitGroup
	stepper.Go(func() {
		steps := []int64{+1, -100000, +1e9, -5e8, +3, -1, 0, +86400000, -86400000 * 3}
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			ms.Add(steps[i%len(steps)])
			if ms.Load() < 0 {
				ms.Store(5)
			}
			time.Sleep(time.Microsecond)
		}
	})
	const workers = 8
	out := make([][]UUID, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			var ids []UUID
			for i := 0; len(ids) < 100000; i++ {
				if i%3 == 0 {
					dst := make([]UUID, i%200+1)
					g.Fill(dst)
					ids = append(ids, dst...)
				} else {
					ids = append(ids, g.New())
				}
			}
			out[w] = ids
		})
	}
	wg.Wait()
	close(stop)
	stepper.Wait()
	var all []UUID
	for w, ids := range out {
		for i, u := range ids {
			checkV7(t, u)
			if i > 0 && Compare(ids[i-1], u) >= 0 {
				t.Fatalf("worker %d id %d: %s then %s", w, i, ids[i-1], u)
			}
		}
		all = append(all, ids...)
	}
	slices.SortFunc(all, Compare)
	for i := 1; i < len(all); i++ {
		if all[i] == all[i-1] {
			t.Fatalf("duplicate %s", all[i])
		}
	}
}

// Counter overflow borrows from the timestamp, and ids stay within Min/Max of
// their own millisecond; a frozen clock makes many ms of borrowing.
func TestAttackOverflowBorrowAndBounds(t *testing.T) {
	const base = 1_700_000_000_000
	g := NewGenerator(WithClock(func() time.Time { return time.UnixMilli(base) }))
	prev := g.New()
	n := 300000
	if RaceEnabled {
		n = 30000
	}
	for i := range n {
		var u UUID
		if i%7 == 0 {
			d := make([]UUID, 5000)
			g.Fill(d)
			for j := 1; j < len(d); j++ {
				if Compare(d[j-1], d[j]) >= 0 {
					t.Fatalf("fill order")
				}
			}
			u = d[0]
			if Compare(prev, u) >= 0 {
				t.Fatalf("%s then %s", prev, u)
			}
			u = d[len(d)-1]
		} else {
			u = g.New()
		}
		checkV7(t, u)
		if Compare(prev, u) >= 0 {
			t.Fatalf("%s then %s", prev, u)
		}
		tm := u.Time()
		if Compare(Min(tm), u) > 0 || Compare(Max(tm), u) < 0 {
			t.Fatalf("%s outside [%s,%s]", u, Min(tm), Max(tm))
		}
		if u.UnixMilli() < base {
			t.Fatalf("went back")
		}
		prev = u
	}
	// Near the limit: a reading past the limit panics and changes nothing.
	var now atomic.Int64
	now.Store(lastMillis)
	g2 := NewGenerator(WithClock(func() time.Time { return time.UnixMilli(now.Load()) }))
	u := g2.New()
	if u.UnixMilli() != lastMillis {
		t.Fatalf("got %d", u.UnixMilli())
	}
	now.Store(lastMillis + 1000)
	func() {
		defer func() { recover() }()
		g2.New()
		t.Fatalf("no panic past limit")
	}()
	now.Store(lastMillis)
	if v := g2.New(); Compare(v, u) <= 0 {
		t.Fatalf("after panic: %s <= %s", v, u)
	}
}
