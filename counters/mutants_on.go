//go:build seqdmutants

package counters

import (
	"context"
	"os"
	"sync"
)

// TEST ONLY: see mutants_off.go. Built only with -tags seqdmutants, for the
// robustness suite's mutant runs; SEQD_MUTANT names the one behaviour to break.
var (
	mutantNoLease     = os.Getenv("SEQD_MUTANT") == "no-lease"
	mutantNoFence     = os.Getenv("SEQD_MUTANT") == "no-fence"
	mutantEarlyAnswer = os.Getenv("SEQD_MUTANT") == "early-answer"
)

// answerEarly is the coalescer's write that answers before it returns: once it
// knows where a name stood after its last write, it hands out the next values
// from there and sends the write in the background, as if no other process
// wrote and no write failed.
func answerEarly(reserve reserveFunc) reserveFunc {
	var mu sync.Mutex
	last := map[string]int64{}
	return func(ctx context.Context, name string, n int64, build func(int, int64) any) (int64, int64, error) {
		mu.Lock()
		l, known := last[name]
		if known {
			last[name] = l + n
		}
		mu.Unlock()
		if !known {
			first, count, err := reserve(ctx, name, n, build)
			if err == nil {
				mu.Lock()
				last[name] = max(last[name], first+count-1)
				mu.Unlock()
			}
			return first, count, err
		}
		go reserve(context.WithoutCancel(ctx), name, n, build)
		return l + 1, n, nil
	}
}
