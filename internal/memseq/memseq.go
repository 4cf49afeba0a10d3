// Package memseq is an in-memory counters.Sequencer for the tests and benchmarks of
// any package.
//
// It keeps the interface's contract: a new name starts at 1; NextN reserves n
// contiguous values, refuses n < 1 with ErrInvalidCount and, for the optimistic
// strategy, n > 1 too; a name that fails counters.ValidName gets ErrInvalidName;
// Current reports ErrNotFound for a name never used; Set refuses a negative value
// with ErrInvalidValue and a move backwards with ErrBackwards unless forced; values
// end at math.MaxInt64 with ErrExhausted; List pages by name as
// counters.ListOptions say, and refuses what their Check refuses. A call whose
// context is done returns ErrUnavailable wrapping ctx.Err(). Every error wraps the
// counters sentinel, as the real strategies' do, so errors.Is works.
//
// It also has the Counter's numbering methods (SetNumbering, NextNumbered,
// PeriodValue), with a clock a test sets (SetClock), and its mode methods. SetMode stores a sequence's mode and
// block bounds, which Current and List then return, creating the sequence at 0 if
// new; it refuses with ErrInvalidMode a mode other than strict or cached, bounds
// other than both 0 (the default) or 1 ≤ min ≤ max ≤ seqd.MaxCount, cached for a
// sequence with a period or format, and any mode on the optimistic strategy,
// which has none. BlockStatus reports what SetBlockStatus gave it: the fake has
// no blocks of its own.
//
// A test can make every method fail (FailWith, FailFunc, BlockUntilDone), seed and
// read sequences without a call (Store, StoreSequence, StoreInvalid, Value), and
// read what was asked (Calls). A Sequencer is safe for concurrent use.
package memseq

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/seqd/seqd"
	"github.com/seqd/seqd/blocks"
	"github.com/seqd/seqd/counters"
	"github.com/seqd/seqd/period"
)

// Sequencer is an in-memory counters.Sequencer. Make one with New.
type Sequencer struct {
	strategy string
	batches  bool // NextN takes n > 1; the optimistic strategy does not
	modes    bool // SetMode takes a mode; the optimistic strategy has none

	mu       sync.Mutex
	seqs     map[string]seqd.Sequence        // as stored; Mode "" is strict
	blocks   map[string]blocks.Status        // what SetBlockStatus gave
	numbered map[string]*numbering           // the numbered sequences'
	clock    func() time.Time                // SetClock's; nil is time.Now
	fail     func(ctx context.Context) error // when set, every method returns its error first
	calls    []Call
}

var _ counters.Sequencer = (*Sequencer)(nil)

// Call is one method call, as the Sequencer received it.
type Call struct {
	Op                 string               // "nextN", "current", "set", "setMode", "setNumbering", "setNumberingValue" or "list"
	List               counters.ListOptions // what list was asked
	Name               string
	N                  int64              // the count asked of nextN
	Value              int64              // the value asked of set or setNumberingValue
	Force              bool               // their force
	Mode               seqd.Mode          // the mode asked of setMode
	MinBlock, MaxBlock int64              // setMode's bounds
	Numbering          counters.Numbering // what setNumbering or setNumberingValue was asked
	Deadline           bool               // the context carried a deadline
}

// MaxCalls bounds the calls a Sequencer records, so that a fuzz run or a benchmark
// does not grow it without end; later calls are served but not recorded.
const MaxCalls = 10000

// New returns an empty Sequencer of strategy (counters.StrategyCounter or
// counters.StrategyOptimistic), which decides whether NextN takes n > 1 and SetMode a mode.
func New(strategy string) *Sequencer {
	return &Sequencer{
		strategy: strategy,
		batches:  strategy != counters.StrategyOptimistic,
		modes:    strategy != counters.StrategyOptimistic,
		seqs:     make(map[string]seqd.Sequence),
		blocks:   make(map[string]blocks.Status),
		numbered: make(map[string]*numbering),
	}
}

