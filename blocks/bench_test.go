package blocks_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/seqd/seqd"
	"github.com/seqd/seqd/blocks"
)

// instant is a Fetch that answers at once, so the benchmarks measure the
// Allocator, not a store.
func instant() blocks.Fetch {
	var last atomic.Int64
	return func(_ context.Context, n int64) (seqd.Range, error) {
		first := last.Add(n) - n + 1
		return seqd.Range{First: first, Last: first + n - 1}, nil
	}
}

func BenchmarkNext(b *testing.B) {
	ctx := context.Background()
	a := blocks.New(instant(), blocks.Options{})
	defer a.Close(ctx)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := a.Next(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkNextParallel(b *testing.B) {
	ctx := context.Background()
	a := blocks.New(instant(), blocks.Options{})
	defer a.Close(ctx)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := a.Next(ctx); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkAtomicAddParallel is the anchor: one shared counter and nothing else,
// the least any allocator shared by goroutines can cost.
func BenchmarkAtomicAddParallel(b *testing.B) {
	var n atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			n.Add(1)
		}
	})
}
