package counters

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
)

// countingObserver counts retries.
type countingObserver struct {
	nopObserver
	retries atomic.Int64
}

func (o *countingObserver) Retry(string) { o.retries.Add(1) }

func TestRetrier(t *testing.T) {
	ctx := context.Background()
	failed := errors.New("not a duplicate key")
	for _, tc := range []struct {
		name      string
		max       int
		retries   int   // how many attempts ask for a retry before one does not
		err       error // the last attempt's error
		want      error
		wantTries int
	}{
		{"first attempt succeeds", 3, 0, nil, nil, 1},
		{"first attempt fails", 3, 0, failed, failed, 1},
		{"succeeds on the last retry", 3, 3, nil, nil, 4},
		{"fails after retries", 3, 2, failed, failed, 3},
		{"past the bound", 3, 10, nil, ErrContention, 4},
		{"no retries", 0, 1, nil, ErrContention, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obs := &countingObserver{}
			tries := 0
			err := retrier{max: tc.max, strategy: StrategyCounter, observer: obs}.do(ctx, func() (bool, error) {
				tries++
				if tries <= tc.retries {
					return true, nil
				}
				return false, tc.err
			})
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Errorf("do = %v, want %v", err, tc.want)
			}
			if tries != tc.wantTries {
				t.Errorf("%d attempts, want %d", tries, tc.wantTries)
			}
			if got := obs.retries.Load(); got != int64(tc.wantTries-1) {
				t.Errorf("Observer.Retry called %d times, want %d (once per retry)", got, tc.wantTries-1)
			}
		})
	}
}

// TestRetrierStopsWithContext: a caller whose context ends while waiting to retry
// gets the context's error at once, not ErrContention after the remaining retries.
func TestRetrierStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	tries := 0
	err := retrier{max: 100, observer: nopObserver{}}.do(ctx, func() (bool, error) {
		tries++
		cancel()
		return true, nil
	})
	if !errors.Is(err, context.Canceled) || tries != 1 {
		t.Errorf("do = %v after %d attempts, want context.Canceled after 1", err, tries)
	}
}

func TestBackoffDelay(t *testing.T) {
	for attempt := range 100 {
		d := backoffDelay(attempt)
		top := min(backoffBase<<min(attempt, 30), backoffMax)
		if d < top/2 || d > top {
			t.Errorf("attempt %d: delay %v outside [%v, %v]", attempt, d, top/2, top)
		}
	}
}
