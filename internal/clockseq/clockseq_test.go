package clockseq_test

import (
	"sync"
	"testing"
	"time"

	"github.com/seqd/seqd/internal/clockseq"
)

// fakeClock is a clock the test sets by hand, between calls.
type fakeClock struct{ ms int64 }

func (c *fakeClock) now() time.Time { return time.UnixMilli(c.ms) }

func newSeq(c *fakeClock, bits uint) *clockseq.Seq {
	var s clockseq.Seq
	s.Init(clockseq.Config{Unit: clockseq.Millisecond, CounterBits: bits, Last: 1<<41 - 1, Now: c.now})
	return &s
}

// TestNextBorrowsAndSurvivesStepBack walks a Seq with a 2-bit counter past
// its counter's end and across the clock stepping back: every value is the
// one after the last, borrowing into the next millisecond.
func TestNextBorrowsAndSurvivesStepBack(t *testing.T) {
	clock := &fakeClock{ms: 1000}
	s := newSeq(clock, 2)
	prev, _ := s.Next(1)
	if prev != 1000<<2 {
		t.Fatalf("first = %#x, want millisecond 1000, counter 0", prev)
	}
	for i := range 20 {
		if i == 10 {
			clock.ms = 10 // steps back
		}
		v, ok := s.Next(1)
		if !ok || v != prev+1 {
			t.Fatalf("value %d = %#x (ok %v), want %#x", i, v, ok, prev+1)
		}
		prev = v
	}
	if prev>>2 != 1005 {
		t.Errorf("after 21 values of a 4-value millisecond: millisecond %d, want 1005", prev>>2)
	}
	clock.ms = 2000
	if v, _ := s.Next(1); v != 2000<<2 {
		t.Errorf("clock past the state: %#x, want millisecond 2000, counter 0", v)
	}
}

// TestNextRefusesPastLast checks a reading past Last changes nothing, and
// borrowing past Last is refused.
func TestNextRefusesPastLast(t *testing.T) {
	clock := &fakeClock{ms: 1<<41 - 1}
	s := newSeq(clock, 2)
	v, ok := s.Next(4)
	if !ok || v != (1<<41-1)<<2 {
		t.Fatalf("last millisecond, 4 values: %#x, %v", v, ok)
	}
	if _, ok := s.Next(1); ok {
		t.Error("borrowing past Last was not refused")
	}
	clock.ms = 1 << 42
	before := s.Load()
	if _, ok := s.Next(1); ok || s.Load() != before {
		t.Errorf("reading past Last: ok %v, state %#x, want refused and %#x", ok, s.Load(), before)
	}
}

// TestAtLeast checks AtLeast only moves the state forward.
func TestAtLeast(t *testing.T) {
	clock := &fakeClock{ms: 1000}
	s := newSeq(clock, 12)
	s.AtLeast(5000 << 12)
	if v, _ := s.Next(1); v != 5000<<12+1 {
		t.Errorf("after AtLeast(5000 ms): %#x, want millisecond 5000, counter 1", v)
	}
	s.AtLeast(10)
	if v, _ := s.Next(1); v != 5000<<12+2 {
		t.Errorf("AtLeast of a smaller state moved it back: %#x", v)
	}
}

// TestConcurrentUnique takes values from several goroutines on the real
// clock: none repeats, and each goroutine's increase.
func TestConcurrentUnique(t *testing.T) {
	var s clockseq.Seq
	s.Init(clockseq.Config{Unit: clockseq.Millisecond, CounterBits: 4, Last: 1<<41 - 1})
	const workers, per = 4, 20000
	out := make([][]uint64, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			vs := make([]uint64, per)
			for i := range vs {
				vs[i], _ = s.Next(1)
				if i > 0 && vs[i] <= vs[i-1] {
					t.Errorf("goroutine %d: %#x after %#x", w, vs[i], vs[i-1])
					return
				}
			}
			out[w] = vs
		})
	}
	wg.Wait()
	seen := make(map[uint64]bool, workers*per)
	for _, vs := range out {
		for _, v := range vs {
			if seen[v] {
				t.Fatalf("%#x handed out twice", v)
			}
			seen[v] = true
		}
	}
}
