package client

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	"github.com/seqd/seqd"
)

// MaxSnowflakes is the most Snowflakes asks for in one request.
const MaxSnowflakes = 10000

// Snowflakes returns n new snowflake ids, 1 ≤ n ≤ MaxSnowflakes, strictly
// increasing, with one request (GET /snowflake?count=n). They are int64s, in the
// layout of the seqd instance that made them (its GET /snowflake/{id} decodes
// them; package snowflake decodes them in Go). A 503, as when the instance holds
// no worker id for a moment, is asked again as the package comment says:
// asking again is safe, since seqd never hands an id out twice.
func (c *Client) Snowflakes(ctx context.Context, n int) ([]int64, error) {
	if n < 1 || n > MaxSnowflakes {
		return nil, fmt.Errorf("client: %d snowflakes: %w: want 1 to %d", n, seqd.ErrInvalidCount, MaxSnowflakes)
	}
	if c.closed.Load() {
		return nil, fmt.Errorf("client: snowflakes: %w", ErrClosed)
	}
	var a struct {
		Snowflakes []int64 `json:"snowflakes"`
	}
	if err := c.ask(ctx, http.MethodGet, "/snowflake?count="+strconv.Itoa(n), &a); err != nil {
		return nil, fmt.Errorf("client: %d snowflakes: %w", n, err)
	}
	if len(a.Snowflakes) != n {
		return nil, fmt.Errorf("client: %d snowflakes: %w: seqd answered %d", n, seqd.ErrUnavailable, len(a.Snowflakes))
	}
	return a.Snowflakes, nil
}
