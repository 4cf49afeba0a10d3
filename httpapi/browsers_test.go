package httpapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seqd/seqd/counters"
	"github.com/seqd/seqd/httpapi"
)

func withHosts(listen string, allowed ...string) func(*httpapi.Config) {
	return func(c *httpapi.Config) { c.ListenAddr, c.AllowedHosts = listen, allowed }
}

// DNS rebinding: a page under the attacker's name reaches seqd on loopback, and
// its requests carry that name in Host. seqd answers only the names it serves.
func TestHostCheck(t *testing.T) {
	s := newServer(t, withHosts("127.0.0.1:8080", "seqd.internal", "other.internal:9000"))
	s.counter.Store("orders", 1)
	for _, c := range []struct {
		host, target string
		want         int
	}{
		{"rebind.attacker.example", "/seq", http.StatusMisdirectedRequest},
		{"rebind.attacker.example:8080", "/seq/orders/next", http.StatusMisdirectedRequest},
		{"example.com", "/oid", http.StatusMisdirectedRequest},
		{"localhost.attacker.example", "/status", http.StatusMisdirectedRequest},
		{"rebind.attacker.example", "/metrics", http.StatusMisdirectedRequest},
		{"rebind.attacker.example", "/openapi.json", http.StatusMisdirectedRequest},
		{"rebind.attacker.example", "/no-such-route", http.StatusMisdirectedRequest},
		{"localhost:8080", "/seq", http.StatusOK},
		{"LOCALHOST.:8080", "/seq", http.StatusOK},
		{"127.0.0.1:8080", "/seq", http.StatusOK},
		{"[::1]:8080", "/seq", http.StatusOK},
		{"10.1.2.3:8080", "/seq", http.StatusOK}, // an address: no name to rebind
		{"seqd.internal:8080", "/seq", http.StatusOK},
		{"Seqd.Internal", "/seq", http.StatusOK},
		{"other.internal:8080", "/seq", http.StatusOK}, // an allowed name's port is not checked
		// Probes come by address or any name.
		{"rebind.attacker.example", "/healthz", http.StatusOK},
		{"rebind.attacker.example", "/readyz", http.StatusOK},
	} {
		req := newRequest(http.MethodGet, c.target, "")
		req.Host = c.host
		rec := s.serve(t, req)
		if rec.Code != c.want {
			t.Errorf("GET %s, Host %s: %d, want %d; %s", c.target, c.host, rec.Code, c.want, rec.Body)
			continue
		}
		if c.want == http.StatusMisdirectedRequest {
			wantError(t, rec, c.want, "misdirected_host")
		}
	}
	if v, _ := s.counter.Value("orders"); v != 1 {
		t.Errorf("orders at %d after the refused requests, want 1", v)
	}

	any := newServer(t, withHosts("127.0.0.1:8080", "*"))
	req := newRequest(http.MethodGet, "/oid", "")
	req.Host = "anything.example"
	if rec := any.serve(t, req); rec.Code != http.StatusOK {
		t.Errorf("--allowed-hosts '*': %d, want 200", rec.Code)
	}
}

// A page on another site may send a "simple" request (no preflight): a POST of
// text/plain, or a GET from an <img>. What spends or changes a value refuses it
// when the browser says where it comes from.
func TestCrossSiteRequestsRefused(t *testing.T) {
	s := newServer(t, withAdmin(adminToken))
	s.counter.Store("orders", 1)
	cross := [][]string{
		{"Origin", "http://attacker.example", "Content-Type", "text/plain"},
		{"Sec-Fetch-Site", "cross-site"},
		{"Sec-Fetch-Site", "same-site"}, // another port or subdomain: another origin
		{"Origin", "null"},
		{"Origin", "http://example.com:8081"},
	}
	for _, h := range cross {
		for _, m := range []string{http.MethodPost, http.MethodGet} {
			wantError(t, s.serve(t, newRequest(m, "/seq/orders/next", "", h...)), http.StatusForbidden, "cross_site")
		}
		put := newRequest(http.MethodPut, "/seq/orders", `{"value":5}`, append([]string{"Content-Type", "application/json", "Authorization", "Bearer " + adminToken}, h...)...)
		wantError(t, s.serve(t, put), http.StatusForbidden, "cross_site")
	}
	if v, _ := s.counter.Value("orders"); v != 1 {
		t.Fatalf("orders at %d after cross-site requests, want 1", v)
	}
	// The browser's own same-origin requests, and clients that are no browser, go on.
	for _, h := range [][]string{
		nil,
		{"Sec-Fetch-Site", "same-origin"},
		{"Sec-Fetch-Site", "none"},
		{"Origin", "http://example.com"},
	} {
		if rec := s.serve(t, newRequest(http.MethodPost, "/seq/orders/next", "", h...)); rec.Code != http.StatusOK {
			t.Errorf("POST with %q: %d, want 200; %s", h, rec.Code, rec.Body)
		}
	}
	// Reading is not spending: the status page follows its own links.
	if rec := s.get(t, "/seq/orders", "Sec-Fetch-Site", "cross-site"); rec.Code != http.StatusOK {
		t.Errorf("a cross-site GET /seq/orders: %d, want 200", rec.Code)
	}
}

