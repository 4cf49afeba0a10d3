package counters

import (
	"context"
	"math/rand/v2"
	"time"
)

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
