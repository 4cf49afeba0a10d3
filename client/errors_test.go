package client_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/seqd/seqd"
	"github.com/seqd/seqd/client"
)

// Every refusal seqd's handler makes comes back as an *Error with its code,
// wrapping the sentinel the library would return.
func TestErrorsFromSeqd(t *testing.T) {
	// A deadline closer than the Retry-After below: 503s are not asked again.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	type call func(c *client.Client) error
	next := func(c *client.Client) error { _, err := c.Next(ctx, "s"); return err }
	current := func(c *client.Client) error { _, err := c.Current(ctx, "s"); return err }
	for _, tc := range []struct {
		code   string
		status int
		want   error
		setup  func(s *seqdServer)
		call   call
	}{
		{"invalid_count", 400, seqd.ErrInvalidCount, nil,
			func(c *client.Client) error { _, err := c.NextN(ctx, "s", seqd.MaxCount+1); return err }},
		{"invalid_count", 400, seqd.ErrInvalidCount, nil,
			func(c *client.Client) error { _, err := c.NextN(ctx, "s", 0); return err }},
		{"sequence_not_found", 404, seqd.ErrNotFound, nil, current},
		{"exhausted", 409, seqd.ErrExhausted, func(s *seqdServer) { s.seq.Store("s", math.MaxInt64) }, next},
		// What the store reports, as the handler answers it.
		{"invalid_name", 400, seqd.ErrInvalidName, fails(seqd.ErrInvalidName), next},
		{"invalid_value", 400, seqd.ErrInvalidValue, fails(seqd.ErrInvalidValue), current},
		{"invalid_mode", 400, seqd.ErrInvalidMode, fails(seqd.ErrInvalidMode), current},
		{"backwards", 409, seqd.ErrBackwards, fails(seqd.ErrBackwards), next},
		{"contention", 503, seqd.ErrContention, fails(seqd.ErrContention), next},
		{"unavailable", 503, seqd.ErrUnavailable, fails(seqd.ErrUnavailable), current},
		{"invalid_counter", 500, seqd.ErrInvalidCounter, fails(seqd.ErrInvalidCounter), next},
	} {
		t.Run(tc.code, func(t *testing.T) {
			s := newSeqd(t, withRetryAfter("3600"))
			if tc.setup != nil {
				tc.setup(s)
			}
			c := newClient(t, s.URL)
			err := tc.call(c)
			var e *client.Error
			if !errors.As(err, &e) || e.Code != tc.code || e.Status != tc.status || e.Message == "" {
				t.Fatalf("got %v; want a %d %s *Error", err, tc.status, tc.code)
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v; want it to wrap %v", err, tc.want)
			}
		})
	}
}

// fails makes the store fail every call with err, wrapped as a strategy does.
func fails(err error) func(*seqdServer) {
	return func(s *seqdServer) { s.seq.FailWith(fmt.Errorf("counters: x: %w", err)) }
}

// Every code the API documents maps to its sentinel, including those the handler
// only answers for requests this client does not make.
func TestErrorCodes(t *testing.T) {
	for code, want := range map[string]error{
		"invalid_name":       seqd.ErrInvalidName,
		"invalid_count":      seqd.ErrInvalidCount,
		"sequence_not_found": seqd.ErrNotFound,
		"exhausted":          seqd.ErrExhausted,
		"backwards":          seqd.ErrBackwards,
		"contention":         seqd.ErrContention,
		"unavailable":        seqd.ErrUnavailable,
		"draining":           seqd.ErrDraining,
		"invalid_counter":    seqd.ErrInvalidCounter,
		"invalid_mode":       seqd.ErrInvalidMode,
		"invalid_value":      seqd.ErrInvalidValue,
		"unauthorized":       nil,
		"forbidden":          nil,
		"internal":           nil,
		"a_future_code":      nil,
	} {
		t.Run(code, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusTeapot)
				fmt.Fprintf(w, `{"error":{"code":%q,"message":"what seqd says"}}`, code)
			}))
			t.Cleanup(srv.Close)
			_, err := newClient(t, srv.URL).Next(t.Context(), "s")
			var e *client.Error
			if !errors.As(err, &e) || *e != (client.Error{Status: http.StatusTeapot, Code: code, Message: "what seqd says"}) {
				t.Fatalf("got %#v; want the answer as an *Error", err)
			}
			if got := e.Unwrap(); want == nil && len(got) != 0 || want != nil && !errors.Is(e, want) {
				t.Fatalf("Unwrap = %v; want %v", got, want)
			}
			if code == "draining" && !errors.Is(e, seqd.ErrUnavailable) {
				t.Fatalf("a draining answer is not ErrUnavailable: %v", e.Unwrap())
			}
			if !strings.Contains(err.Error(), code) || !strings.Contains(err.Error(), "what seqd says") {
				t.Fatalf("message %q does not name the code and seqd's message", err)
			}
		})
	}
}

// An answer that is not seqd's JSON, from a proxy or from something else on the
// port, wraps ErrUnavailable and says what came.
func TestAnswerNotFromSeqd(t *testing.T) {
	for _, tc := range []struct {
		name, contentType, body string
		status                  int
		says                    string
	}{
		{"proxy page", "text/html", "<html><body>Bad Gateway</body></html>", 502, "Bad Gateway"},
		{"200 in text", "text/plain", "hello", 200, "hello"},
		{"200 JSON of another service", "application/json", `{"id":1}`, 200, "not"},
		{"next answer that does not add up", "application/json", `{"name":"s","value":5,"first":1,"count":1}`, 200, "not 1 values"},
		{"error JSON without a code", "application/json", `{"error":"nope"}`, 500, "nope"},
		{"empty body", "", "", 500, "empty body"},
		{"long body", "text/plain", strings.Repeat("x", 100_000), 500, "bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.contentType != "" {
					w.Header().Set("Content-Type", tc.contentType)
				}
				w.WriteHeader(tc.status)
				fmt.Fprint(w, tc.body)
			}))
			t.Cleanup(srv.Close)
			_, err := newClient(t, srv.URL).Next(t.Context(), "s")
			if !errors.Is(err, seqd.ErrUnavailable) || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("got %v; want ErrUnavailable saying %q", err, tc.says)
			}
			if len(err.Error()) > 400 {
				t.Fatalf("message of %d bytes; want the answer cut short", len(err.Error()))
			}
		})
	}
}

func TestNoAnswer(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there now
	_, err := newClient(t, url).Next(t.Context(), "s")
	var e *client.Error
	if !errors.Is(err, seqd.ErrUnavailable) || errors.As(err, &e) {
		t.Fatalf("got %v; want ErrUnavailable and no *Error", err)
	}
}
