package counters

import (
	"context"

	"github.com/seqd/seqd"
)

// Strategy names, as the HTTP layer and configuration spell them.
const (
	StrategyCounter    = "counter"
	StrategyOptimistic = "optimistic"
)

// Range, Sequence and the errors below are package seqd's, named here too so
// that a library user needs only this package.
type (
	Range    = seqd.Range
	Sequence = seqd.Sequence
)

// Sequencer is what both strategies do, for code that picks one at run time, as
// seqd's HTTP layer does. An application that knows its strategy uses *Counter or
// *Optimistic, which also have Next for one value.
//
// Every method returns an error that wraps ErrInvalidName for a name that is not
// valid (see ValidName), ErrUnavailable when the backend could not be reached or
// could not confirm in time, and ErrInvalidCounter when the sequence's stored record
// is not one seqd can use. Other errors are wrapped driver errors.
type Sequencer interface {
	// Strategy returns the strategy's name (StrategyCounter or StrategyOptimistic).
	Strategy() string

	// NextN reserves n contiguous values of name (n ≥ 1). A new name starts at 1.
	// It returns ErrInvalidCount for n < 1 or for n > 1 on a strategy that reserves
	// one value at a time, ErrExhausted when fewer than n values remain before
	// math.MaxInt64, and ErrContention when the bounded retry gave up.
	NextN(ctx context.Context, name string, n int64) (Range, error)

	// Current returns the sequence as stored: the last value handed out (in
	// cached mode, the end of the last block reserved) and its mode, without
	// reserving a value. It returns ErrNotFound for a name that has never been used.
	Current(ctx context.Context, name string) (Sequence, error)

	// Set moves the sequence to value, so that the next value handed out is value+1.
	// It returns ErrBackwards when value is below the current value, unless force is
	// set, and ErrInvalidValue for a negative value.
	Set(ctx context.Context, name string, value int64, force bool) error

	// List returns the page of sequences that opts selects, ordered by name, and
	// in Next whether more follow. A sequence whose record seqd cannot use is
	// listed with Err set, so one such record does not hide the rest. It returns
	// an error wrapping ErrInvalidName or ErrInvalidCount for options that
	// opts.Check refuses. Its work and memory are bounded by the page, not by the
	// number of sequences stored.
	List(ctx context.Context, opts ListOptions) (Page, error)
}

// The errors the strategies return, package seqd's under the names this package
// has always used. Every error the strategies return for one of these conditions
// wraps exactly one of them, so errors.Is works with either name.
var (
	ErrInvalidName    = seqd.ErrInvalidName
	ErrInvalidCount   = seqd.ErrInvalidCount
	ErrInvalidValue   = seqd.ErrInvalidValue
	ErrInvalidMode    = seqd.ErrInvalidMode
	ErrNotFound       = seqd.ErrNotFound
	ErrExhausted      = seqd.ErrExhausted
	ErrContention     = seqd.ErrContention
	ErrBackwards      = seqd.ErrBackwards
	ErrUnavailable    = seqd.ErrUnavailable
	ErrDraining       = seqd.ErrDraining
	ErrInvalidCounter = seqd.ErrInvalidCounter
)

// ValidName reports whether name may name a sequence (seqd.ValidName).
func ValidName(name string) bool { return seqd.ValidName(name) }
