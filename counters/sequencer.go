package counters

import (
	"context"
	"errors"
	"regexp"
)

// Strategy names, as the HTTP layer and configuration spell them.
const (
	StrategyCounter    = "counter"
	StrategyOptimistic = "optimistic"
)

// Range is a reserved run of values, First..Last inclusive.
type Range struct {
	First, Last int64
}

// Count is the number of values in r.
func (r Range) Count() int64 { return r.Last - r.First + 1 }

// Sequence is a named sequence and its current value (the last value handed out).
// In a List, Err is set instead of Value for a sequence whose record seqd cannot
// use (it wraps ErrInvalidCounter).
type Sequence struct {
	Name  string `json:"name"`
	Value int64  `json:"value"`
	Err   error  `json:"-"`
}

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

	// Current returns the last value handed out, without reserving one.
	// It returns ErrNotFound for a name that has never been used.
	Current(ctx context.Context, name string) (int64, error)

	// Set moves the sequence to value, so that the next value handed out is value+1.
	// It returns ErrBackwards when value is below the current value, unless force is
	// set, and ErrInvalidValue for a negative value.
	Set(ctx context.Context, name string, value int64, force bool) error

	// List returns every sequence, ordered by name. A sequence whose record seqd
	// cannot use is listed with Err set, so one such record does not hide the rest.
	List(ctx context.Context) ([]Sequence, error)
}

// Errors the HTTP layer maps to statuses. Every error the strategies return for one
// of these conditions wraps exactly one of them, so errors.Is works.
var (
	ErrInvalidName  = errors.New("invalid sequence name")
	ErrInvalidCount = errors.New("invalid count")
	ErrInvalidValue = errors.New("invalid value")
	ErrNotFound     = errors.New("sequence not found")
	ErrExhausted    = errors.New("sequence exhausted")
	ErrContention   = errors.New("too much contention")
	ErrBackwards    = errors.New("sequence would move backwards")
	ErrUnavailable  = errors.New("backend unavailable")

	// ErrInvalidCounter is a record that seqd did not write and cannot continue
	// from: a counter document whose seq is not an integer from 0 to
	// math.MaxInt64 (int32 or int64), or a ledger whose largest _id is not a whole
	// number. seqd changes no such record; someone has to repair it.
	ErrInvalidCounter = errors.New("the sequence's stored record is not one seqd can use")
)

var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// ValidName reports whether name may name a sequence:
// 1 to 64 characters of [A-Za-z0-9_.-], starting with a letter or digit.
func ValidName(name string) bool { return namePattern.MatchString(name) }
