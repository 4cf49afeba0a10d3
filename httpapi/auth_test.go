package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/seqd/seqd/counters"
	"github.com/seqd/seqd/httpapi"
	"github.com/seqd/seqd/internal/memseq"
)

func TestAuth(t *testing.T) {
	type check struct {
		method, target, auth string // auth is the Authorization header, if any
		status               int
		code                 string // for errors
	}
	put := func(auth string, status int, code string) check {
		return check{http.MethodPut, "/seq/orders", auth, status, code}
	}
	const (
		client = "Bearer " + clientToken
		admin  = "Bearer " + adminToken
	)
	open := []check{
		{"GET", "/healthz", "", 200, ""},
		{"GET", "/readyz", "", 200, ""},
		{"GET", "/openapi.json", "", 200, ""},
		{"GET", "/healthz", "Bearer wrong", 200, ""},
	}
	// /metrics totals every client's traffic: open while the API is, else an
	// admin token's (of every name) only.
	metricsOpen := check{"GET", "/metrics", "", 200, ""}
	tests := []struct {
		name   string
		config []func(*httpapi.Config)
		checks []check
	}{
		{
			name:   "client and admin tokens",
			config: []func(*httpapi.Config){withTokens(clientToken, clientToken2), withAdmin(adminToken)},
			checks: append([]check{
				{"GET", "/oid", "", 401, "unauthorized"},
				{"GET", "/oid", "Bearer wrong", 401, "unauthorized"},
				{"GET", "/oid", "Bearer ", 401, "unauthorized"},
				{"GET", "/oid", "Bearer", 401, "unauthorized"},
				{"GET", "/oid", "Basic x", 401, "unauthorized"},
				{"GET", "/oid", "Basic " + clientToken, 401, "unauthorized"},
				{"GET", "/oid", clientToken, 401, "unauthorized"},
				{"GET", "/oid", "Bearer " + clientToken + "x", 401, "unauthorized"},
				{"GET", "/oid", "Bearer " + clientToken[:len(clientToken)-1], 401, "unauthorized"},
				{"GET", "/oid", client, 200, ""},
				{"GET", "/oid", "Bearer " + clientToken2, 200, ""},
				{"GET", "/oid", "bearer " + clientToken, 200, ""}, // the scheme is case-insensitive
				{"GET", "/oid", admin, 200, ""},
				{"GET", "/oid?count=2", "", 401, "unauthorized"},
				{"GET", "/oid/5a17b9d9ab102555b9c38874", "", 401, "unauthorized"},
				{"GET", "/oid/5a17b9d9ab102555b9c38874", client, 200, ""},
				{"GET", "/oid/at/0", "", 401, "unauthorized"},
				{"GET", "/oid/at/0", client, 200, ""},
				{"GET", "/seq/orders/next", "", 401, "unauthorized"},
				{"POST", "/seq/orders/next", "Bearer wrong", 401, "unauthorized"},
				{"GET", "/seq/orders/next", client, 200, ""},
				{"POST", "/seq/orders/next", admin, 200, ""},
				{"GET", "/seq/orders", "", 401, "unauthorized"},
				{"GET", "/seq/orders", client, 200, ""},
				{"GET", "/seq", "", 401, "unauthorized"},
				{"GET", "/seq", client, 200, ""},
				{"GET", "/seq/orders/status", "", 401, "unauthorized"},
				{"GET", "/seq/orders/status", "Bearer wrong", 401, "unauthorized"},
				{"GET", "/seq/orders/status", client, 200, ""},
				{"GET", "/status", "", 401, "unauthorized"},
				{"GET", "/status", "Bearer wrong", 401, "unauthorized"},
				{"GET", "/status", client, 200, ""},
				{"GET", "/status", admin, 200, ""},
				// Authentication comes before input checks: nothing leaks to strangers.
				{"GET", "/seq/-bad-/next", "", 401, "unauthorized"},
				{"GET", "/oid?count=0", "", 401, "unauthorized"},
				put("", 401, "unauthorized"),
				put("Bearer wrong", 401, "unauthorized"),
				put(client, 403, "forbidden"),
				put(admin, 200, ""),
				{"GET", "/metrics", "", 401, "unauthorized"},
				{"GET", "/metrics", client, 403, "forbidden"},
				{"GET", "/metrics", admin, 200, ""},
			}, open...),
		},
		{
			name:   "client tokens, no admin token",
			config: []func(*httpapi.Config){withTokens(clientToken)},
			checks: append([]check{
				{"GET", "/oid", "", 401, "unauthorized"},
				{"GET", "/oid", client, 200, ""},
				put("", 403, "admin_disabled"),
				put(client, 403, "admin_disabled"),
				put("Bearer "+adminToken, 403, "admin_disabled"),
				{"GET", "/metrics", client, 403, "forbidden"},
			}, open...),
		},
		{
			name:   "admin token only",
			config: []func(*httpapi.Config){withAdmin(adminToken)},
			checks: append([]check{
				{"GET", "/oid", "", 200, ""},
				{"GET", "/seq/orders/next", "", 200, ""},
				{"GET", "/seq/orders/next", "Bearer anything", 200, ""},
				put("", 401, "unauthorized"),
				put("Bearer wrong", 401, "unauthorized"),
				put(admin, 200, ""),
				metricsOpen,
			}, open...),
		},
		{
			name: "no tokens",
			checks: append([]check{
				{"GET", "/oid", "", 200, ""},
				{"GET", "/seq/orders/next", "", 200, ""},
				{"GET", "/seq/orders/status", "", 200, ""},
				{"GET", "/status", "", 200, ""},
				put("", 403, "admin_disabled"),
				put("Bearer ", 403, "admin_disabled"),
				metricsOpen,
			}, open...),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, tt.config...)
			for _, c := range tt.checks {
				var body string
				header := []string{}
				if c.method == http.MethodPut {
					body = `{"value":5}`
					header = append(header, "Content-Type", "application/json")
				}
				if c.auth != "" {
					header = append(header, "Authorization", c.auth)
				}
				rec := s.serve(t, newRequest(c.method, c.target, body, header...))
				if c.code != "" {
					if rec.Code != c.status {
						t.Errorf("%s %s with %q: status %d, want %d", c.method, c.target, c.auth, rec.Code, c.status)
						continue
					}
					wantError(t, rec, c.status, c.code)
				} else if rec.Code != c.status {
					t.Errorf("%s %s with %q: status %d, want %d; %s", c.method, c.target, c.auth, rec.Code, c.status, rec.Body)
				}
			}
		})
	}
}

