package httpapi

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/seqd/seqd/counters"
)

// boundedLedgers is the optimistic strategy with a bound on how many sequences
// the store may hold: each is a collection (a ledger), and every listing reads
// the names of them all, so one client making names at will would slow every
// tenant's listing, and the store. A name seen to exist goes straight through; a
// new one is created only while the store holds fewer than max ledgers, one new
// name at a time in this process, so that two cannot both take the last place.
// Instances do not share the count: n instances may together pass max by n−1.
type boundedLedgers struct {
	counters.Sequencer
	max   int
	count func(context.Context) (int, error) // how many ledgers the store holds

	known sync.Map      // name → struct{}: names seen to exist
	turn  chan struct{} // held while a new name is checked and created
}

func newBoundedLedgers(seq counters.Sequencer, max int, count func(context.Context) (int, error)) *boundedLedgers {
	return &boundedLedgers{Sequencer: seq, max: max, count: count, turn: make(chan struct{}, 1)}
}

var errSequenceLimit = &Error{Code: "sequence_limit", Message: "the store holds as many optimistic sequences as seqd may create (--max-optimistic-sequences); use an existing one"}

// NextN reserves values of name, creating it only within the bound.
func (b *boundedLedgers) NextN(ctx context.Context, name string, n int64) (counters.Range, error) {
	var r counters.Range
	err := b.admit(ctx, name, func() (err error) {
		r, err = b.Sequencer.NextN(ctx, name, n)
		return err
	})
	return r, err
}

// Set moves name, creating it only within the bound.
func (b *boundedLedgers) Set(ctx context.Context, name string, value int64, force bool) error {
	return b.admit(ctx, name, func() error { return b.Sequencer.Set(ctx, name, value, force) })
}

// admit runs write, which may create name's ledger, if name exists or there is
// room for one more.
func (b *boundedLedgers) admit(ctx context.Context, name string, write func() error) error {
	if _, ok := b.known.Load(name); ok || !counters.ValidName(name) {
		return write() // an invalid name is the sequencer's to refuse
	}
	exists := func() (bool, error) {
		_, err := b.Sequencer.Current(ctx, name)
		if errors.Is(err, counters.ErrNotFound) {
			return false, nil
		}
		return err == nil, err
	}
	if ok, err := exists(); err != nil || ok {
		if ok {
			b.known.Store(name, struct{}{})
			return write()
		}
		return err
	}
	select {
	case b.turn <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-b.turn }()
	ok, err := exists() // made while this waited its turn?
	if err != nil {
		return err
	}
	if !ok {
		n, err := b.count(ctx)
		if err != nil {
			return fmt.Errorf("httpapi: counting optimistic sequences: %w: %w", counters.ErrUnavailable, err)
		}
		if n >= b.max {
			return errSequenceLimit
		}
	}
	if err := write(); err != nil {
		return err
	}
	b.known.Store(name, struct{}{})
	return nil
}