func TestSecurityHeaders(t *testing.T) {
	s := newServer(t)
	for _, target := range []string{"/oid", "/seq/nope", "/status", "/healthz", "/metrics", "/openapi.json", "/no-such-route"} {
		rec := s.get(t, target)
		if got := rec.Header().Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("GET %s (%d): X-Content-Type-Options %q, want nosniff", target, rec.Code, got)
		}
		want := ""
		if target == "/status" {
			want = "no-referrer"
		}
		if got := rec.Header().Get("Referrer-Policy"); got != want {
			t.Errorf("GET %s: Referrer-Policy %q, want %q", target, got, want)
		}
	}
}

// A flood of /readyz costs the store one ping a second, not one a request.
func TestReadyzPingsOnceASecond(t *testing.T) {
	var pings atomic.Int64
	s := newServer(t, func(c *httpapi.Config) {
		c.ReadyInterval = 0 // the default
		c.Ping = func(context.Context) error { pings.Add(1); return nil }
	})
	start := time.Now()
	const requests = 300
	for range requests {
		if rec := s.get(t, "/readyz"); rec.Code != http.StatusOK {
			t.Fatalf("/readyz: %d", rec.Code)
		}
	}
	elapsed := time.Since(start)
	if max := 1 + int64(elapsed/time.Second); pings.Load() > max {
		t.Errorf("%d /readyz in %v pinged the store %d times, want at most %d", requests, elapsed, pings.Load(), max)
	}
}

// The optimistic strategy makes a collection a name: past the bound, a new name
// is refused (409) and makes none, while names that exist keep serving.
func TestOptimisticSequenceLimit(t *testing.T) {
	var s *server
	s = newServer(t, func(c *httpapi.Config) {
		c.MaxOptimistic = 3
		c.CountOptimistic = func(ctx context.Context) (int, error) {
			p, err := s.optimistic.List(ctx, counters.ListOptions{Limit: 1000})
			return len(p.Sequences), err
		}
	}, withAdmin(adminToken))
	for _, name := range []string{"a", "b", "c"} {
		if rec := s.get(t, "/seq/"+name+"/next?strategy=optimistic"); rec.Code != http.StatusOK {
			t.Fatalf("new name %s within the bound: %d; %s", name, rec.Code, rec.Body)
		}
	}
	wantError(t, s.get(t, "/seq/d/next?strategy=optimistic"), http.StatusConflict, "sequence_limit")
	put := newRequest(http.MethodPut, "/seq/e?strategy=optimistic", `{"value":5}`, "Content-Type", "application/json", "Authorization", "Bearer "+adminToken)
	wantError(t, s.serve(t, put), http.StatusConflict, "sequence_limit")
	for _, name := range []string{"d", "e"} {
		if _, ok := s.optimistic.Value(name); ok {
			t.Errorf("the refused %s was created", name)
		}
	}
	if rec := s.get(t, "/seq/a/next?strategy=optimistic"); rec.Code != http.StatusOK {
		t.Errorf("an existing name at the bound: %d", rec.Code)
	}
	// The counter strategy makes no collection a name: not bounded here.
	if rec := s.get(t, "/seq/d/next"); rec.Code != http.StatusOK {
		t.Errorf("a new counter at the optimistic bound: %d", rec.Code)
	}
}

// Browsers send Fetch Metadata (Sec-Fetch-Site) only to potentially trustworthy
// URLs: https, localhost, loopback addresses (web-platform-tests
// fetch/metadata: "Not sent to non-trustworthy cross-site destination"). To seqd
// on a LAN address over plain http (the Dockerfile's SEQD_ADDR=0.0.0.0:8080, an
// IP address, which hostCheck serves), a page's <img src=…/seq/orders/next
// referrerpolicy=no-referrer> arrives with neither Sec-Fetch-Site nor Origin
// (no Origin on a no-cors GET): it is still a browser's, and must not spend a
// value. Browsers from before Fetch Metadata (Safari before 16.4) send the same
// to loopback.
func TestCrossSiteGetWithoutFetchMetadata(t *testing.T) {
	s := newServer(t, withHosts("0.0.0.0:8080"))
	s.counter.Store("orders", 1)
	for _, h := range [][]string{
		{ // <img>
			"User-Agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
			"Accept", "image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8",
		},
		{ // a link followed, or window.open
			"User-Agent", "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0",
			"Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
			"Upgrade-Insecure-Requests", "1",
		},
	} {
		req := newRequest(http.MethodGet, "/seq/orders/next", "", h...)
		req.Host = "192.0.2.10:8080"
		if rec := s.serve(t, req); rec.Code == http.StatusOK {
			t.Errorf("a browser's cross-site GET /seq/orders/next without Fetch Metadata (%s): 200, spent a value", h[3])
		}
	}
	if v, _ := s.counter.Value("orders"); v != 1 {
		t.Errorf("orders at %d after cross-site GETs, want 1", v)
	}
}