// FailWith makes every method return err, until FailFunc(nil).
func (s *Sequencer) FailWith(err error) {
	s.FailFunc(func(context.Context) error { return err })
}

// BlockUntilDone makes every method wait for its context and return ctx.Err()
// bare, as a driver that does not wrap it would.
func (s *Sequencer) BlockUntilDone() {
	s.FailFunc(func(ctx context.Context) error {
		<-ctx.Done()
		return ctx.Err()
	})
}

// FailFunc makes every method call fail first, with the method's context, and
// return its error if not nil; fail may block or panic. nil removes it.
func (s *Sequencer) FailFunc(fail func(ctx context.Context) error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail = fail
}

// Store sets the value of name without a call: the next value is v+1.
func (s *Sequencer) Store(name string, v int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	seq := s.seqs[name]
	seq.Value, seq.Err = v, nil
	s.seqs[name] = seq
}

// StoreSequence stores seq as it is, under seq.Name, without a call: its mode,
// bounds and block counts as well as its value. Its Err is not kept.
func (s *Sequencer) StoreSequence(seq seqd.Sequence) {
	s.mu.Lock()
	defer s.mu.Unlock()
	seq.Err = nil
	s.seqs[seq.Name] = seq
}

// StoreInvalid stores under name a record seqd cannot use, as another client
// might write one: List lists it with Err set to err, and Current, NextN, Set and
// SetMode of name return err. err should wrap counters.ErrInvalidCounter, as the
// real strategies' do. A later Store or StoreSequence of name replaces it.
func (s *Sequencer) StoreInvalid(name string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seqs[name] = seqd.Sequence{Name: name, Err: err}
}

// invalid returns the error of name's record if StoreInvalid stored one. The
// caller holds s.mu.
func (s *Sequencer) invalid(name string) error {
	return s.seqs[name].Err
}

// Value returns the value of name, and whether name exists, without a call.
func (s *Sequencer) Value(name string) (int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	seq, ok := s.seqs[name]
	return seq.Value, ok
}

// SetBlockStatus makes BlockStatus(name) report st.
func (s *Sequencer) SetBlockStatus(name string, st blocks.Status) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.blocks[name] = st
}

// BlockStatus returns what SetBlockStatus gave for name, and whether it gave any.
// Like the Counter's, it is not a call to the store: it is not recorded, and
// FailWith does not reach it.
func (s *Sequencer) BlockStatus(name string) (blocks.Status, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.blocks[name]
	return st, ok
}

// Calls returns the calls received so far, the first MaxCalls of them, in order.
func (s *Sequencer) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// begin records c and returns the error the method must return before doing
// anything, if any.
func (s *Sequencer) begin(ctx context.Context, c Call) error {
	_, c.Deadline = ctx.Deadline()
	s.mu.Lock()
	if len(s.calls) < MaxCalls {
		s.calls = append(s.calls, c)
	}
	fail := s.fail
	s.mu.Unlock()
	if fail != nil { // called unlocked: it may block
		if err := fail(ctx); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("memseq: %s: %w: %w", c.Op, counters.ErrUnavailable, err)
	}
	if c.Op != "list" && !counters.ValidName(c.Name) {
		return fmt.Errorf("memseq: %s %q: %w", c.Op, c.Name, counters.ErrInvalidName)
	}
	return nil
}

// Strategy returns the strategy New was given.
func (s *Sequencer) Strategy() string { return s.strategy }

// NextN reserves n contiguous values of name.
func (s *Sequencer) NextN(ctx context.Context, name string, n int64) (counters.Range, error) {
	if err := s.begin(ctx, Call{Op: "nextN", Name: name, N: n}); err != nil {
		return counters.Range{}, err
	}
	if n < 1 || (n > 1 && !s.batches) {
		return counters.Range{}, fmt.Errorf("memseq: next %d of %q: %w", n, name, counters.ErrInvalidCount)
	}
	r, _, err := s.reserve(name, n)
	return r, err
}

