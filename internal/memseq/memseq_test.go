package memseq_test

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/seqd/seqd"
	"github.com/seqd/seqd/counters"
	"github.com/seqd/seqd/internal/memseq"
)

// TestContract checks the counters.Sequencer contract the package comment promises.
func TestContract(t *testing.T) {
	ctx := context.Background()
	s := memseq.New(counters.StrategyCounter)
	if v, err := next(ctx, s, "a"); v != 1 || err != nil {
		t.Errorf("Next of a new name = %d, %v; want 1", v, err)
	}
	if r, err := s.NextN(ctx, "a", 3); r != (counters.Range{First: 2, Last: 4}) || err != nil {
		t.Errorf("NextN(3) = %+v, %v; want 2..4", r, err)
	}
	if got, err := s.Current(ctx, "a"); got.Value != 4 || got.Mode != seqd.ModeStrict || err != nil {
		t.Errorf("Current = %+v, %v; want 4, strict", got, err)
	}
	for _, tc := range []struct {
		what string
		err  error
		want error
	}{
		{"Current of a name never used", func() error { _, err := s.Current(ctx, "b"); return err }(), counters.ErrNotFound},
		{"NextN(0)", func() error { _, err := s.NextN(ctx, "a", 0); return err }(), counters.ErrInvalidCount},
		{"Next of an invalid name", func() error { _, err := next(ctx, s, "-x"); return err }(), counters.ErrInvalidName},
		{"Set backwards", s.Set(ctx, "a", 2, false), counters.ErrBackwards},
		{"Set negative", s.Set(ctx, "a", -1, true), counters.ErrInvalidValue},
		{"NextN(2) on optimistic", func() error {
			_, err := memseq.New(counters.StrategyOptimistic).NextN(ctx, "a", 2)
			return err
		}(), counters.ErrInvalidCount},
	} {
		if !errors.Is(tc.err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.what, tc.err, tc.want)
		}
	}
	if err := s.Set(ctx, "a", 2, true); err != nil {
		t.Errorf("forced Set backwards: %v", err)
	}
	if v, _ := s.Value("a"); v != 2 {
		t.Errorf("after Set(2), value %d", v)
	}
	s.Store("z", math.MaxInt64-1)
	if _, err := s.NextN(ctx, "z", 2); !errors.Is(err, counters.ErrExhausted) {
		t.Errorf("NextN past MaxInt64: %v, want ErrExhausted", err)
	}
	if v, err := next(ctx, s, "z"); v != math.MaxInt64 || err != nil {
		t.Errorf("the last value = %d, %v", v, err)
	}
	s.Store("m", 7)
	list, err := s.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []counters.Sequence{{Name: "a", Value: 2, Mode: seqd.ModeStrict}, {Name: "m", Value: 7, Mode: seqd.ModeStrict}, {Name: "z", Value: math.MaxInt64, Mode: seqd.ModeStrict}}
	if !slices.Equal(list, want) {
		t.Errorf("List = %+v, want %+v", list, want)
	}
}

// TestFailures checks the injected failures and that a done context is
// ErrUnavailable.
func TestFailures(t *testing.T) {
	s := memseq.New(counters.StrategyCounter)
	boom := errors.New("boom")
	s.FailWith(boom)
	if _, err := next(context.Background(), s, "a"); err != boom {
		t.Errorf("FailWith: %v, want boom", err)
	}
	s.FailFunc(nil)
	if _, err := next(context.Background(), s, "a"); err != nil {
		t.Errorf("FailFunc(nil): %v", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := next(ctx, s, "a"); !errors.Is(err, counters.ErrUnavailable) || !errors.Is(err, context.Canceled) {
		t.Errorf("done context: %v, want ErrUnavailable and context.Canceled", err)
	}

	s.BlockUntilDone()
	ctx, cancel = context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	if _, err := s.Current(ctx, "a"); err != context.DeadlineExceeded {
		t.Errorf("BlockUntilDone: %v, want context.DeadlineExceeded bare", err)
	}
}

// TestCalls checks what Calls records, and that it stops at MaxCalls.
func TestCalls(t *testing.T) {
	s := memseq.New(counters.StrategyCounter)
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	next(ctx, s, "a")
	s.Set(context.Background(), "a", 5, true)
	want := []memseq.Call{
		{Op: "nextN", Name: "a", N: 1, Deadline: true},
		{Op: "set", Name: "a", Value: 5, Force: true},
	}
	if got := s.Calls(); !slices.Equal(got, want) {
		t.Errorf("Calls = %+v, want %+v", got, want)
	}
	for range memseq.MaxCalls {
		s.Current(ctx, "a")
	}
	if n := len(s.Calls()); n != memseq.MaxCalls {
		t.Errorf("%d calls recorded, want %d", n, memseq.MaxCalls)
	}
	if v, err := next(ctx, s, "a"); v != 6 || err != nil {
		t.Errorf("past MaxCalls, Next = %d, %v: calls are served still", v, err)
	}
}

// next takes one value, as the handler does.
func next(ctx context.Context, s *memseq.Sequencer, name string) (int64, error) {
	r, err := s.NextN(ctx, name, 1)
	return r.First, err
}
