package counters

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"
)

// retrier is the one retry loop of both strategies. A duplicate key error (E11000)
// means another writer got there first; the next attempt, after a short wait, usually
// succeeds. max bounds the retries of one call, so that a caller under heavy
// contention gets ErrContention rather than waiting without end.
type retrier struct {
	max      int
	strategy string // for Observer.Retry
	observer Observer
}

// do calls try until it asks for no retry, and returns try's last error. Each retry
// is reported to the Observer and waits backoffDelay first. Past r.max retries do
// returns ErrContention; if ctx ends while waiting, ctx.Err().
func (r retrier) do(ctx context.Context, try func() (retry bool, err error)) error {
	for attempt := 0; ; attempt++ {
		retry, err := try()
		if !retry {
			return err
		}
		if attempt >= r.max {
			return fmt.Errorf("%w: %d duplicate key retries", ErrContention, attempt)
		}
		r.observer.Retry(r.strategy)
		if err := backoff(ctx, attempt); err != nil {
			return err
		}
	}
}

// Retry delays grow from backoffBase and stop growing at backoffMax. Duplicate key
// retries are usually settled by the next attempt (the winner's document now exists),
// so the first waits are short. The random half spreads writers that collided
// once, so they do not collide again in step.
const (
	backoffBase = time.Millisecond
	backoffMax  = 50 * time.Millisecond
)

// backoffDelay is the wait before retry number attempt (0-based): a random duration
// in [d/2, d], with d = min(backoffBase·2^attempt, backoffMax).
func backoffDelay(attempt int) time.Duration {
	d := backoffMax
	if attempt < 16 {
		d = min(backoffBase<<attempt, backoffMax)
	}
	return d/2 + rand.N(d/2+1)
}

// backoff waits before retry number attempt, or returns ctx.Err() if ctx ends first.
func backoff(ctx context.Context, attempt int) error {
	t := time.NewTimer(backoffDelay(attempt))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