// reserve takes n values of name: of the clock's period, or of the newer one
// stored, for a periodic sequence (advance). It returns them and, for a
// numbered sequence, its numbering as they were taken (nil for none).
func (s *Sequencer) reserve(name string, n int64) (counters.Range, *numbering, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.invalid(name); err != nil {
		return counters.Range{}, nil, err
	}
	var nb *numbering
	if st := s.advance(name); st != nil {
		nb = &numbering{spec: st.spec, format: st.format, formatted: s.seqs[name].Format != "", start: st.start}
	}
	seq := s.seqs[name]
	last := seq.Value
	if last > math.MaxInt64-n {
		return counters.Range{}, nil, fmt.Errorf("memseq: next %q: %w", name, counters.ErrExhausted)
	}
	seq.Name, seq.Value = name, last+n
	s.seqs[name] = seq
	return counters.Range{First: last + 1, Last: last + n}, nb, nil
}

// Current returns the last value handed out of name.
func (s *Sequencer) Current(ctx context.Context, name string) (counters.Sequence, error) {
	if err := s.begin(ctx, Call{Op: "current", Name: name}); err != nil {
		return counters.Sequence{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	seq, ok := s.seqs[name]
	if !ok {
		return counters.Sequence{}, fmt.Errorf("memseq: current %q: %w", name, counters.ErrNotFound)
	}
	if seq.Err != nil {
		return counters.Sequence{}, seq.Err
	}
	return stored(name, seq), nil
}

// stored is seq as Current and List return it: named, with its mode; or, for a
// record StoreInvalid stored, named and with its error only.
func stored(name string, seq seqd.Sequence) counters.Sequence {
	if seq.Err != nil {
		return counters.Sequence{Name: name, Err: seq.Err}
	}
	seq.Name = name
	if seq.Mode == "" {
		seq.Mode = seqd.ModeStrict
	}
	return seq
}

// Set moves name to value: on a periodic sequence, the current period's value
// (the clock's period, or a newer one stored), as the Counter's Set does.
func (s *Sequencer) Set(ctx context.Context, name string, value int64, force bool) error {
	if err := s.begin(ctx, Call{Op: "set", Name: name, Value: value, Force: force}); err != nil {
		return err
	}
	if value < 0 {
		return fmt.Errorf("memseq: set %q: %w", name, counters.ErrInvalidValue)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.set(name, value, force)
}

// set is Set's change. s.mu is held.
func (s *Sequencer) set(name string, value int64, force bool) error {
	if err := s.invalid(name); err != nil {
		return err
	}
	s.advance(name) // a periodic sequence's value is the current period's
	seq := s.seqs[name]
	if cur := seq.Value; value < cur && !force {
		return fmt.Errorf("memseq: set %q to %d: %w: at %d, asked for %d", name, value, counters.ErrBackwards, cur, value)
	}
	seq.Name, seq.Value = name, value
	s.seqs[name] = seq
	return nil
}

// SetMode sets the mode and block bounds of name, creating it at 0 if new.
func (s *Sequencer) SetMode(ctx context.Context, name string, mode seqd.Mode, minBlock, maxBlock int64) error {
	if err := s.begin(ctx, Call{Op: "setMode", Name: name, Mode: mode, MinBlock: minBlock, MaxBlock: maxBlock}); err != nil {
		return err
	}
	switch {
	case !s.modes:
		return fmt.Errorf("memseq: set mode of %q: %w: the %s strategy has no modes", name, counters.ErrInvalidMode, s.strategy)
	}
	if err := seqd.CheckMode(mode, minBlock, maxBlock); err != nil {
		return fmt.Errorf("memseq: set mode of %q: %w", name, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.invalid(name); err != nil {
		return err
	}
	seq := s.seqs[name]
	if mode == seqd.ModeCached && (seq.Period != "" || seq.Format != "") {
		return fmt.Errorf("memseq: set mode of %q: %w: a sequence with a period or format is strict", name, counters.ErrInvalidMode)
	}
	seq.Name, seq.Mode, seq.MinBlock, seq.MaxBlock = name, mode, minBlock, maxBlock
	s.seqs[name] = seq
	return nil
}

// List returns the page of sequences that opts selects, ordered by name.
func (s *Sequencer) List(ctx context.Context, opts counters.ListOptions) (counters.Page, error) {
	if err := s.begin(ctx, Call{Op: "list", List: opts}); err != nil {
		return counters.Page{}, err
	}
	if err := opts.Check(); err != nil {
		return counters.Page{}, fmt.Errorf("memseq: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var matches []counters.Sequence
	for name, seq := range s.seqs {
		if opts.Match(name) {
			matches = append(matches, stored(name, seq))
		}
	}
	slices.SortFunc(matches, func(a, b counters.Sequence) int { return strings.Compare(a.Name, b.Name) })
	return opts.PageOf(matches), nil
}

// maxPastPeriods is how many finished periods a sequence remembers, as the
// Counter's does.
const maxPastPeriods = 32

// numbering is a numbered sequence's state beside its seqd.Sequence.
type numbering struct {
	spec      period.Spec
	format    period.Format
	formatted bool      // in reserve's copy: the sequence has a format
	start     time.Time // of the period Value counts in; zero before the first value
	past      map[string]int64
}

// SetClock sets the clock NextNumbered reads the period from; nil is time.Now.
func (s *Sequencer) SetClock(clock func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clock = clock
}

// SetNumbering sets name's period, time zone and format as the Counter's
// does, creating it at 0 if new: a new period or zone restarts at 1 with the
// next value, and once values of a period were handed out it is refused with
// ErrInvalidMode (a new format alone is taken). It refuses what counters.Numbering.Check refuses, a numbering
// of a cached sequence, and any on the optimistic strategy, with
// ErrInvalidMode.
func (s *Sequencer) SetNumbering(ctx context.Context, name string, nb counters.Numbering) error {
	if err := s.begin(ctx, Call{Op: "setNumbering", Name: name, Numbering: nb}); err != nil {
		return err
	}
	if nb.Period == "none" {
		nb.Period = ""
	}
	if err := nb.Check(); err != nil || !s.modes {
		return fmt.Errorf("memseq: set numbering of %q: %w (%v)", name, counters.ErrInvalidMode, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.setNumbering(name, nb)
}

// SetNumberingValue is SetNumbering and Set at once, as the Counter's: both
// or, if either is refused, neither. It is recorded as a call of
// setNumberingValue.
func (s *Sequencer) SetNumberingValue(ctx context.Context, name string, nb counters.Numbering, value int64, force bool) error {
	if err := s.begin(ctx, Call{Op: "setNumberingValue", Name: name, Numbering: nb, Value: value, Force: force}); err != nil {
		return err
	}
	if nb.Period == "none" {
		nb.Period = ""
	}
	if err := nb.Check(); err != nil || !s.modes {
		return fmt.Errorf("memseq: set numbering of %q: %w (%v)", name, counters.ErrInvalidMode, err)
	}
	if value < 0 {
		return fmt.Errorf("memseq: set %q: %w", name, counters.ErrInvalidValue)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	seq, st, had := s.seqs[name], s.numbered[name], s.numbered[name] != nil
	var saved numbering
	if had {
		saved = *st
		saved.past = maps.Clone(st.past)
	}
	err := s.setNumbering(name, nb)
	if err == nil {
		err = s.set(name, value, force)
	}
	if err != nil { // neither
		s.seqs[name] = seq
		if had {
			*st = saved
			s.numbered[name] = st
		} else {
			delete(s.numbered, name)
		}
		if seq.Name == "" {
			delete(s.seqs, name)
		}
	}
	return err
}

// setNumbering is SetNumbering's change, with nb checked. s.mu is held.
func (s *Sequencer) setNumbering(name string, nb counters.Numbering) error {
	unit, _ := period.ParseUnit(cmp.Or(nb.Period, "none"))
	zone, _ := period.ParseZone(nb.TimeZone)
	if err := s.invalid(name); err != nil {
		return err
	}
	seq := s.seqs[name]
	if seq.Mode == seqd.ModeCached && nb != (counters.Numbering{}) {
		return fmt.Errorf("memseq: set numbering of %q: %w: a cached sequence", name, counters.ErrInvalidMode)
	}
	if unit == period.None || zone == time.UTC {
		nb.TimeZone = ""
	}
	st := s.numbered[name]
	if st != nil && !st.start.IsZero() && (seq.Period != nb.Period || seq.TimeZone != nb.TimeZone) {
		return fmt.Errorf("memseq: set numbering of %q: %w: values of period %s were handed out", name, counters.ErrInvalidMode, seq.PeriodKey)
	}
	if st == nil || seq.Period != nb.Period || seq.TimeZone != nb.TimeZone {
		st = &numbering{past: map[string]int64{}}
		seq.PeriodKey = ""
	}
	st.spec = period.Spec{Unit: unit, Zone: zone}
	st.format, _ = period.ParseFormat(nb.Format)
	s.numbered[name] = st
	seq.Name, seq.Period, seq.TimeZone, seq.Format = name, nb.Period, nb.TimeZone, nb.Format
	s.seqs[name] = seq
	return nil
}

// NextNumbered is NextN, with the period and the formatted values of a
// numbered sequence: the stored period, or the clock's if it is newer, whose
// values start at 1. It is recorded as a call of nextN.
func (s *Sequencer) NextNumbered(ctx context.Context, name string, n int64) (counters.Numbered, error) {
	if err := s.begin(ctx, Call{Op: "nextN", Name: name, N: n}); err != nil {
		return counters.Numbered{}, err
	}
	if n < 1 {
		return counters.Numbered{}, fmt.Errorf("memseq: next %d of %q: %w", n, name, counters.ErrInvalidCount)
	}
	r, st, err := s.reserve(name, n)
	if err != nil || st == nil {
		return counters.Numbered{Range: r}, err
	}
	out := counters.Numbered{Range: r}
	start := st.start.In(st.spec.Zone)
	if st.spec.Unit != period.None {
		out.Period = st.spec.Key(start)
	}
	if st.formatted {
		out.Formatted = st.format.Apply(r.Last, start)
		if r.First != r.Last {
			out.FormattedFirst = st.format.Apply(r.First, start)
		}
	}
	return out, nil
}

// advance begins the clock's period of name, if name has a period and the
// clock's is newer than the stored one (or none began yet): the stored one's
// last value is kept, and the new one counts from 0. It returns name's
// numbering, nil for none. s.mu is held.
func (s *Sequencer) advance(name string) *numbering {
	st := s.numbered[name]
	if st == nil || st.spec.Unit == period.None {
		return st
	}
	clock := s.clock
	if clock == nil {
		clock = time.Now
	}
	if start := st.spec.Start(clock()); st.start.IsZero() || start.After(st.start) {
		seq := s.seqs[name]
		if !st.start.IsZero() {
			st.past[seq.PeriodKey] = seq.Value
			if len(st.past) > maxPastPeriods { // the oldest goes, as the Counter's
				delete(st.past, slices.Min(slices.Collect(maps.Keys(st.past))))
			}
		}
		st.start, seq.Value, seq.PeriodKey = start, 0, st.spec.Key(start)
		s.seqs[name] = seq
	}
	return st
}

// PeriodValue returns the last value of name in period key: the current
// one's or a finished one's; ErrNotFound for others.
func (s *Sequencer) PeriodValue(ctx context.Context, name, key string) (int64, error) {
	if err := s.begin(ctx, Call{Op: "periodValue", Name: name}); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	seq, st := s.seqs[name], s.numbered[name]
	switch {
	case st == nil || st.spec.Unit == period.None:
		return 0, fmt.Errorf("memseq: period value of %q: %w: no period", name, counters.ErrNotFound)
	case key != "" && key == seq.PeriodKey:
		return seq.Value, nil
	}
	if v, ok := st.past[key]; ok {
		return v, nil
	}
	return 0, fmt.Errorf("memseq: period value of %q: %w: no period %.20q", name, counters.ErrNotFound, key)
}
