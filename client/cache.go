package client

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/seqd/seqd"
	"github.com/seqd/seqd/blocks"
)

// cache is WithCache's local cache: one allocator per name, each reserving its
// blocks with fetch.
type cache struct {
	opts  blocks.Options
	fetch func(ctx context.Context, name string, n int64) (seqd.Range, error)

	// allocs maps a name to its *blocks.Allocator. A sync.Map, because the hot
	// path only reads it, from every goroutine at once; only valid names enter it.
	allocs sync.Map

	mu     sync.Mutex // serialises adding allocators and close
	closed bool
}

func newCache(opts blocks.Options, fetch func(ctx context.Context, name string, n int64) (seqd.Range, error)) *cache {
	return &cache{opts: opts, fetch: fetch}
}

// allocator returns name's allocator, making it on first use.
func (k *cache) allocator(name string) (*blocks.Allocator, error) {
	if a, ok := k.allocs.Load(name); ok {
		return a.(*blocks.Allocator), nil
	}
	if !seqd.ValidName(name) {
		return nil, seqd.ErrInvalidName
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return nil, ErrClosed
	}
	if a, ok := k.allocs.Load(name); ok {
		return a.(*blocks.Allocator), nil
	}
	a := blocks.New(func(ctx context.Context, n int64) (seqd.Range, error) {
		return k.fetch(ctx, name, n)
	}, k.opts)
	k.allocs.Store(name, a)
	return a, nil
}

func (k *cache) nextN(ctx context.Context, name string, n int64) (seqd.Range, error) {
	// Checked here, not left to seqd: a block request that seqd refuses would fail
	// every caller of the name for the allocator's Cooldown.
	if n < 1 || n > seqd.MaxCount {
		return seqd.Range{}, fmt.Errorf("client: next %d of %q: %w: count must be from 1 to %d", n, name, seqd.ErrInvalidCount, seqd.MaxCount)
	}
	a, err := k.allocator(name)
	if err != nil {
		return seqd.Range{}, fmt.Errorf("client: next %d of %q: %w", n, name, err)
	}
	r, err := a.NextN(ctx, n)
	if err != nil {
		return seqd.Range{}, cacheError(name, err)
	}
	return r, nil
}

// cacheError words an allocator's own errors as the client's; the errors of a
// fetch already say what was asked of seqd and what it answered.
func cacheError(name string, err error) error {
	switch {
	case errors.Is(err, blocks.ErrClosed):
		return fmt.Errorf("client: next %q: %w", name, ErrClosed)
	case errors.Is(err, seqd.ErrUnavailable):
		return err
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return fmt.Errorf("client: next %q: %w: waiting for a block of values: %w", name, seqd.ErrUnavailable, err)
	}
	return err
}

// fetchBlock is the cache's blocks.Fetch: n values of name, or, where fewer
// remain before the sequence's end, those that remain. seqd refuses a count that
// passes the end (exhausted), so the values left are read from the sequence's
// value; without them, a block larger than what remains would fail every caller
// while a Client without the cache still got values.
func (c *Client) fetchBlock(ctx context.Context, name string, n int64) (seqd.Range, error) {
	r, err := c.fetch(ctx, name, n)
	if n == 1 || !errors.Is(err, seqd.ErrExhausted) {
		return r, err
	}
	s, cerr := c.current(ctx, name)
	if cerr != nil || s.Value == math.MaxInt64 || math.MaxInt64-s.Value >= n {
		return r, err
	}
	return c.fetch(ctx, name, math.MaxInt64-s.Value)
}

// status reports name's allocator, if the cache has one.
func (k *cache) status(name string) (blocks.Status, bool) {
	a, ok := k.allocs.Load(name)
	if !ok {
		return blocks.Status{}, false
	}
	return a.(*blocks.Allocator).Status(), true
}

// close closes every allocator at once, so that they share ctx's time; the values
// they held are dropped: seqd takes nothing back from a client.
func (k *cache) close(ctx context.Context) {
	k.mu.Lock()
	k.closed = true
	k.mu.Unlock()
	var wg sync.WaitGroup
	k.allocs.Range(func(_, a any) bool {
		wg.Go(func() { a.(*blocks.Allocator).Close(ctx) })
		return true
	})
	wg.Wait()
}
