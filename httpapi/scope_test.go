package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/seqd/seqd/counters"
	"github.com/seqd/seqd/httpapi"
	"github.com/seqd/seqd/internal/memseq"
)

// Tokens of the tenant tests: two tenants with an admin each, a reader of both
// and of one shared sequence, and an unscoped reader.
const (
	tenantA     = "token-tenant-a"
	tenantB     = "token-tenant-b"
	tenantBoth  = "token-tenants-a-b"
	reader      = "token-reader"
	tenantAdmA  = "token-admin-a"
	tenantAdmB  = "token-admin-b"
	tenantAdmin = "token-admin-all"
)

func scope(t testing.TB, patterns ...string) httpapi.Scope {
	t.Helper()
	s, err := httpapi.ParseScope(patterns...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// tenantKeys is the tenant example's keyring.
func tenantKeys(t testing.TB) *httpapi.Keyring {
	t.Helper()
	k, err := httpapi.NewKeyring([]httpapi.Token{
		{Secret: tenantA, Scope: scope(t, "tenant-a.*")},
		{Secret: tenantB, Scope: scope(t, "tenant-b.*", "shared")},
		{Secret: tenantBoth, Scope: scope(t, "tenant-b.*", "tenant-a.*", "shared")},
		{Secret: reader},
	}, []httpapi.Token{
		{Secret: tenantAdmA, Scope: scope(t, "tenant-a.*")},
		{Secret: tenantAdmB, Scope: scope(t, "tenant-b.*")},
		{Secret: tenantAdmin, Scope: scope(t, "*")},
	})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func withKeys(k *httpapi.Keyring) func(*httpapi.Config) {
	return func(c *httpapi.Config) { c.Keys = k }
}

// TestScopes is the table of who may do what: each token on each route that names
// a sequence, for a name in and out of its scope, stored or not. Outside the scope
// the answer is 403 forbidden whether or not the name exists, it says nothing of
// the name, and the request never reaches the sequencer.
func TestScopes(t *testing.T) {
	type route struct {
		method, path      string // path has %s for the name
		admin             bool   // needs an admin token
		stored, notStored int    // the status in scope
		body              string
	}
	routes := []route{
		{method: "GET", path: "/seq/%s/next", stored: 200, notStored: 200},
		{method: "POST", path: "/seq/%s/next?count=3", stored: 200, notStored: 200},
		{method: "GET", path: "/seq/%s", stored: 200, notStored: 404},
		{method: "GET", path: "/seq/%s/status", stored: 200, notStored: 404},
		{method: "PUT", path: "/seq/%s", admin: true, stored: 200, notStored: 200, body: `{"value":50}`},
	}
	// in and out are names in and outside the token's scope; the stored ones end in
	// ".1" (or are "shared"), the others in ".new".
	tokens := []struct {
		token   string
		admin   bool
		in, out []string
	}{
		{tenantA, false, []string{"tenant-a.1", "tenant-a.new"}, []string{"tenant-b.1", "tenant-b.new", "shared", "tenant-a", "tenant-ab.1"}},
		{tenantB, false, []string{"tenant-b.1", "tenant-b.new", "shared"}, []string{"tenant-a.1", "tenant-a.new", "shared.new"}},
		{tenantBoth, false, []string{"tenant-a.1", "tenant-b.new", "shared"}, []string{"other.1", "other.new"}},
		{reader, false, []string{"tenant-a.1", "tenant-b.new", "other.1"}, nil},
		{tenantAdmA, true, []string{"tenant-a.1", "tenant-a.new"}, []string{"tenant-b.1", "tenant-b.new", "shared"}},
		{tenantAdmB, true, []string{"tenant-b.1", "tenant-b.new"}, []string{"tenant-a.1", "shared", "other.new"}},
		{tenantAdmin, true, []string{"tenant-a.1", "shared", "other.new"}, nil},
	}
	stored := []string{"tenant-a.1", "tenant-b.1", "shared", "other.1", "tenant-ab.1", "tenant-a"}
	for _, tk := range tokens {
		for _, r := range routes {
			for _, in := range []bool{true, false} {
				names := tk.in
				if !in {
					names = tk.out
				}
				for _, name := range names {
					exists := slices.Contains(stored, name)
					want, code := r.notStored, ""
					switch {
					case !in:
						want, code = http.StatusForbidden, "forbidden"
					case r.admin && !tk.admin:
						want, code = http.StatusForbidden, "forbidden"
					case exists:
						want = r.stored
					}
					t.Run(fmt.Sprintf("%s/%s %s/%s", tk.token, r.method, r.path, name), func(t *testing.T) {
						s := newServer(t, withKeys(tenantKeys(t)))
						for _, n := range stored {
							s.counter.Store(n, 10)
						}
						header := []string{"Authorization", "Bearer " + tk.token}
						if r.body != "" {
							header = append(header, "Content-Type", "application/json")
						}
						rec := s.serve(t, newRequest(r.method, fmt.Sprintf(r.path, name), r.body, header...))
						if rec.Code != want {
							t.Fatalf("status %d, want %d (in scope %v, stored %v); %s", rec.Code, want, in, exists, rec.Body)
						}
						if code != "" {
							e := wantError(t, rec, want, code)
							if strings.Contains(e.Message, name) {
								t.Errorf("the refusal names the sequence: %q", e.Message)
							}
						}
						if !in {
							if calls := s.counter.Calls(); len(calls) != 0 {
								t.Errorf("a name outside the scope reached the sequencer: %+v", calls)
							}
						}
					})
				}
			}
		}
	}
}

// Routes that name no sequence take any valid token, whatever its scope; an
// invalid name is 400 whatever the scope (it is no one's sequence).
func TestScopesElsewhere(t *testing.T) {
	s := newServer(t, withKeys(tenantKeys(t)))
	for _, token := range []string{tenantA, tenantB, tenantAdmA, reader} {
		for _, path := range []string{"/oid", "/oid?count=3", "/oid/at/0", "/uuid", "/uuid/at/0", "/seq", "/status"} {
			if rec := s.get(t, path, "Authorization", "Bearer "+token); rec.Code != http.StatusOK {
				t.Errorf("%s with %s: %d, want 200; %s", path, token, rec.Code, rec.Body)
			}
		}
		wantError(t, s.get(t, "/seq/-bad-/next", "Authorization", "Bearer "+token), http.StatusBadRequest, "invalid_name")
		wantError(t, s.get(t, "/oid", "Authorization", "Bearer "+token+"x"), http.StatusUnauthorized, "unauthorized")
	}
	wantError(t, s.get(t, "/seq/tenant-a.1/next"), http.StatusUnauthorized, "unauthorized")
}

// walkScoped follows next through GET /seq with token, prefix and limit, and returns the names in order.
func walkScoped(t *testing.T, s *server, token, prefix string, limit int) []string {
	t.Helper()
	var names []string
	after := ""
	for range 1000 {
		q := url.Values{"limit": {strconv.Itoa(limit)}}
		if prefix != "" {
			q.Set("prefix", prefix)
		}
		if after != "" {
			q.Set("after", after)
		}
		p := decodeList(t, s.get(t, "/seq?"+q.Encode(), "Authorization", "Bearer "+token))
		if len(p.Sequences) > limit || (p.HasNext && (len(p.Sequences) == 0 || p.Next != p.Sequences[len(p.Sequences)-1].Name)) {
			t.Fatalf("%s with %s: page %+v breaks the contract", q.Encode(), token, p)
		}
		for _, e := range p.Sequences {
			if len(names) > 0 && e.Name <= names[len(names)-1] {
				t.Fatalf("%s with %s: %q after %q", q.Encode(), token, e.Name, names[len(names)-1])
			}
			names = append(names, e.Name)
		}
		if !p.HasNext {
			return names
		}
		after = p.Next
	}
	t.Fatalf("more than 1000 pages")
	return nil
}

// GET /seq lists only the names in the token's scope, page by page, whatever the
// page size and prefix; /status shows only them too.
func TestScopedListing(t *testing.T) {
	s := newServer(t, withKeys(tenantKeys(t)))
	var all []string
	for _, tenant := range []string{"tenant-a.", "tenant-b.", "tenant-c.", "tenant-"} {
		for i := range 7 {
			all = append(all, fmt.Sprintf("%s%d", tenant, i))
		}
	}
	all = append(all, "shared", "shared.x", "sharedy", "a", "z")
	for _, name := range all {
		s.counter.Store(name, 1)
	}
	slices.Sort(all)
	scopes := map[string]httpapi.Scope{
		tenantA:     scope(t, "tenant-a.*"),
		tenantB:     scope(t, "tenant-b.*", "shared"),
		tenantBoth:  scope(t, "tenant-b.*", "tenant-a.*", "shared"),
		reader:      scope(t),
		tenantAdmA:  scope(t, "tenant-a.*"),
		tenantAdmin: scope(t),
	}
	for token, sc := range scopes {
		for _, prefix := range []string{"", "tenant-", "tenant-a.", "tenant-a.3", "tenant-b", "s", "shared", "x"} {
			var want []string
			for _, name := range all {
				if sc.Allows(name) && strings.HasPrefix(name, prefix) {
					want = append(want, name)
				}
			}
			for _, limit := range []int{1, 2, 3, 6, 7, 8, 100} {
				if got := walkScoped(t, s, token, prefix, limit); !slices.Equal(got, want) {
					t.Errorf("%s, prefix %q, limit %d: listed %q, want %q", token, prefix, limit, got, want)
				}
			}
		}
	}
	page := s.get(t, "/status?limit=1000", "Authorization", "Bearer "+tenantB).Body.String()
	for _, name := range all {
		if in := strings.Contains(page, ">"+name+"<"); in != scopes[tenantB].Allows(name) {
			t.Errorf("/status with tenant B's token: %s shown %v", name, in)
		}
	}
}

// Nothing leaks: after every kind of refused request, neither /metrics nor the
// access log holds a token or a name outside the caller's scope.
func TestScopesLeakNothing(t *testing.T) {
	s := newServer(t, withKeys(tenantKeys(t)), withRateLimit(1000))
	s.counter.Store("tenant-b.secret-plan", 1)
	for _, r := range []struct{ method, path, token string }{
		{"GET", "/seq/tenant-b.secret-plan/next", tenantA},
		{"POST", "/seq/tenant-b.secret-plan/next", tenantA},
		{"GET", "/seq/tenant-b.secret-plan", tenantA},
		{"GET", "/seq/tenant-b.secret-plan/status", tenantA},
		{"PUT", "/seq/tenant-b.secret-plan", tenantAdmA},
		{"PUT", "/seq/tenant-b.secret-plan", tenantA},
		{"GET", "/seq?prefix=tenant-b.", tenantA},
		{"GET", "/status?after=tenant-b.", tenantA},
		{"GET", "/seq/tenant-b.secret-plan/next", tenantA + "-wrong"},
	} {
		s.serve(t, newRequest(r.method, r.path, `{"value":1}`, "Content-Type", "application/json", "Authorization", "Bearer "+r.token))
	}
	for _, sm := range scrape(t, s, "Authorization", "Bearer "+tenantAdmin) {
		for k, v := range sm.labels {
			if strings.Contains(v, "secret-plan") || strings.Contains(v, "token-") {
				t.Errorf("metric %s has label %s=%q", sm.name, k, v)
			}
		}
	}
	logs := s.logs.String()
	if strings.Contains(logs, "secret-plan") || strings.Contains(logs, "token-") {
		t.Errorf("the log holds a token or a name outside the caller's scope:\n%s", logs)
	}
	if !strings.Contains(logs, `"path":"/seq/:name/next","status":403`) {
		t.Errorf("the log does not show the refusal by its route:\n%s", logs)
	}
}

// Rate limits stay per token: one tenant's token spending its burst leaves the
// other's whole.
func TestScopedRateLimitPerToken(t *testing.T) {
	s := newServer(t, withKeys(tenantKeys(t)), withRateLimit(2))
	for range 2 {
		if rec := s.get(t, "/oid", "Authorization", "Bearer "+tenantA); rec.Code != http.StatusOK {
			t.Fatalf("tenant A within its burst: %d", rec.Code)
		}
	}
	wantError(t, s.get(t, "/oid", "Authorization", "Bearer "+tenantA), http.StatusTooManyRequests, "too_many_requests")
	if rec := s.get(t, "/oid", "Authorization", "Bearer "+tenantB); rec.Code != http.StatusOK {
		t.Errorf("tenant B after tenant A's burst: %d, want 200", rec.Code)
	}
}

// Keyring.Set changes the tokens at once: a request in flight finishes under the
// token and scope it arrived with, even if that token is gone; the next request
// with it is refused, and a token that stays serves throughout.
func TestKeyringSetInFlight(t *testing.T) {
	keys := tenantKeys(t)
	s := newServer(t, withKeys(keys))
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	s.counter.FailFunc(func(ctx context.Context) error {
		once.Do(func() { close(entered) })
		<-release
		return nil
	})
	done := make(chan int)
	go func() {
		rec := s.serve(t, newRequest("GET", "/seq/tenant-a.1/next", "", "Authorization", "Bearer "+tenantA))
		done <- rec.Code
	}()
	<-entered
	// tenant A's token goes; tenant B's scope moves to tenant-a.
	if err := keys.Set([]httpapi.Token{
		{Secret: tenantB, Scope: scope(t, "tenant-a.*")},
		{Secret: reader},
	}, nil); err != nil {
		t.Fatal(err)
	}
	s.counter.FailFunc(nil)
	close(release)
	if code := <-done; code != http.StatusOK {
		t.Errorf("the request in flight: %d, want 200", code)
	}
	wantError(t, s.get(t, "/seq/tenant-a.1/next", "Authorization", "Bearer "+tenantA), http.StatusUnauthorized, "unauthorized")
	wantError(t, s.get(t, "/seq/tenant-b.1/next", "Authorization", "Bearer "+tenantB), http.StatusForbidden, "forbidden")
	if rec := s.get(t, "/seq/tenant-a.1/next", "Authorization", "Bearer "+tenantB); rec.Code != http.StatusOK {
		t.Errorf("tenant B's token in its new scope: %d", rec.Code)
	}
	if rec := s.get(t, "/seq/any/next", "Authorization", "Bearer "+reader); rec.Code != http.StatusOK {
		t.Errorf("the reader, in force before and after: %d", rec.Code)
	}
	// No admin token any more: PUT is disabled.
	wantError(t, s.put(t, "/seq/tenant-a.1", `{"value":1}`), http.StatusForbidden, "admin_disabled")
}

// Keys replaces Tokens and AdminToken: both at once is an error.
func TestConfigKeysAndTokens(t *testing.T) {
	_, err := httpapi.New(httpapi.Config{
		Sequencers: []counters.Sequencer{memseq.New(counters.StrategyCounter)},
		Ping:       func(context.Context) error { return nil },
		Keys:       tenantKeys(t),
		Tokens:     []string{"more"},
	})
	if err == nil {
		t.Error("Keys and Tokens both set: no error")
	}
}
