package memseq_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seqd/seqd"
	"github.com/seqd/seqd/blocks"
	"github.com/seqd/seqd/counters"
	"github.com/seqd/seqd/internal/memseq"
	"github.com/seqd/seqd/internal/pages"
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
	page, err := s.List(ctx, counters.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	list := page.Sequences
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
	s.SetMode(ctx, "a", seqd.ModeCached, 2, 3)
	want := []memseq.Call{
		{Op: "nextN", Name: "a", N: 1, Deadline: true},
		{Op: "set", Name: "a", Value: 5, Force: true},
		{Op: "setMode", Name: "a", Mode: seqd.ModeCached, MinBlock: 2, MaxBlock: 3, Deadline: true},
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

// TestSetMode checks that SetMode validates as the Counter's does, stores the mode
// and bounds for Current and List, creates a new name at 0, and leaves the value.
func TestSetMode(t *testing.T) {
	ctx := context.Background()
	s := memseq.New(counters.StrategyCounter)
	s.Store("a", 7)
	if err := s.SetMode(ctx, "a", seqd.ModeCached, 10, 500); err != nil {
		t.Fatalf("SetMode(cached, 10, 500): %v", err)
	}
	want := seqd.Sequence{Name: "a", Value: 7, Mode: seqd.ModeCached, MinBlock: 10, MaxBlock: 500}
	if got, err := s.Current(ctx, "a"); got != want || err != nil {
		t.Errorf("Current = %+v, %v; want %+v", got, err, want)
	}
	if err := s.SetMode(ctx, "new", seqd.ModeCached, 0, 0); err != nil {
		t.Fatalf("SetMode of a new name: %v", err)
	}
	if got, err := s.Current(ctx, "new"); got != (seqd.Sequence{Name: "new", Mode: seqd.ModeCached}) || err != nil {
		t.Errorf("a new name after SetMode: %+v, %v; want it at 0, cached, default bounds", got, err)
	}
	if err := s.SetMode(ctx, "a", seqd.ModeStrict, 1, seqd.MaxCount); err != nil {
		t.Fatalf("SetMode(strict, 1, MaxBlock): %v", err)
	}
	// Values go on from where they were, whatever the mode.
	if v, err := next(ctx, s, "a"); v != 8 || err != nil {
		t.Errorf("Next after SetMode = %d, %v; want 8", v, err)
	}
	page, err := s.List(ctx, counters.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	list := page.Sequences
	wantList := []seqd.Sequence{
		{Name: "a", Value: 8, Mode: seqd.ModeStrict, MinBlock: 1, MaxBlock: seqd.MaxCount},
		{Name: "new", Mode: seqd.ModeCached},
	}
	if !slices.Equal(list, wantList) {
		t.Errorf("List = %+v, want %+v", list, wantList)
	}

	for _, bad := range []struct {
		mode     seqd.Mode
		min, max int64
	}{
		{"", 0, 0}, {"Cached", 0, 0}, {"optimistic", 0, 0},
		{seqd.ModeCached, 0, 10}, {seqd.ModeCached, 10, 0}, {seqd.ModeCached, 11, 10},
		{seqd.ModeCached, -1, 10}, {seqd.ModeCached, 1, seqd.MaxCount + 1}, {seqd.ModeStrict, -5, -1},
	} {
		if err := s.SetMode(ctx, "a", bad.mode, bad.min, bad.max); !errors.Is(err, counters.ErrInvalidMode) {
			t.Errorf("SetMode(%q, %d, %d) = %v, want ErrInvalidMode", bad.mode, bad.min, bad.max, err)
		}
	}
	if err := s.SetMode(ctx, "-x", seqd.ModeCached, 0, 0); !errors.Is(err, counters.ErrInvalidName) {
		t.Errorf("SetMode of an invalid name = %v, want ErrInvalidName", err)
	}
	if _, ok := s.Value("-x"); ok {
		t.Error("a refused SetMode created the sequence")
	}
	if got, _ := s.Current(ctx, "a"); got.Mode != seqd.ModeStrict || got.MinBlock != 1 || got.MaxBlock != seqd.MaxCount {
		t.Errorf("refused SetModes changed the sequence: %+v", got)
	}

	o := memseq.New(counters.StrategyOptimistic)
	for _, mode := range []seqd.Mode{seqd.ModeStrict, seqd.ModeCached} {
		if err := o.SetMode(ctx, "a", mode, 0, 0); !errors.Is(err, counters.ErrInvalidMode) {
			t.Errorf("optimistic SetMode(%s) = %v, want ErrInvalidMode: the strategy has no modes", mode, err)
		}
	}
	if _, ok := o.Value("a"); ok {
		t.Error("a refused optimistic SetMode created the sequence")
	}
}

// TestStoreSequence checks that a sequence stored whole comes back from Current
// and List with its counts, its mode defaulting to strict.
func TestStoreSequence(t *testing.T) {
	ctx := context.Background()
	s := memseq.New(counters.StrategyCounter)
	counts := seqd.BlockCounts{Reserved: 3000, Served: 2500, Returned: 200}
	s.StoreSequence(seqd.Sequence{Name: "c", Value: 3000, Mode: seqd.ModeCached, Blocks: counts, Err: errors.New("dropped")})
	s.StoreSequence(seqd.Sequence{Name: "s", Value: 4})
	want := []seqd.Sequence{
		{Name: "c", Value: 3000, Mode: seqd.ModeCached, Blocks: counts},
		{Name: "s", Value: 4, Mode: seqd.ModeStrict},
	}
	if got, err := s.Current(ctx, "c"); got != want[0] || err != nil {
		t.Errorf("Current = %+v, %v; want %+v", got, err, want[0])
	}
	if page, err := s.List(ctx, counters.ListOptions{}); !slices.Equal(page.Sequences, want) || page.Next != "" || err != nil {
		t.Errorf("List = %+v, %v; want %+v", page, err, want)
	}
	// Store changes the value only.
	s.Store("c", 4000)
	if got, _ := s.Current(ctx, "c"); got.Value != 4000 || got.Mode != seqd.ModeCached || got.Blocks != counts {
		t.Errorf("after Store: %+v", got)
	}
}

// TestBlockStatus checks that BlockStatus reports what SetBlockStatus gave, and
// that it is not a call: neither recorded nor failed.
func TestBlockStatus(t *testing.T) {
	s := memseq.New(counters.StrategyCounter)
	if st, ok := s.BlockStatus("a"); ok || st != (blocks.Status{}) {
		t.Errorf("BlockStatus before SetBlockStatus = %+v, %v; want none", st, ok)
	}
	want := blocks.Status{
		Current: blocks.Block{First: 101, Last: 200, Remaining: 40}, BlockSize: 200, Rate: 12.5,
		LastFetch: 3 * time.Millisecond, LastError: "boom", Served: 60, Skipped: 2,
	}
	s.SetBlockStatus("a", want)
	s.FailWith(errors.New("down"))
	if st, ok := s.BlockStatus("a"); !ok || st != want {
		t.Errorf("BlockStatus = %+v, %v; want %+v", st, ok, want)
	}
	if calls := s.Calls(); len(calls) != 0 {
		t.Errorf("BlockStatus was recorded: %+v", calls)
	}
}

// next takes one value, as the handler does.
func next(ctx context.Context, s *memseq.Sequencer, name string) (int64, error) {
	r, err := s.NextN(ctx, name, 1)
	return r.First, err
}

// TestListPages checks List's paging: every limit and prefix walks the stored
// names in order, each once, a record StoreInvalid stored among them with its
// error; and options Check refuses are refused.
func TestListPages(t *testing.T) {
	ctx := context.Background()
	s := memseq.New(counters.StrategyCounter)
	names := []string{"a", "a-1", "a.b", "a0", "a9", "aZ", "a_", "az", "azz", "b", "z", "z-", "zz", "zzz"}
	bad := fmt.Errorf("memseq: %w: seq is a string", counters.ErrInvalidCounter)
	for i, name := range names {
		if name == "a_" {
			s.StoreInvalid(name, bad)
			continue
		}
		s.Store(name, int64(i))
	}
	for _, prefix := range []string{"", "a", "a_", "az", "z", "zz", "a9", "aZ", "b", "c", "azzz"} {
		var want []string
		for _, name := range names {
			if strings.HasPrefix(name, prefix) {
				want = append(want, name)
			}
		}
		for _, limit := range []int{0, 1, 2, 3, len(want), len(want) + 1} {
			got, _, err := pages.Walk(ctx, s, counters.ListOptions{Prefix: prefix, Limit: limit})
			if err != nil {
				t.Fatalf("prefix %q, limit %d: %v", prefix, limit, err)
			}
			var gotNames []string
			for _, seq := range got {
				gotNames = append(gotNames, seq.Name)
				if (seq.Name == "a_") != (seq.Err != nil) || seq.Err != nil && !errors.Is(seq.Err, counters.ErrInvalidCounter) {
					t.Errorf("prefix %q: %+v, want an error on a_ only", prefix, seq)
				}
			}
			if !slices.Equal(gotNames, want) {
				t.Errorf("prefix %q, limit %d: %q, want %q", prefix, limit, gotNames, want)
			}
		}
	}
	// An after below, inside and above a prefix's names.
	for _, tc := range []struct {
		prefix, after string
		want          []string
	}{
		{"az", "a", []string{"az", "azz"}},
		{"az", "az", []string{"azz"}},
		{"az", "azz", []string{}},
		{"", "z", []string{"z-", "zz", "zzz"}},
		{"", "zzz", []string{}},
	} {
		page, err := s.List(ctx, counters.ListOptions{Prefix: tc.prefix, After: tc.after})
		got := []string{}
		for _, seq := range page.Sequences {
			got = append(got, seq.Name)
		}
		if err != nil || !slices.Equal(got, tc.want) || page.Next != "" {
			t.Errorf("prefix %q after %q = %q, next %q, %v; want %q", tc.prefix, tc.after, got, page.Next, err, tc.want)
		}
	}
	if _, err := s.Current(ctx, "a_"); !errors.Is(err, counters.ErrInvalidCounter) {
		t.Errorf("Current of an invalid record = %v, want ErrInvalidCounter", err)
	}
	for _, opts := range []counters.ListOptions{{Limit: -1}, {Limit: counters.MaxListLimit + 1}, {Prefix: "_a"}, {Prefix: "a b"}, {After: "a\xff"}} {
		if _, err := s.List(ctx, opts); err == nil {
			t.Errorf("List(%+v) = nil error", opts)
		}
	}
}

// Once values of a period were handed out, SetNumbering refuses another
// period or time zone (or none) with ErrInvalidMode, as the Counter's does: a
// new one would number its period from 1 again. A new format alone is taken.
// Observed: every change taken, the next value 1 again.
func TestNumberingChangeRefused(t *testing.T) {
	ctx := context.Background()
	s := memseq.New(counters.StrategyCounter)
	s.SetClock(func() time.Time { return time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC) })
	year := counters.Numbering{Period: "year", Format: "INV-{yyyy}-{seq:6}"}
	if err := s.SetNumbering(ctx, "inv", year); err != nil {
		t.Fatal(err)
	}
	if got, err := s.NextNumbered(ctx, "inv", 1); err != nil || got.Formatted != "INV-2026-000001" {
		t.Fatalf("first value: %+v, %v", got, err)
	}
	for _, nb := range []counters.Numbering{
		{Period: "month", Format: year.Format},
		{Period: "year", TimeZone: "Europe/Berlin", Format: year.Format},
		{Period: "none"},
	} {
		if err := s.SetNumbering(ctx, "inv", nb); !errors.Is(err, counters.ErrInvalidMode) {
			t.Errorf("SetNumbering %+v after a value: %v, want ErrInvalidMode", nb, err)
		}
	}
	if err := s.SetNumbering(ctx, "inv", counters.Numbering{Period: "year", Format: "R-{yyyy}-{seq}"}); err != nil {
		t.Errorf("a new format alone: %v", err)
	}
	if got, err := s.NextNumbered(ctx, "inv", 1); err != nil || got.Formatted != "R-2026-2" {
		t.Errorf("after a new format: %+v, %v; want R-2026-2", got, err)
	}
}

// Callers of NextNumbered while the clock crosses minutes get each (period,
// value) once, labelled with the period their values were taken in.
// Observed: a data race on the period's start, read after the lock is left.
func TestNumberedAcrossMinutesConcurrently(t *testing.T) {
	ctx := context.Background()
	s := memseq.New(counters.StrategyCounter)
	t0 := time.Date(2026, 11, 26, 17, 0, 0, 0, time.UTC)
	var calls atomic.Int64
	s.SetClock(func() time.Time { return t0.Add(time.Duration(calls.Add(1)/20) * time.Minute) })
	if err := s.SetNumbering(ctx, "m", counters.Numbering{Period: "minute", Format: "{HH}{mm}-{seq}"}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[string]bool{}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				got, err := s.NextNumbered(ctx, "m", 2)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				for _, f := range []string{got.FormattedFirst, got.Formatted} {
					if seen[f] {
						t.Errorf("%s handed out twice (%+v)", f, got)
					}
					seen[f] = true
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
}

// NextN of a periodic sequence takes its values from the period the clock
// reads, as the Counter's NextN does: the first value of a new minute is 1.
// Observed: 3, the old minute's value continued.
func TestNextNStartsEachPeriod(t *testing.T) {
	ctx := context.Background()
	s := memseq.New(counters.StrategyCounter)
	now := time.Date(2026, 11, 26, 17, 4, 30, 0, time.UTC)
	s.SetClock(func() time.Time { return now })
	if err := s.SetNumbering(ctx, "m", counters.Numbering{Period: "minute"}); err != nil {
		t.Fatal(err)
	}
	if r, err := s.NextN(ctx, "m", 2); err != nil || r.Last != 2 {
		t.Fatalf("in 17:04: %v, %v; want 1 to 2", r, err)
	}
	now = now.Add(time.Minute)
	if r, err := s.NextN(ctx, "m", 1); err != nil || r.Last != 1 {
		t.Errorf("in 17:05: %v, %v; want 1", r, err)
	}
}

// A periodic sequence remembers its latest 32 finished periods, as the
// Counter's does (integration TestNumberingPastPeriodsBounded): PeriodValue
// of an older one is ErrNotFound. Observed: every finished period's value.
func TestPastPeriodsBounded(t *testing.T) {
	ctx := context.Background()
	s := memseq.New(counters.StrategyCounter)
	t0 := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	now := t0
	s.SetClock(func() time.Time { return now })
	if err := s.SetNumbering(ctx, "p", counters.Numbering{Period: "minute"}); err != nil {
		t.Fatal(err)
	}
	const minutes = 40
	for m := range minutes {
		now = t0.Add(time.Duration(m) * time.Minute)
		if _, err := s.NextN(ctx, "p", int64(m+1)); err != nil {
			t.Fatal(err)
		}
	}
	for m := range minutes {
		key := fmt.Sprintf("2026-11-26T00:%02d", m)
		v, err := s.PeriodValue(ctx, "p", key)
		switch {
		case m < minutes-1-32:
			if !errors.Is(err, counters.ErrNotFound) {
				t.Errorf("%s: %d, %v; want forgotten", key, v, err)
			}
		case err != nil || v != int64(m+1):
			t.Errorf("%s: %d, %v; want %d", key, v, err, m+1)
		}
	}
}

// SetMode refuses cached for a numbered sequence (a period or a format), as
// the Counter's does: PUT {"mode":"cached"} on one answers 400 invalid_mode
// from seqd. Observed: memseq took it, and the sequence was cached with its
// numbering.
func TestSetModeCachedRefusedWhenNumbered(t *testing.T) {
	ctx := context.Background()
	s := memseq.New(counters.StrategyCounter)
	for name, nb := range map[string]counters.Numbering{
		"period": {Period: "year"},
		"format": {Format: "F-{seq}"},
	} {
		if err := s.SetNumbering(ctx, name, nb); err != nil {
			t.Fatal(err)
		}
		if err := s.SetMode(ctx, name, seqd.ModeCached, 0, 0); !errors.Is(err, counters.ErrInvalidMode) {
			t.Errorf("SetMode cached on a sequence numbered %+v: %v, want ErrInvalidMode", nb, err)
		}
		if got, err := s.Current(ctx, name); err != nil || got.Mode != seqd.ModeStrict {
			t.Errorf("after the refusal: %+v, %v; want strict", got, err)
		}
	}
	if err := s.SetNumbering(ctx, "period", counters.Numbering{}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetMode(ctx, "period", seqd.ModeCached, 0, 0); err != nil {
		t.Errorf("SetMode cached after numbering none: %v", err)
	}
}