// TestAuthRefusalsTouchNothing checks that refused requests never reach a sequencer.
func TestAuthRefusalsTouchNothing(t *testing.T) {
	s := newServer(t, withTokens(clientToken), withAdmin(adminToken))
	s.counter.Store("orders", 10)
	reqs := []struct{ method, target, auth string }{
		{"GET", "/seq/orders/next", ""},
		{"POST", "/seq/orders/next?count=5", "Bearer nope"},
		{"PUT", "/seq/orders?force=true", "Bearer " + clientToken},
		{"PUT", "/seq/orders?force=true", ""},
		{"GET", "/seq/orders/status", ""},
		{"GET", "/status", "Bearer nope"},
	}
	for _, r := range reqs {
		header := []string{"Content-Type", "application/json"}
		if r.auth != "" {
			header = append(header, "Authorization", r.auth)
		}
		rec := s.serve(t, newRequest(r.method, r.target, `{"value":1}`, header...))
		if rec.Code != http.StatusUnauthorized && rec.Code != http.StatusForbidden {
			t.Errorf("%s %s with %q: status %d, want 401 or 403", r.method, r.target, r.auth, rec.Code)
		}
	}
	if calls := s.counter.Calls(); len(calls) != 0 {
		t.Errorf("refused requests reached the sequencer: %+v", calls)
	}
	if v, _ := s.counter.Value("orders"); v != 10 {
		t.Errorf("orders = %d after refused requests, want 10", v)
	}
}

// TestTokensNotLogged checks that the access log carries the request id and
// status but never the Authorization header.
func TestTokensNotLogged(t *testing.T) {
	s := newServer(t, withTokens(clientToken), withAdmin(adminToken))
	ok := s.get(t, "/oid", "Authorization", "Bearer "+clientToken)
	s.get(t, "/oid", "Authorization", "Bearer "+adminToken+"-wrong")
	s.put(t, "/seq/orders", `{"value":1}`)

	logs := s.logs.String()
	for _, secret := range []string{clientToken, adminToken} {
		if strings.Contains(logs, secret) {
			t.Errorf("the log holds a token:\n%s", logs)
		}
	}
	id := ok.Header().Get("X-Request-Id")
	if id == "" {
		t.Fatal("no X-Request-Id on the response")
	}
	if !strings.Contains(logs, `"request_id":"`+id+`"`) || !strings.Contains(logs, `"status":401`) {
		t.Errorf("the log lacks the request id %s or the 401:\n%s", id, logs)
	}
}

// A PUT to a seqd without an admin token says how to start one with it, in both
// ways a user starts seqd: the variable (which make run passes on) and the file.
func TestAdminDisabledSaysHow(t *testing.T) {
	s := newServer(t)
	e := wantError(t, s.put(t, "/seq/orders", `{"value":1}`), http.StatusForbidden, "admin_disabled")
	for _, want := range []string{"SEQD_ADMIN_TOKEN=… make run", "--admin-token-file", "SEQD_ADMIN_TOKEN_FILE"} {
		if !strings.Contains(e.Message, want) {
			t.Errorf("admin_disabled says %q: it does not name %s", e.Message, want)
		}
	}
}

