package blocks_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seqd/seqd"
	"github.com/seqd/seqd/blocks"
	"github.com/seqd/seqd/internal/history"
)

// Callers of Next and of NextN larger than the blocks, with a Fetch that fails
// now and then: no value twice, real-time order, and every value fetched is
// served, skipped or returned at Close.
func TestMixedCallersWithFailingFetches(t *testing.T) {
	ctx := context.Background()
	s := &store{}
	var calls atomic.Int64
	fetch := func(ctx context.Context, n int64) (seqd.Range, error) {
		if calls.Add(1)%5 == 0 {
			return seqd.Range{}, errDown
		}
		return s.Fetch(ctx, n)
	}
	a := blocks.New(fetch, blocks.Options{MinBlock: 1, MaxBlock: 32, Prefetch: 0.5, Cooldown: time.Nanosecond})

	const goroutines, perGoroutine = 32, 400
	ops := make([][]history.Op, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range perGoroutine {
				n := int64(1)
				if (g+i)%40 == 0 {
					n = 100
				}
				start := time.Now()
				r, err := a.NextN(ctx, n)
				end := time.Now()
				if errors.Is(err, errDown) {
					continue
				}
				if err != nil || r.Count() != n {
					t.Errorf("goroutine %d: NextN(%d) = %v, %v", g, n, r, err)
					return
				}
				ops[g] = append(ops[g], history.Op{Client: fmt.Sprint("goroutine-", g), Start: start, End: end, First: r.First, Last: r.Last})
			}
		})
	}
	wg.Wait()
	held := a.Close(ctx)
	res := history.Check(slices.Concat(ops...), history.Options{})
	if err := res.Err(); err != nil {
		t.Fatal(err)
	}
	checkAccounted(t, a, held, res.Values)
}