// --allowed-hosts '*' turns the API's Host check off, for a proxy in front of it
// that checks names itself. The side listeners (--metrics-addr, --pprof-addr)
// are not behind that proxy: CheckHost keeps its check for them, so that a page
// that rebinds its name to their private address still reads nothing. Named
// hosts, the address, localhost and IP addresses stay served.
func TestCheckHostIgnoresAnyHost(t *testing.T) {
	served := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("seqd_values_issued_total 42\n")) })
	h := httpapi.CheckHost("127.0.0.1:9090", []string{"*", "seqd.internal"}, served)
	for _, c := range []struct {
		host string
		want int
	}{
		{"rebind.attacker.example", http.StatusMisdirectedRequest},
		{"rebind.attacker.example:9090", http.StatusMisdirectedRequest},
		{"seqd.internal:9090", http.StatusOK},
		{"localhost:9090", http.StatusOK},
		{"127.0.0.1:9090", http.StatusOK},
		{"[::1]:9090", http.StatusOK},
	} {
		req := newRequest(http.MethodGet, "/metrics", "")
		req.Host = c.host
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != c.want {
			t.Errorf("GET /metrics, Host %s, allowed hosts * and seqd.internal: %d, want %d; %s", c.host, rec.Code, c.want, rec.Body)
		}
	}
}

// A page on another site can ask Chromium to load a URL ahead of a navigation
// that may never come (<script type="speculationrules">, prefetch or prerender).
// Chromium 156 sends that load to seqd on loopback as Sec-Fetch-Site: none,
// Sec-Fetch-Mode: navigate, Sec-Fetch-Dest: document, as if the user had typed
// the address, and marks it Sec-Purpose: prefetch (prefetch;prerender): seen from
// a page at http://192.0.2.2 with seqd on 127.0.0.1, tokens off, which spent 3
// values of orders. A speculative load is never its user's request: it must not
// spend a value, nor get the status page (with a browser's saved Basic
// credentials, a prerender loads the listing); the address typed still does.
func TestSpeculativeLoadsRefused(t *testing.T) {
	keys, err := httpapi.NewKeyring([]httpapi.Token{{Secret: clientToken}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	open := newServer(t)
	open.counter.Store("orders", 41)
	page := newServer(t, func(c *httpapi.Config) { c.Keys = keys })
	page.counter.Store("tenant-b.secret", 1)
	r, _ := http.NewRequest(http.MethodGet, "/", nil)
	r.SetBasicAuth("ops", clientToken)
	basic := r.Header.Get("Authorization")
	// What Chromium 156 sent, but its client hints and Referer.
	header := func(purpose string) []string {
		h := []string{
			"User-Agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36",
			"Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8",
			"Sec-Fetch-Site", "none", "Sec-Fetch-Mode", "navigate", "Sec-Fetch-Dest", "document",
			"Upgrade-Insecure-Requests", "1",
		}
		if purpose != "" {
			h = append(h, "Sec-Purpose", purpose)
		}
		return h
	}
	serve := func(s *server, target string, h ...string) *httptest.ResponseRecorder {
		req := newRequest(http.MethodGet, target, "", h...)
		req.Host = "127.0.0.1:8080"
		return s.serve(t, req)
	}
	for _, purpose := range []string{"prefetch", "prefetch;prerender"} {
		if rec := serve(open, "/seq/orders/next", header(purpose)...); rec.Code != http.StatusForbidden {
			t.Errorf("GET /seq/orders/next, Sec-Purpose %s (another site's speculation rules): %d %s, want 403 cross_site", purpose, rec.Code, rec.Body)
		}
		if rec := serve(page, "/status?prefix=tenant-b.s&limit=1", append(header(purpose), "Authorization", basic)...); rec.Code != http.StatusForbidden {
			t.Errorf("GET /status with the page's Basic credentials, Sec-Purpose %s: %d, want 403 cross_site", purpose, rec.Code)
		}
	}
	if v, _ := open.counter.Value("orders"); v != 41 {
		t.Errorf("orders at %d after speculative loads, want 41", v)
	}
	if rec := serve(page, "/status?prefix=tenant-b.s&limit=1", append(header(""), "Authorization", basic)...); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "secret") {
		t.Errorf("GET /status typed in the address bar: %d, want the page", rec.Code)
	}
	// A GET typed in the address bar may be loaded again from the tab's history
	// by another site's page (TestHistoryBackDoesNotSpend): a browser POSTs.
	if rec := serve(open, "/seq/orders/next", header("")...); rec.Code != http.StatusForbidden {
		t.Errorf("GET /seq/orders/next typed in the address bar: %d %s, want 403 cross_site", rec.Code, rec.Body)
	}
}