// A token that is empty is a mistake (Tokens: strings.Split(os.Getenv("TOKENS"),
// ",") with TOKENS unset is []string{""}), and it must not read as "no client
// tokens", which opens the client routes to anyone: New and NewKeyring refuse
// it, as seqd refuses SEQD_TOKENS set to a blank list. An AdminToken left empty
// still means no admin token.
func TestEmptyTokenRefused(t *testing.T) {
	for _, tokens := range [][]string{{""}, {"", ""}} {
		h, err := httpapi.New(httpapi.Config{Sequencers: []counters.Sequencer{memseq.New(counters.StrategyCounter)}, Ping: (&fakePing{}).ping, Tokens: tokens})
		if err == nil {
			rec := httptest.NewRecorder()
			req := newRequest(http.MethodGet, "/seq", "")
			req.Host = "localhost"
			h.ServeHTTP(rec, req)
			t.Errorf("New with Tokens %q: no error; GET /seq without a token answers %d, want New to fail", tokens, rec.Code)
		}
	}
	for _, clients := range [][]httpapi.Token{{{Secret: ""}}, {{Secret: "ok-token"}, {Secret: ""}}} {
		if _, err := httpapi.NewKeyring(clients, nil); err == nil {
			t.Errorf("NewKeyring with %d client tokens, one empty: no error", len(clients))
		}
	}
	if _, err := httpapi.NewKeyring(nil, []httpapi.Token{{Secret: ""}}); err == nil {
		t.Error("NewKeyring with an empty admin token: no error")
	}
	if _, err := httpapi.New(httpapi.Config{Sequencers: []counters.Sequencer{memseq.New(counters.StrategyCounter)}, Ping: (&fakePing{}).ping, Tokens: []string{clientToken}}); err != nil {
		t.Errorf("New with a client token and no AdminToken: %v", err)
	}
}

// TestScopedAdminAloneRefused: an admin token with a scope and no client token
// would leave the client routes open to anyone, every tenant's sequences
// included, while the admin keeps to its scope; README's Tenants says that is
// refused. Keyring refuses it, as seqd's token files do, also when Set would put
// it in force in place of client tokens while serving.
func TestScopedAdminAloneRefused(t *testing.T) {
	scope, err := httpapi.ParseScope("tenant-a.*")
	if err != nil {
		t.Fatal(err)
	}
	scopedAdmin := []httpapi.Token{{Secret: adminToken, Scope: scope}}
	if k, err := httpapi.NewKeyring(nil, scopedAdmin); err == nil {
		s := newServer(t, func(c *httpapi.Config) { c.Keys = k })
		rec := s.serve(t, newRequest(http.MethodPost, "/seq/tenant-b.orders/next", ""))
		t.Errorf("NewKeyring with a scoped admin token and no client token: no error; POST /seq/tenant-b.orders/next without a token answers %d, want NewKeyring to fail", rec.Code)
	}

	k, err := httpapi.NewKeyring([]httpapi.Token{{Secret: clientToken, Scope: scope}}, scopedAdmin)
	if err != nil {
		t.Fatal(err)
	}
	s := newServer(t, func(c *httpapi.Config) { c.Keys = k })
	if err := k.Set(nil, scopedAdmin); err == nil {
		t.Error("Keyring.Set with a scoped admin token and no client token: no error")
	}
	if rec := s.serve(t, newRequest(http.MethodPost, "/seq/tenant-b.orders/next", "")); rec.Code != http.StatusUnauthorized {
		t.Errorf("after the refused Set, POST /seq/tenant-b.orders/next without a token answers %d, want 401: the client token must stay in force", rec.Code)
	}

	if _, err := httpapi.NewKeyring(nil, []httpapi.Token{{Secret: adminToken}}); err != nil {
		t.Errorf("NewKeyring with an admin token of every name alone: %v, want it allowed (SEQD_ADMIN_TOKEN=… make run)", err)
	}
}

// TestZeroKeyringRefused: a Keyring not made by NewKeyring holds no tokens in
// force, not "no tokens": New refuses it, rather than serve every request to a
// client route, /status and /metrics a 500.
func TestZeroKeyringRefused(t *testing.T) {
	h, err := httpapi.New(httpapi.Config{Sequencers: []counters.Sequencer{memseq.New(counters.StrategyCounter)}, Ping: (&fakePing{}).ping, Keys: &httpapi.Keyring{}})
	if err == nil {
		rec := httptest.NewRecorder()
		req := newRequest(http.MethodGet, "/seq", "")
		req.Host = "localhost"
		h.ServeHTTP(rec, req)
		t.Errorf("New with a zero Keyring: no error; GET /seq answers %d, want New to fail", rec.Code)
	}
}
