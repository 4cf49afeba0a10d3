package client

import (
	"context"
	"time"
)

// SetWait replaces the pause between attempts, so that a test sees the waits
// asked for without spending them.
func SetWait(c *Client, wait func(ctx context.Context, d time.Duration) error) { c.wait = wait }

// RetryDelay is retryDelay, for its own test.
var RetryDelay = retryDelay
