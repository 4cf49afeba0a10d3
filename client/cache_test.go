package client_test

import (
	"context"
	"errors"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/seqd/seqd"
	"github.com/seqd/seqd/blocks"
	"github.com/seqd/seqd/client"
)

// Goroutines sharing a cached Client get unique values, each in increasing order,
// from far fewer requests than values.
func TestCacheUniqueAndIncreasing(t *testing.T) {
	const goroutines, each = 8, 5000
	s := newSeqd(t)
	c := newClient(t, s.URL, client.WithCache(blocks.Options{}))
	ctx := t.Context()
	got := make([][]int64, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for range each {
				v, err := c.Next(ctx, "s")
				if err != nil {
					t.Error(err)
					return
				}
				got[g] = append(got[g], v)
			}
		})
	}
	wg.Wait()
	seen := make(map[int64]int, goroutines*each)
	for g, values := range got {
		for i, v := range values {
			if i > 0 && v <= values[i-1] {
				t.Fatalf("goroutine %d got %d after %d", g, v, values[i-1])
			}
			if h, dup := seen[v]; dup {
				t.Fatalf("%d handed out to goroutines %d and %d", v, h, g)
			}
			seen[v] = g
		}
	}
	if len(seen) != goroutines*each {
		t.Fatalf("%d values; want %d", len(seen), goroutines*each)
	}
	// Blocks start at 100 values and double while they last less than a minute.
	if n := s.requests.Load(); n > goroutines*each/100 {
		t.Fatalf("%d requests for %d values; want at most one per 100", n, goroutines*each)
	}
	st, ok := c.CacheStatus("s")
	if !ok || st.Served != goroutines*each {
		t.Fatalf("CacheStatus = %+v, %v; want %d served", st, ok, goroutines*each)
	}
	// What seqd handed out covers every value served.
	if v, _ := s.seq.Value("s"); v < int64(goroutines*each) {
		t.Fatalf("seqd is at %d; want at least %d", v, goroutines*each)
	}
}

// Two cached Clients of one seqd never share a value.
func TestCachesOfTwoClientsAreDisjoint(t *testing.T) {
	s := newSeqd(t)
	ctx := t.Context()
	seen := make(map[int64]bool)
	for range 2 {
		c := newClient(t, s.URL, client.WithCache(blocks.Options{MinBlock: 10}))
		for range 25 {
			v, err := c.Next(ctx, "s")
			if err != nil {
				t.Fatal(err)
			}
			if seen[v] {
				t.Fatalf("%d handed out twice", v)
			}
			seen[v] = true
		}
	}
}

func TestCacheNextN(t *testing.T) {
	s := newSeqd(t)
	c := newClient(t, s.URL, client.WithCache(blocks.Options{MinBlock: 100, MaxBlock: 100}))
	ctx := t.Context()
	r, err := c.NextN(ctx, "s", 30)
	if err != nil || r.Count() != 30 {
		t.Fatalf("NextN(30) = %+v, %v; want 30 values", r, err)
	}
	// More than a block holds: the cache fetches a block of at least that many.
	big, err := c.NextN(ctx, "s", 1000)
	if err != nil || big.Count() != 1000 || big.First <= r.Last {
		t.Fatalf("NextN(1000) = %+v, %v; want 1000 values after %d", big, err, r.Last)
	}
	for _, n := range []int64{0, -1, seqd.MaxCount + 1} {
		if _, err := c.NextN(ctx, "s", n); !errors.Is(err, seqd.ErrInvalidCount) {
			t.Errorf("NextN(%d) = %v; want ErrInvalidCount", n, err)
		}
	}
	// The refusals above were the cache's own: the next value comes at once.
	if _, err := c.Next(ctx, "s"); err != nil {
		t.Fatalf("Next after refused counts = %v", err)
	}
}

// Near the sequence's end, where fewer values remain than a block holds, the
// cache serves them all, as a Client without the cache does, and only then
// answers ErrExhausted.
func TestCacheServesTheLastValues(t *testing.T) {
	s := newSeqd(t)
	const left = 50 // fewer than a block of the default 100
	s.seq.Store("s", math.MaxInt64-left)
	c := newClient(t, s.URL, client.WithCache(blocks.Options{}))
	ctx := t.Context()
	if _, err := c.NextN(ctx, "s", left+1); !errors.Is(err, seqd.ErrExhausted) {
		t.Fatalf("NextN(%d) with %d left = %v; want ErrExhausted", left+1, left, err)
	}
	for want := int64(math.MaxInt64 - left + 1); ; want++ {
		v, err := c.Next(ctx, "s")
		if err != nil || v != want {
			t.Fatalf("Next = %d, %v; want %d", v, err, want)
		}
		if want == math.MaxInt64 {
			break
		}
	}
	if _, err := c.Next(ctx, "s"); !errors.Is(err, seqd.ErrExhausted) {
		t.Fatalf("Next past the end = %v; want ErrExhausted", err)
	}
}

// seqd's refusal of a block reaches the caller as seqd's error.
func TestCacheFetchError(t *testing.T) {
	s := newSeqd(t)
	s.seq.FailWith(seqd.ErrInvalidCounter)
	c := newClient(t, s.URL, client.WithCache(blocks.Options{}))
	_, err := c.Next(t.Context(), "s")
	var e *client.Error
	if !errors.As(err, &e) || e.Code != "invalid_counter" || !errors.Is(err, seqd.ErrInvalidCounter) {
		t.Fatalf("Next = %v; want seqd's invalid_counter", err)
	}
}

// A caller waits for a block no longer than its context allows.
func TestCacheWaitEndsAtTheDeadline(t *testing.T) {
	s := newSeqd(t)
	s.seq.BlockUntilDone() // seqd's store never answers
	c := newClient(t, s.URL, client.WithCache(blocks.Options{FetchTimeout: 500 * time.Millisecond}))
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	_, err := c.Next(ctx, "s")
	if !errors.Is(err, seqd.ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Next = %v; want ErrUnavailable and the deadline", err)
	}
}

func TestCacheClose(t *testing.T) {
	s := newSeqd(t)
	c, err := client.New(s.URL, client.WithCache(blocks.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := c.Next(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(ctx); err != nil {
		t.Fatalf("Close = %v", err)
	}
	for _, name := range []string{"s", "another"} {
		if _, err := c.Next(ctx, name); !errors.Is(err, client.ErrClosed) {
			t.Errorf("Next(%q) after Close = %v; want ErrClosed", name, err)
		}
		if _, err := c.NextN(ctx, name, 3); !errors.Is(err, client.ErrClosed) {
			t.Errorf("NextN(%q) after Close = %v; want ErrClosed", name, err)
		}
	}
}

// BenchmarkCachedNextParallel measures the local cache's hot path: values from
// memory, with a request to a loopback seqd per block.
//
//	go test -run '^$' -bench CachedNextParallel -benchtime 2s ./client
func BenchmarkCachedNextParallel(b *testing.B) {
	s := newSeqd(b)
	c := newClient(b, s.URL, client.WithCache(blocks.Options{MinBlock: seqd.MaxCount}))
	ctx := context.Background()
	if _, err := c.Next(ctx, "bench"); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.Next(ctx, "bench"); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(s.requests.Load()), "requests")
}
