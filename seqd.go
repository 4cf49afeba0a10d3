// Package seqd holds what every part of seqd shares: a range of values, a
// sequence as stored, its mode, the errors the API and the libraries return, and
// the rule for a sequence's name. It imports nothing outside the standard
// library, so the HTTP client (package client) and the block allocator (package
// blocks) can use it without pulling in the MongoDB driver or Echo.
//
// Package counters keeps sequences in MongoDB and returns these values; its
// Err… variables are these same errors, so errors.Is works with either name.
package seqd

import (
	"errors"
	"fmt"
	"time"
)

// Range is a reserved run of values, First..Last inclusive.
type Range struct {
	First, Last int64
}

// Count is the number of values in r.
func (r Range) Count() int64 { return r.Last - r.First + 1 }

// Numbered is a reservation of a numbered sequence: its values, the key of the
// period they belong to ("2026-11"; "" for a sequence without a period), and
// Last and, for more than one value, First formatted ("" without a format).
type Numbered struct {
	Range
	Period         string
	Formatted      string
	FormattedFirst string
}

// Mode is how a sequence hands out values. It is stored with the sequence, so
// every instance and process agrees on it.
type Mode string

const (
	// ModeStrict takes every value from a write to the store: values are
	// linearizable across instances and processes, and gapless while writes
	// succeed. It is the default.
	ModeStrict Mode = "strict"
	// ModeCached serves values from blocks each instance reserves with one write:
	// unique across all instances and clients, strictly increasing within one
	// instance, no order across instances; a crash loses at most the unused rest
	// of the blocks that instance held.
	ModeCached Mode = "cached"
)

// Sequence is a named sequence as stored: its current value (the last value
// handed out, or the end of the last block reserved in cached mode) and its
// mode. In a List, Err is set instead of the rest for a sequence whose record
// seqd cannot use (it wraps ErrInvalidCounter).
type Sequence struct {
	Name  string
	Value int64
	Mode  Mode // ModeStrict for a sequence that never had a mode set

	// MinBlock and MaxBlock bound the size of a cached block; zero means the
	// instance's default.
	MinBlock, MaxBlock int64

	// Blocks counts cached mode's values over every instance, as they reported
	// them to the store.
	Blocks BlockCounts

	// StrictFrom is set while the sequence leaves cached mode (Mode is then
	// ModeStrict): until every instance's lease on its blocks has run out, no
	// value is handed out, and strict values start about then. It is the clock
	// of the instance that made the switch, so it is a guide, not a promise; the
	// switch completes once an instance has waited the longest lease on its own
	// clock.
	StrictFrom time.Time

	// Period ("year", "month", "day", "hour" or "minute"; "" for none),
	// TimeZone (an IANA name; "" for UTC) and Format ("" for none) are how
	// people read the sequence's values: it restarts at 1 each period of its
	// time zone's wall clock, and answers carry the value formatted.
	Period, TimeZone, Format string
	// PeriodKey names the period Value belongs to ("2026-11"); "" before the
	// first value of a periodic sequence, and for one without a period.
	PeriodKey string

	Err error
}

// BlockCounts is cached mode's accounting for one sequence, summed over every
// instance. Reserved values are served, returned (given back at a clean stop, to
// be handed out again), or neither: Unaccounted.
type BlockCounts struct {
	Reserved int64 // values reserved in blocks
	Served   int64 // values handed out from blocks, as reported at each block fetch and at a clean stop; a report lost to a failed fetch is not sent again, so never more than were handed out
	Returned int64 // values given back at a clean stop
}

// Unaccounted is what instances hold now in their blocks, plus what was lost:
// values skipped to keep a count contiguous, and the blocks of instances that
// stopped without a clean stop (counting what they served since their last
// report).
func (b BlockCounts) Unaccounted() int64 { return b.Reserved - b.Served - b.Returned }

// Errors every implementation returns for these conditions, wrapped with the
// operation and the sequence's name, so errors.Is works. The HTTP API maps each
// to a status, and the client maps those statuses back.
var (
	ErrInvalidName  = errors.New("invalid sequence name")
	ErrInvalidCount = errors.New("invalid count")
	ErrInvalidValue = errors.New("invalid value")
	ErrInvalidMode  = errors.New("invalid mode")
	ErrNotFound     = errors.New("sequence not found")
	ErrExhausted    = errors.New("sequence exhausted")
	ErrContention   = errors.New("too much contention")
	ErrBackwards    = errors.New("sequence would move backwards")
	ErrUnavailable  = errors.New("backend unavailable")

	// ErrDraining is a sequence leaving cached mode: no instance hands out a
	// value of it until every lease on a block has run out. An error that wraps
	// it wraps ErrUnavailable too, and says when to ask again.
	ErrDraining = errors.New("the sequence is leaving cached mode")

	// ErrInvalidCounter is a record that seqd did not write and cannot continue
	// from: a counter document whose seq is not an integer from 0 to
	// math.MaxInt64 (int32 or int64), a ledger whose largest numeric _id is above
	// math.MaxInt64, or a counters collection with a default collation other
	// than simple. seqd changes no such record; someone has to repair it.
	ErrInvalidCounter = errors.New("the sequence's stored record is not one seqd can use")
)

// MaxCount is the most values one request may take, and so the largest block
// bound a sequence may store.
const MaxCount = 1_000_000

// CheckMode returns nil for a mode and block bounds a sequence may store: mode
// ModeStrict or ModeCached, and bounds both 0 (the defaults) or 1 ≤ minBlock ≤
// maxBlock ≤ MaxCount. Otherwise it returns an error wrapping ErrInvalidMode that
// says what is wrong.
func CheckMode(mode Mode, minBlock, maxBlock int64) error {
	if mode != ModeStrict && mode != ModeCached {
		// %.40q: the mode is the caller's input; at most its first 40 characters.
		return fmt.Errorf("%w: %.40q, want %q or %q", ErrInvalidMode, string(mode), ModeStrict, ModeCached)
	}
	if (minBlock != 0 || maxBlock != 0) && (minBlock < 1 || minBlock > maxBlock || maxBlock > MaxCount) {
		return fmt.Errorf("%w: block bounds %d and %d, want both 0 (the defaults) or 1 ≤ min ≤ max ≤ %d",
			ErrInvalidMode, minBlock, maxBlock, MaxCount)
	}
	return nil
}

// ValidName reports whether name may name a sequence:
// 1 to 64 characters of [A-Za-z0-9_.-], starting with a letter or digit.
// (A loop, not a regexp: it runs on every request, and in cached mode a regexp
// cost more than taking the value.)
func ValidName(name string) bool {
	if len(name) < 1 || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		alnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		if !alnum && (i == 0 || c != '_' && c != '.' && c != '-') {
			return false
		}
	}
	return true
}
