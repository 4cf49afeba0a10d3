package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/seqd/seqd/httpapi"
)

// withRateLimit sets a rate so low that no token comes back during a test: each
// client gets exactly burst requests.
func withRateLimit(burst int) func(*httpapi.Config) {
	return func(c *httpapi.Config) {
		c.RateLimit = 0.0001
		c.RateBurst = burst
	}
}

func TestRateLimitPerToken(t *testing.T) {
	s := newServer(t, withTokens(clientToken, clientToken2), withAdmin(adminToken), withRateLimit(2))
	get := func(target, token string) *http.Response {
		t.Helper()
		return s.get(t, target, "Authorization", "Bearer "+token).Result()
	}
	for i := range 2 {
		if code := get("/oid", clientToken).StatusCode; code != http.StatusOK {
			t.Fatalf("request %d within the burst: status %d", i+1, code)
		}
	}
	wantError(t, s.get(t, "/seq/orders/next", "Authorization", "Bearer "+clientToken),
		http.StatusTooManyRequests, "too_many_requests")
	if calls := s.counter.Calls(); len(calls) != 0 {
		t.Errorf("a limited request reached the sequencer: %+v", calls)
	}

	// Another token has its own bucket; open endpoints have none; a stranger is
	// refused for the token, not the rate.
	if code := get("/oid", clientToken2).StatusCode; code != http.StatusOK {
		t.Errorf("another client: status %d, want 200", code)
	}
	for range 3 {
		if code := s.get(t, "/healthz").Code; code != http.StatusOK {
			t.Errorf("/healthz: status %d, want 200", code)
		}
	}
	wantError(t, s.get(t, "/oid", "Authorization", "Bearer wrong"), http.StatusUnauthorized, "unauthorized")
}

// Refused tokens count against the address they come from, so guessing tokens is
// limited like anything else.
func TestRateLimitGuessedTokens(t *testing.T) {
	s := newServer(t, withTokens(clientToken), withRateLimit(2))
	guess := func(token string) *http.Request {
		req := newRequest(http.MethodGet, "/oid", "", "Authorization", "Bearer "+token)
		req.RemoteAddr = "192.0.2.7:4000"
		return req
	}
	wantError(t, s.serve(t, guess("guess-1")), http.StatusUnauthorized, "unauthorized")
	wantError(t, s.serve(t, guess("guess-2")), http.StatusUnauthorized, "unauthorized")
	wantError(t, s.serve(t, guess("guess-3")), http.StatusTooManyRequests, "too_many_requests")
	// The real token has its own bucket, wherever it comes from.
	if code := s.serve(t, guess(clientToken)).Code; code != http.StatusOK {
		t.Errorf("a client token from the same address: status %d, want 200", code)
	}
}

func TestRateLimitPerAddress(t *testing.T) {
	s := newServer(t, withRateLimit(1))
	from := func(addr string, header ...string) *http.Request {
		req := newRequest(http.MethodGet, "/oid", "", header...)
		req.RemoteAddr = addr
		return req
	}
	if code := s.serve(t, from("192.0.2.1:1000")).Code; code != http.StatusOK {
		t.Fatalf("first request: status %d", code)
	}
	// Another port of the same host is the same client, whatever it claims.
	wantError(t, s.serve(t, from("192.0.2.1:2000")), http.StatusTooManyRequests, "too_many_requests")
	wantError(t, s.serve(t, from("192.0.2.1:3000", "X-Forwarded-For", "198.51.100.7", "X-Real-IP", "198.51.100.8")),
		http.StatusTooManyRequests, "too_many_requests")
	if code := s.serve(t, from("192.0.2.2:1000")).Code; code != http.StatusOK {
		t.Errorf("another address: status %d, want 200", code)
	}
}

func TestRateLimitOff(t *testing.T) {
	s := newServer(t) // RateLimit zero
	for i := range 50 {
		if code := s.get(t, "/oid").Code; code != http.StatusOK {
			t.Fatalf("request %d without a limit: status %d", i+1, code)
		}
	}
}
