// Package blocks serves a sequence's values from blocks reserved ahead, in
// memory: seqd's cached mode, and the Go client's local cache.
//
// (API outline; the implementation and the full design comment come next.)
package blocks

import (
	"context"
	"errors"
	"time"

	"github.com/seqd/seqd"
)

// Fetch reserves n contiguous values (n ≥ 1) of one sequence and returns them. It
// may return fewer than n, at least one, when fewer remain before the sequence's
// end. The Allocator calls it from its own goroutine, one call at a time, without
// holding its lock: Fetch may call Status.
type Fetch func(ctx context.Context, n int64) (seqd.Range, error)

// ErrClosed is returned by calls on an Allocator after Close.
var ErrClosed = errors.New("blocks: allocator closed")

// Options tune an Allocator. Every field may be left zero for its default.
type Options struct {
	MinBlock     int64            // smallest block fetched; default 100
	MaxBlock     int64            // largest block fetched (a larger NextN fetches what it needs); default 1,000,000
	Target       time.Duration    // how long a block should last at the current rate; default 1 minute
	Prefetch     float64          // fraction of the current block used when the next is fetched; default 0.1
	FetchTimeout time.Duration    // bounds one Fetch; default 10 seconds
	Cooldown     time.Duration    // after a failed Fetch, callers the blocks cannot serve fail at once for this long; default 250ms
	Now          func() time.Time // the clock, for tests; default time.Now
}

// Block is the unused rest of a block: First..Last, Remaining values.
type Block struct {
	First, Last, Remaining int64
}

// Status is what an Allocator holds and has done, for status pages and metrics.
type Status struct {
	Current, Next Block         // Remaining 0: none
	BlockSize     int64         // what the next Fetch asks for
	Rate          float64       // values a second, over the last block used up (or the current one so far)
	Fetching      bool          // a Fetch is in flight
	LastFetch     time.Duration // how long the last Fetch took
	LastFetchAt   time.Time     // when it ended; zero before the first
	LastError     string        // the last Fetch's error; empty after a success
	Fetched       int64         // values reserved by every Fetch
	Served        int64         // values handed out
	Skipped       int64         // values passed over so that a NextN got contiguous values
}

// Allocator hands out a sequence's values from the blocks it fetches.
type Allocator struct{}

// New returns an Allocator that reserves blocks with fetch.
func New(fetch Fetch, opts Options) *Allocator { panic("blocks: not implemented yet") }

// NextN returns n contiguous values, n ≥ 1.
func (a *Allocator) NextN(ctx context.Context, n int64) (seqd.Range, error) {
	panic("blocks: not implemented yet")
}

// Next returns the next value.
func (a *Allocator) Next(ctx context.Context) (int64, error) { panic("blocks: not implemented yet") }

// Status reports what a holds and has done.
func (a *Allocator) Status() Status { panic("blocks: not implemented yet") }

// Close stops a: later calls return ErrClosed. It waits, until ctx ends, for a
// Fetch in flight, and returns the values a holds unused, in ascending blocks.
func (a *Allocator) Close(ctx context.Context) []seqd.Range { panic("blocks: not implemented yet") }
