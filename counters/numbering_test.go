package counters

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seqd/seqd/period"
)

// TestNoteReachesEveryCaller: every caller of a coalesced write, the one that
// leads it, those of a batch and one that writes alone, gets the note the
// write left, and only that write's: a periodic sequence's callers learn the
// period of their values this way.
func TestNoteReachesEveryCaller(t *testing.T) {
	var writes atomic.Int64
	var mu sync.Mutex
	seq := int64(0)
	reserve := func(ctx context.Context, name string, n int64, _ func(int, int64) any) (int64, int64, error) {
		w := writes.Add(1)
		setNote(ctx, w)
		runtime.Gosched() // let other callers pile up behind this write
		mu.Lock()
		defer mu.Unlock()
		seq += n
		return seq - n + 1, n, nil
	}
	c := newCoalescer(reserve, nil, Options{}.withDefaults(), 1)
	type answer struct {
		r    Range
		note any
	}
	answers := make([]answer, 64)
	var wg sync.WaitGroup
	for i := range answers {
		wg.Go(func() {
			r, note, err := c.doNote(t.Context(), "x", 1)
			if err != nil {
				t.Error(err)
			}
			answers[i] = answer{r, note}
		})
	}
	wg.Wait()
	// Values and notes: the write numbered w served a contiguous run of values,
	// and every value of that run came with the note w.
	byNote := map[int64][]int64{}
	for _, a := range answers {
		w, ok := a.note.(int64)
		if !ok {
			t.Fatalf("an answer without its write's note: %+v", a)
		}
		byNote[w] = append(byNote[w], a.r.First)
	}
	if int64(len(byNote)) != writes.Load() {
		t.Errorf("%d notes for %d writes", len(byNote), writes.Load())
	}
	for w, vs := range byNote {
		lo, hi := vs[0], vs[0]
		for _, v := range vs {
			lo, hi = min(lo, v), max(hi, v)
		}
		if hi-lo+1 != int64(len(vs)) {
			t.Errorf("write %d's note came with values %v, not one write's run", w, vs)
		}
	}

	alone := newCoalescer(reserve, nil, Options{NoCoalesce: true}.withDefaults(), 1)
	if _, note, err := alone.doNote(t.Context(), "x", 1); err != nil || note != writes.Load() {
		t.Errorf("a write alone: note %v, %v; want %d", note, err, writes.Load())
	}
}

// TestNumberingCheck: what a numbering may be, and the errors' words.
func TestNumberingCheck(t *testing.T) {
	for _, tc := range []struct {
		nb   Numbering
		want string // "" for none; else the error's text after "invalid mode: "
		kind error
	}{
		{Numbering{}, "", nil},
		{Numbering{Period: "none"}, "", nil},
		{Numbering{Format: "T-{seq:5}"}, "", nil},
		{Numbering{Period: "minute", TimeZone: "Asia/Kolkata", Format: "{yy}{MM}{dd}{HH}{mm}{seq}"}, "", nil},
		{Numbering{Period: "week"}, `invalid period: "week", want none, year, month, day, hour or minute`, period.ErrInvalidUnit},
		{Numbering{Period: "day", TimeZone: "Mars/Olympus"}, `invalid time zone: "Mars/Olympus" is not an IANA zone name such as Europe/Berlin`, period.ErrInvalidZone},
		{Numbering{TimeZone: "Europe/Berlin"}, "a time zone (Europe/Berlin) goes with a period", nil},
		{Numbering{Format: "{yyyy}{seq}"}, "invalid format: {yyyy} needs a period, and the sequence has none", period.ErrInvalidFormat},
	} {
		err := tc.nb.Check()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: %v", tc.nb, err)
		case tc.want != "" && (err == nil || err.Error() != "invalid mode: "+tc.want || !errors.Is(err, ErrInvalidMode)):
			t.Errorf("%+v: %v, want invalid mode: %s", tc.nb, err, tc.want)
		case tc.kind != nil && !errors.Is(err, tc.kind):
			t.Errorf("%+v: %v does not wrap %v", tc.nb, err, tc.kind)
		}
	}
}

// TestNumberNoteLabels: a write's note reads values as people do.
func TestNumberNoteLabels(t *testing.T) {
	nb, err := Numbering{Period: "hour", TimeZone: "Asia/Kolkata", Format: "K{yyyy}{MM}{dd}{HH}-{seq:3}"}.parse()
	if err != nil {
		t.Fatal(err)
	}
	start := nb.spec.Start(time.Date(2026, 11, 26, 11, 45, 0, 0, time.UTC)).UnixMilli() // 17:15 in Kolkata
	got := (&numberNote{nb: nb, start: start}).label(Range{First: 7, Last: 9})
	want := Numbered{Range: Range{First: 7, Last: 9}, Period: "2026-11-26T17", Formatted: "K2026112617-009", FormattedFirst: "K2026112617-007"}
	if got != want {
		t.Errorf("label = %+v, want %+v", got, want)
	}
	if got := (*numberNote)(nil).label(Range{First: 1, Last: 1}); got != (Numbered{Range: Range{First: 1, Last: 1}}) {
		t.Errorf("no note: %+v", got)
	}
}
