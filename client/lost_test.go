package client_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/seqd/seqd"
	"github.com/seqd/seqd/blocks"
	"github.com/seqd/seqd/client"
)

// An answer lost on a reused connection is not asked for again, by the client or
// by net/http's Transport, which resends a GET there: the call fails, and the
// value seqd took for it is a gap, never a duplicate.
func TestLostAnswerIsNotAskedAgain(t *testing.T) {
	s := newSeqd(t, withLostAnswer(2))
	c := newClient(t, s.URL)
	var w waits
	client.SetWait(c, w.wait)
	ctx := t.Context()
	if v, err := c.Next(ctx, "s"); err != nil || v != 1 {
		t.Fatalf("first Next = %d, %v; want 1", v, err)
	}
	// The first answer, read to its end, left its connection idle: the second
	// request reuses it, and seqd closes it without answering.
	if v, err := c.Next(ctx, "s"); !errors.Is(err, seqd.ErrUnavailable) {
		t.Fatalf("second Next = %d, %v; want ErrUnavailable", v, err)
	}
	if n := s.requests.Load(); n != 2 {
		t.Fatalf("seqd got %d requests; want 2: the one whose answer was lost was sent again", n)
	}
	if len(w.asked()) != 0 {
		t.Fatalf("the client waited to ask again: %v", w.asked())
	}
	cur, err := c.Current(ctx, "s")
	if err != nil || cur.Value != 2 {
		t.Fatalf("Current = %+v, %v; want value 2: the lost answer's value taken, once", cur, err)
	}
	if v, err := c.Next(ctx, "s"); err != nil || v != 3 {
		t.Fatalf("third Next = %d, %v; want 3, after the gap of 2", v, err)
	}
}

// Every request that takes values is a POST, with the cache or without; reads
// stay GETs.
func TestValuesAreTakenWithPOST(t *testing.T) {
	s := newSeqd(t)
	var (
		mu      sync.Mutex
		methods = map[string][]string{} // by path
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		methods[r.URL.Path] = append(methods[r.URL.Path], r.Method)
		mu.Unlock()
		s.Config.Handler.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	ctx := t.Context()
	plain := newClient(t, srv.URL)
	if _, err := plain.Next(ctx, "plain"); err != nil {
		t.Fatalf("Next: %v", err)
	}
	if _, err := plain.NextN(ctx, "plain", 10); err != nil {
		t.Fatalf("NextN: %v", err)
	}
	if _, err := plain.Current(ctx, "plain"); err != nil {
		t.Fatalf("Current: %v", err)
	}
	cached := newClient(t, srv.URL, client.WithCache(blocks.Options{MinBlock: 5, MaxBlock: 5}))
	if _, err := cached.NextN(ctx, "cached", 3); err != nil {
		t.Fatalf("cached NextN: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, want := range []struct {
		path, method string
		atLeast      int // the cache may have prefetched a block too
	}{
		{"/seq/plain/next", http.MethodPost, 2},
		{"/seq/plain", http.MethodGet, 1},
		{"/seq/cached/next", http.MethodPost, 1},
	} {
		got := methods[want.path]
		if len(got) < want.atLeast || slices.ContainsFunc(got, func(m string) bool { return m != want.method }) {
			t.Errorf("%s came as %v; want %s, %d times or more", want.path, got, want.method, want.atLeast)
		}
	}
}

// A redirect that would turn the POST into a GET (net/http's rule for 301, 302
// and 303) is not followed: such a GET takes values, and may be sent twice.
func TestNoRedirectToAGET(t *testing.T) {
	s := newSeqd(t)
	var (
		mu   sync.Mutex
		gets int
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/old/seq/s/next" {
			http.Redirect(w, r, "/seq/s/next", http.StatusMovedPermanently)
			return
		}
		if r.Method == http.MethodGet {
			mu.Lock()
			gets++
			mu.Unlock()
		}
		s.Config.Handler.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	for _, tc := range []struct {
		name string
		opts []client.Option
	}{
		{"own HTTP client", nil},
		{"given HTTP client", []client.Option{client.WithHTTPClient(&http.Client{})}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient(t, srv.URL+"/old", tc.opts...)
			if v, err := c.Next(t.Context(), "s"); !errors.Is(err, seqd.ErrUnavailable) {
				t.Fatalf("Next = %d, %v; want ErrUnavailable", v, err)
			}
			mu.Lock()
			defer mu.Unlock()
			if gets != 0 {
				t.Fatalf("the redirect was followed with %d GETs", gets)
			}
		})
	}
}
