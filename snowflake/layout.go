package snowflake

import (
	"errors"
	"fmt"
	"time"
)

// Epoch is where the time field of every layout counts from:
// 2026-01-01T00:00:00Z.
var Epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// epochMs is Epoch in Unix milliseconds.
const epochMs = 1767225600000

// Layout is how a deployment splits an id's bits between time, worker id and
// sequence (see the package comment). Twitter and JS53 are the two there are.
type Layout struct {
	name                          string
	timeBits, workerBits, seqBits uint
	lastUnixMs                    uint64 // the last millisecond the time field holds
}

func newLayout(name string, timeBits, workerBits, seqBits uint) Layout {
	return Layout{name: name, timeBits: timeBits, workerBits: workerBits, seqBits: seqBits,
		lastUnixMs: epochMs + 1<<timeBits - 1}
}

var (
	// Twitter is the default layout: 41 bits of milliseconds (until
	// 2095-09-07), 1,024 worker ids, 4,096 ids per millisecond per worker.
	Twitter = newLayout("twitter", 41, 10, 12)
	// JS53 keeps ids at or below 2^53 − 1, the largest integer a JavaScript
	// number holds exactly: 40 bits of milliseconds (until 2060-11-03), 32
	// worker ids, 256 ids per millisecond per worker.
	JS53 = newLayout("js53", 40, 5, 8)
)

// ErrUnknownLayout is returned by ParseLayout for a name that is not a layout.
var ErrUnknownLayout = errors.New("snowflake: unknown layout")

// ParseLayout returns the layout named "twitter" or "js53"; "" is twitter.
func ParseLayout(name string) (Layout, error) {
	switch name {
	case "", Twitter.name:
		return Twitter, nil
	case JS53.name:
		return JS53, nil
	}
	return Layout{}, fmt.Errorf("%w %q: want %q or %q", ErrUnknownLayout, name, Twitter.name, JS53.name)
}

// String returns the layout's name, "twitter" or "js53".
func (l Layout) String() string { return l.name }

// Workers returns how many worker ids the layout has: 0 to Workers()−1.
func (l Layout) Workers() int { return 1 << l.workerBits }

// PerMillisecond returns how many ids one worker makes in a millisecond
// before it borrows the next.
func (l Layout) PerMillisecond() int { return 1 << l.seqBits }

// End returns the last millisecond the layout's time field holds.
func (l Layout) End() time.Time { return time.UnixMilli(int64(l.lastUnixMs)).UTC() }

// Max returns the largest id the layout can make.
func (l Layout) MaxID() ID { return ID(1<<(l.timeBits+l.workerBits+l.seqBits) - 1) }

// compose lays out an id from Unix milliseconds (within the layout's range),
// a worker id and a sequence.
func (l Layout) compose(unixMs, worker, seq uint64) ID {
	return ID((unixMs-epochMs)<<(l.workerBits+l.seqBits) | worker<<l.seqBits | seq)
}

// Parts is what an id holds.
type Parts struct {
	UnixMilli int64
	Worker    int
	Sequence  int
}

// Time returns the id's millisecond as a time.Time in UTC.
func (p Parts) Time() time.Time { return time.UnixMilli(p.UnixMilli).UTC() }

// Decode splits id into its millisecond, worker id and sequence. The error,
// which wraps ErrInvalidID, says when id cannot be one of the layout's: it is
// negative or above MaxID.
func (l Layout) Decode(id ID) (Parts, error) {
	if id < 0 || id > l.MaxID() {
		return Parts{}, fmt.Errorf("%w: %d is outside the %s layout, 0 to %d", ErrInvalidID, int64(id), l.name, int64(l.MaxID()))
	}
	v := uint64(id)
	return Parts{
		UnixMilli: int64(v>>(l.workerBits+l.seqBits) + epochMs),
		Worker:    int(v >> l.seqBits & (1<<l.workerBits - 1)),
		Sequence:  int(v & (1<<l.seqBits - 1)),
	}, nil
}

// Min returns the smallest id of t's millisecond, for any worker: every id
// made in that millisecond or later is at or above it. Times before Epoch give
// the first millisecond, times past End the last.
func (l Layout) Min(t time.Time) ID { return l.compose(l.clamp(t), 0, 0) }

// Max returns the largest id of t's millisecond, for any worker: every id
// made in that millisecond or earlier is at or below it (as long as no worker
// borrowed past it). Times are clamped as by Min.
func (l Layout) Max(t time.Time) ID {
	return l.compose(l.clamp(t), 1<<l.workerBits-1, 1<<l.seqBits-1)
}

func (l Layout) clamp(t time.Time) uint64 {
	return uint64(min(max(t.UnixMilli(), epochMs), int64(l.lastUnixMs)))
}
