package client_test

import (
	"errors"
	"testing"

	"github.com/seqd/seqd"
	"github.com/seqd/seqd/httpapi"
	"github.com/seqd/seqd/snowflake"
)

func withSnowflake(t testing.TB) serverOption {
	g, err := snowflake.NewGenerator(snowflake.JS53, 4)
	if err != nil {
		t.Fatal(err)
	}
	return func(c *httpapi.Config, _ *serverWrap) { c.Snowflake = g }
}

func TestSnowflakes(t *testing.T) {
	s := newSeqd(t, withSnowflake(t))
	c := newClient(t, s.URL)
	ids, err := c.Snowflakes(t.Context(), 100)
	if err != nil || len(ids) != 100 {
		t.Fatalf("Snowflakes(100) = %d ids, %v", len(ids), err)
	}
	for i, id := range ids {
		p, err := snowflake.JS53.Decode(snowflake.ID(id))
		if err != nil || p.Worker != 4 || i > 0 && id <= ids[i-1] {
			t.Fatalf("id %d = %d (%+v, %v): want worker 4, above the one before", i, id, p, err)
		}
	}
	for _, n := range []int{0, 10001} {
		if _, err := c.Snowflakes(t.Context(), n); !errors.Is(err, seqd.ErrInvalidCount) {
			t.Errorf("Snowflakes(%d) = %v, want ErrInvalidCount", n, err)
		}
	}
}

// TestSnowflakesWithoutWorker: an instance holding no worker id answers 503,
// which the client asks again and then returns as unavailable.
func TestSnowflakesWithoutWorker(t *testing.T) {
	s := newSeqd(t, withRetryAfter("0"))
	c := newClient(t, s.URL)
	if _, err := c.Snowflakes(t.Context(), 1); !errors.Is(err, seqd.ErrUnavailable) {
		t.Errorf("Snowflakes without a worker id = %v, want ErrUnavailable", err)
	}
	if n := s.requests.Load(); n < 2 {
		t.Errorf("%d requests, want the 503 asked again", n)
	}
}
