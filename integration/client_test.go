//go:build integration

package integration

import (
	"errors"
	"net/http"
	"sync"
	"testing"

	"github.com/seqd/seqd"
	"github.com/seqd/seqd/blocks"
	"github.com/seqd/seqd/client"
	"github.com/seqd/seqd/internal/metrics"
)

// newSeqdClient returns a client of srv, closed when the test ends.
func newSeqdClient(t *testing.T, url string, opts ...client.Option) *client.Client {
	t.Helper()
	c, err := client.New(url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Close(testContext(t)); err != nil {
			t.Errorf("closing the client: %v", err)
		}
	})
	return c
}

// TestClient takes values and reads a sequence through the Go client, with the
// real program's tokens and errors.
func TestClient(t *testing.T) {
	srv := startSeqd(t, "SEQD_TOKENS="+clientToken)
	ctx := testContext(t)
	c := newSeqdClient(t, srv.URL(), client.WithToken(clientToken))

	if v, err := c.Next(ctx, "orders"); err != nil || v != 1 {
		t.Fatalf("Next = %d, %v; want 1", v, err)
	}
	if r, err := c.NextN(ctx, "orders", 1000); err != nil || r != (seqd.Range{First: 2, Last: 1001}) {
		t.Fatalf("NextN(1000) = %+v, %v; want 2..1001", r, err)
	}
	s, err := c.Current(ctx, "orders")
	if want := (seqd.Sequence{Name: "orders", Value: 1001, Mode: seqd.ModeStrict}); err != nil || s != want {
		t.Fatalf("Current = %+v, %v; want %+v", s, err, want)
	}

	var e *client.Error
	if _, err := c.Current(ctx, "never-used"); !errors.Is(err, seqd.ErrNotFound) || !errors.As(err, &e) || e.Status != 404 {
		t.Errorf("Current of a new name = %v; want a 404 wrapping ErrNotFound", err)
	}
	if _, err := c.NextN(ctx, "orders", seqd.MaxCount+1); !errors.Is(err, seqd.ErrInvalidCount) {
		t.Errorf("NextN above MaxCount = %v; want ErrInvalidCount", err)
	}
	anonymous := newSeqdClient(t, srv.URL())
	if _, err := anonymous.Next(ctx, "orders"); !errors.As(err, &e) || e.Code != "unauthorized" {
		t.Errorf("Next without the token = %v; want unauthorized", err)
	}
}

// TestClientCache has cached clients and a client without a cache share a
// sequence: every value is handed out once, each goroutine's values increase,
// and the cached clients make a request per block, not per value.
func TestClientCache(t *testing.T) {
	const clients, goroutines, each = 2, 4, 2000
	srv := startSeqd(t)
	ctx := testContext(t)
	cached := make([]*client.Client, clients)
	for i := range cached {
		cached[i] = newSeqdClient(t, srv.URL(), client.WithCache(blocks.Options{}))
	}
	plain := newSeqdClient(t, srv.URL())

	var mu sync.Mutex
	owner := make(map[int64]string)
	record := func(who string, values []int64) {
		mu.Lock()
		defer mu.Unlock()
		for _, v := range values {
			if prev, dup := owner[v]; dup {
				t.Errorf("%d handed out to %s and %s", v, prev, who)
			}
			owner[v] = who
		}
	}
	var wg sync.WaitGroup
	for i, c := range cached {
		for g := range goroutines {
			wg.Go(func() {
				values := make([]int64, 0, each)
				for range each {
					v, err := c.Next(ctx, "events")
					if err != nil {
						t.Error(err)
						return
					}
					if n := len(values); n > 0 && v <= values[n-1] {
						t.Errorf("cached client %d, goroutine %d: %d after %d", i, g, v, values[n-1])
					}
					values = append(values, v)
				}
				record("a cached client", values)
			})
		}
	}
	wg.Go(func() {
		for range 50 {
			r, err := plain.NextN(ctx, "events", 10)
			if err != nil {
				t.Error(err)
				return
			}
			values := make([]int64, 0, r.Count())
			for v := r.First; v <= r.Last; v++ {
				values = append(values, v)
			}
			record("the plain client", values)
		}
	})
	wg.Wait()
	if want := clients*goroutines*each + 50*10; len(owner) != want {
		t.Fatalf("%d values; want %d", len(owner), want)
	}

	var top int64
	for v := range owner {
		top = max(top, v)
	}
	s, err := plain.Current(ctx, "events")
	if err != nil || s.Value < top {
		t.Fatalf("Current = %+v, %v; want a value of at least %d, the largest handed out", s, err, top)
	}
	for i, c := range cached {
		st, ok := c.CacheStatus("events")
		if !ok || st.Served != goroutines*each {
			t.Fatalf("cached client %d: status %+v, %v; want %d served", i, st, ok, goroutines*each)
		}
		if st.Fetched < st.Served {
			t.Fatalf("cached client %d fetched %d values and served %d", i, st.Fetched, st.Served)
		}
	}
	// Blocks start at 100 values and only grow while they last under a minute.
	requests, err := metrics.Value(ctx, http.DefaultClient, srv.URL(), "seqd_http_requests_total", "url", "/seq/:name/next")
	if max := float64(50 + clients*goroutines*each/100); err != nil || requests > max {
		t.Fatalf("seqd answered %v requests for values (%v); want at most %v: the plain client's 50 and one per block of 100 or more", requests, err, max)
	}
	t.Logf("%v requests for %d values", requests, len(owner))
}
