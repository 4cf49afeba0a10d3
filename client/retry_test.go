package client_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/seqd/seqd"
	"github.com/seqd/seqd/client"
)

// A 503 is asked again after the Retry-After seqd sends, and the values come.
func TestUnavailableIsAskedAgain(t *testing.T) {
	s := newSeqd(t)
	s.failFirst(2, seqd.ErrUnavailable)
	c := newClient(t, s.URL)
	var w waits
	client.SetWait(c, w.wait)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	r, err := c.NextN(ctx, "s", 5)
	if err != nil || r != (seqd.Range{First: 1, Last: 5}) {
		t.Fatalf("NextN = %+v, %v; want 1..5", r, err)
	}
	if got := w.asked(); !slices.Equal(got, []time.Duration{time.Second, time.Second}) {
		t.Fatalf("waits %v; want seqd's Retry-After (1s) twice", got)
	}
	if n := s.requests.Load(); n != 3 {
		t.Fatalf("%d requests; want 3", n)
	}
}

// A Retry-After that ends past the context's deadline returns the 503 at once,
// without waiting and without a second request.
func TestRetryAfterPastTheDeadline(t *testing.T) {
	s := newSeqd(t, withRetryAfter("3600"))
	s.seq.FailWith(seqd.ErrUnavailable)
	c := newClient(t, s.URL) // waits for real: it must not wait at all
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	_, err := c.Next(ctx, "s")
	var e *client.Error
	if !errors.As(err, &e) || e.Status != http.StatusServiceUnavailable || !errors.Is(err, seqd.ErrUnavailable) {
		t.Fatalf("Next = %v; want seqd's 503", err)
	}
	if ctx.Err() != nil {
		t.Fatal("Next returned at its deadline; want at once")
	}
	if n := s.requests.Load(); n != 1 {
		t.Fatalf("%d requests; want 1", n)
	}
}

// A store that stays down gets MaxAttempts requests, then its 503.
func TestAttemptsAreBounded(t *testing.T) {
	s := newSeqd(t)
	s.seq.FailWith(seqd.ErrContention)
	c := newClient(t, s.URL)
	var w waits
	client.SetWait(c, w.wait)
	_, err := c.Next(t.Context(), "s")
	if !errors.Is(err, seqd.ErrContention) {
		t.Fatalf("Next = %v; want ErrContention", err)
	}
	if n := s.requests.Load(); n != client.MaxAttempts {
		t.Fatalf("%d requests; want %d", n, client.MaxAttempts)
	}
	if n := len(w.asked()); n != client.MaxAttempts-1 {
		t.Fatalf("%d waits; want %d", n, client.MaxAttempts-1)
	}
}

// A 429 (rate limit) is asked again too: seqd did nothing with the request.
func TestRateLimitIsAskedAgain(t *testing.T) {
	s := newSeqd(t, withRateLimit(0.001, 1)) // one request, then none for a long while
	c := newClient(t, s.URL)
	var w waits
	client.SetWait(c, w.wait)
	ctx := t.Context()
	if _, err := c.Next(ctx, "s"); err != nil {
		t.Fatalf("first Next = %v", err)
	}
	_, err := c.Next(ctx, "s")
	var e *client.Error
	if !errors.As(err, &e) || e.Status != http.StatusTooManyRequests || e.Code != "too_many_requests" {
		t.Fatalf("second Next = %v; want seqd's 429", err)
	}
	if n := s.requests.Load(); n != 1+client.MaxAttempts {
		t.Fatalf("%d requests; want 1 + %d", n, client.MaxAttempts)
	}
	if got := w.asked(); len(got) != client.MaxAttempts-1 || got[0] != time.Second {
		t.Fatalf("waits %v; want %d of seqd's Retry-After (1s)", got, client.MaxAttempts-1)
	}
}

// A context that ends during the wait ends the call with the 503 and ctx's error.
func TestWaitEndsWithTheContext(t *testing.T) {
	s := newSeqd(t)
	s.seq.FailWith(seqd.ErrUnavailable)
	c := newClient(t, s.URL)
	ctx, cancel := context.WithCancel(t.Context())
	client.SetWait(c, func(context.Context, time.Duration) error {
		cancel()
		return ctx.Err()
	})
	_, err := c.Next(ctx, "s")
	var e *client.Error
	if !errors.As(err, &e) || e.Code != "unavailable" || !errors.Is(err, context.Canceled) {
		t.Fatalf("Next = %v; want the 503 and context.Canceled", err)
	}
}

// Errors other than 503 and 429 are answers: asking again would change nothing.
func TestRefusalsAreNotAskedAgain(t *testing.T) {
	s := newSeqd(t)
	s.seq.FailWith(seqd.ErrInvalidCounter) // a 500
	c := newClient(t, s.URL)
	var w waits
	client.SetWait(c, w.wait)
	if _, err := c.Next(t.Context(), "s"); !errors.Is(err, seqd.ErrInvalidCounter) {
		t.Fatalf("Next = %v; want ErrInvalidCounter", err)
	}
	if n := s.requests.Load(); n != 1 {
		t.Fatalf("%d requests; want 1", n)
	}
}

func TestRetryDelay(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		header  string
		attempt int
		want    time.Duration
	}{
		{"1", 1, time.Second},
		{"0", 3, 0},
		{"120", 1, 2 * time.Minute},
		{"99999999999999", 1, time.Hour}, // capped, not overflowed
		{now.Add(30 * time.Second).Format(http.TimeFormat), 1, 30 * time.Second},
		{now.Add(-time.Minute).Format(http.TimeFormat), 1, 0},
		{"", 1, 100 * time.Millisecond},
		{"", 2, 200 * time.Millisecond},
		{"soon", 3, 400 * time.Millisecond},
		{"-1", 1, 100 * time.Millisecond},
		{"", 10, 2 * time.Second},
		{"", 100, 2 * time.Second},
	} {
		if got := client.RetryDelay(tc.header, tc.attempt, now); got != tc.want {
			t.Errorf("retryDelay(%q, %d) = %v; want %v", tc.header, tc.attempt, got, tc.want)
		}
	}
}
