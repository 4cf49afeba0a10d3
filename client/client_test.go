package client_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"

	"github.com/seqd/seqd"
	"github.com/seqd/seqd/blocks"
	"github.com/seqd/seqd/client"
)

func TestNewRefusesBadConfiguration(t *testing.T) {
	for _, tc := range []struct {
		name string
		url  string
		opts []client.Option
	}{
		{"no scheme", "localhost:8080", nil},
		{"ftp", "ftp://localhost", nil},
		{"no host", "http://", nil},
		{"query", "http://localhost/?a=b", nil},
		{"fragment", "http://localhost/#x", nil},
		{"user", "http://u:p@localhost/", nil},
		{"not a URL", "http://[::1", nil},
		{"empty token", "http://localhost", []client.Option{client.WithToken("")}},
		{"token with a newline", "http://localhost", []client.Option{client.WithToken("a\nb")}},
		{"nil HTTP client", "http://localhost", []client.Option{client.WithHTTPClient(nil)}},
		{"block above MaxCount", "http://localhost", []client.Option{client.WithCache(blocks.Options{MaxBlock: seqd.MaxCount + 1})}},
		{"min above max", "http://localhost", []client.Option{client.WithCache(blocks.Options{MinBlock: 10, MaxBlock: 5})}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := client.New(tc.url, tc.opts...)
			if err == nil {
				t.Fatalf("New(%q) = %v, want an error", tc.url, c)
			}
		})
	}
}

func TestNextNextNCurrent(t *testing.T) {
	s := newSeqd(t)
	// A path prefix with a trailing slash, as behind a proxy: the test server
	// answers any path, so strip the prefix for it.
	proxy := httptest.NewServer(http.StripPrefix("/seqd", s.Config.Handler))
	t.Cleanup(proxy.Close)
	ctx := t.Context()
	for _, base := range []string{s.URL, proxy.URL + "/seqd/"} {
		c := newClient(t, base)
		name := "orders"
		if base != s.URL {
			name = "invoices"
		}
		for want := int64(1); want <= 3; want++ {
			v, err := c.Next(ctx, name)
			if err != nil || v != want {
				t.Fatalf("Next(%q) at %s = %d, %v; want %d", name, base, v, err, want)
			}
		}
		r, err := c.NextN(ctx, name, 10)
		if err != nil || r != (seqd.Range{First: 4, Last: 13}) {
			t.Fatalf("NextN(10) = %+v, %v; want 4..13", r, err)
		}
		cur, err := c.Current(ctx, name)
		want := seqd.Sequence{Name: name, Value: 13, Mode: seqd.ModeStrict}
		if err != nil || cur != want {
			t.Fatalf("Current = %+v, %v; want %+v", cur, err, want)
		}
	}
}

// Current reads a cached sequence's block bounds and counts.
func TestCurrentOfACachedSequence(t *testing.T) {
	s := newSeqd(t)
	want := seqd.Sequence{Name: "c", Value: 5000, Mode: seqd.ModeCached, MinBlock: 10, MaxBlock: 1000,
		Blocks: seqd.BlockCounts{Reserved: 5000, Served: 4000, Returned: 100}}
	s.seq.StoreSequence(want)
	got, err := newClient(t, s.URL).Current(t.Context(), "c")
	if err != nil || got != want {
		t.Fatalf("Current = %+v, %v; want %+v", got, err, want)
	}
}

func TestTokenIsSent(t *testing.T) {
	s := newSeqd(t, withTokens("secret-1"))
	ctx := t.Context()
	if v, err := newClient(t, s.URL, client.WithToken("secret-1")).Next(ctx, "a"); err != nil || v != 1 {
		t.Fatalf("with the token: Next = %d, %v; want 1", v, err)
	}
	_, err := newClient(t, s.URL).Next(ctx, "a")
	var e *client.Error
	if !errors.As(err, &e) || e.Status != http.StatusUnauthorized || e.Code != "unauthorized" || errors.Unwrap(e) != nil {
		t.Fatalf("without the token: Next = %v; want a 401 unauthorized *Error wrapping nothing", err)
	}
	_, err = newClient(t, s.URL, client.WithToken("secret-2")).Next(ctx, "a")
	if !errors.As(err, &e) || e.Code != "unauthorized" {
		t.Fatalf("with another token: Next = %v; want unauthorized", err)
	}
}

func TestInvalidNameMakesNoRequest(t *testing.T) {
	s := newSeqd(t)
	ctx := t.Context()
	for _, opts := range [][]client.Option{nil, {client.WithCache(blocks.Options{})}} {
		c := newClient(t, s.URL, opts...)
		for _, name := range []string{"", "-x", "a/b", strings.Repeat("a", 65), "é"} {
			if _, err := c.Next(ctx, name); !errors.Is(err, seqd.ErrInvalidName) {
				t.Errorf("Next(%q) = %v; want ErrInvalidName", name, err)
			}
			if _, err := c.NextN(ctx, name, 2); !errors.Is(err, seqd.ErrInvalidName) {
				t.Errorf("NextN(%q) = %v; want ErrInvalidName", name, err)
			}
			if _, err := c.Current(ctx, name); !errors.Is(err, seqd.ErrInvalidName) {
				t.Errorf("Current(%q) = %v; want ErrInvalidName", name, err)
			}
		}
	}
	if n := s.requests.Load(); n != 0 {
		t.Fatalf("seqd got %d requests; want none", n)
	}
}

func TestClosedClient(t *testing.T) {
	s := newSeqd(t)
	ctx := t.Context()
	c, err := client.New(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(ctx); err != nil {
		t.Fatalf("Close = %v", err)
	}
	if _, err := c.Next(ctx, "a"); !errors.Is(err, client.ErrClosed) {
		t.Errorf("Next after Close = %v; want ErrClosed", err)
	}
	if _, err := c.Current(ctx, "a"); !errors.Is(err, client.ErrClosed) {
		t.Errorf("Current after Close = %v; want ErrClosed", err)
	}
	if err := c.Close(ctx); err != nil {
		t.Errorf("second Close = %v; want nil", err)
	}
	if n := s.requests.Load(); n != 0 {
		t.Fatalf("seqd got %d requests; want none", n)
	}
}

// The client must stay usable by programs that want neither the MongoDB driver
// nor Echo.
func TestDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/seqd/seqd/client").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"go.mongodb.org/", "github.com/labstack/", "github.com/seqd/seqd/counters"} {
			if strings.HasPrefix(dep, banned) {
				t.Errorf("client depends on %s", dep)
			}
		}
	}
}
