package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/seqd/seqd"
)

// MaxAttempts bounds the requests one call makes when seqd answers 503 or 429.
const MaxAttempts = 5

// Without a Retry-After, the waits between attempts start at firstBackoff and
// double up to maxBackoff.
const (
	firstBackoff = 100 * time.Millisecond
	maxBackoff   = 2 * time.Second
)

// maxAnswer bounds what the client reads of an answer: seqd's are a few hundred
// bytes, and anything much longer is not seqd's.
const maxAnswer = 64 << 10

// fetchNumbered is fetch that also returns the period and formatted values
// of a numbered sequence.
func (c *Client) fetchNumbered(ctx context.Context, name string, n int64) (seqd.Numbered, error) {
	var a nextAnswer
	path := "/seq/" + url.PathEscape(name) + "/next?count=" + strconv.FormatInt(n, 10)
	if err := c.ask(ctx, http.MethodPost, path, &a); err != nil {
		return seqd.Numbered{}, fmt.Errorf("client: next %d of %q: %w", n, name, err)
	}
	r, err := a.valuesOf(name, n)
	if err != nil {
		return seqd.Numbered{}, fmt.Errorf("client: next %d of %q: %w", n, name, err)
	}
	return seqd.Numbered{Range: r, Period: a.Period, Formatted: a.Formatted, FormattedFirst: a.FormattedFirst}, nil
}

// fetch reserves n values of name with one call of POST /seq/{name}/next?count=n:
// the request of NextN without the cache, and the cache's blocks.Fetch.
func (c *Client) fetch(ctx context.Context, name string, n int64) (seqd.Range, error) {
	r, err := c.fetchNumbered(ctx, name, n)
	return r.Range, err
}

// ask sends method path and decodes seqd's JSON answer into v. It asks again on
// 503 and 429, which seqd answered, as the package comment says; never after an
// error of the request itself, whose answer, if any, was lost.
func (c *Client) ask(ctx context.Context, method, path string, v any) error {
	for attempt := 1; ; attempt++ {
		status, h, body, err := c.roundTrip(ctx, method, path)
		if err != nil {
			return err
		}
		if status == http.StatusOK {
			if err := json.Unmarshal(body, v); err != nil {
				return notSeqd(status, h, body, "the body is not the JSON expected")
			}
			return nil
		}
		refused := errorAnswer(status, h, body)
		if (status != http.StatusServiceUnavailable && status != http.StatusTooManyRequests) || attempt == MaxAttempts {
			return refused
		}
		d := retryDelay(h.Get("Retry-After"), attempt, time.Now())
		if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < d {
			return refused // waiting could only end in the deadline
		}
		if err := c.wait(ctx, d); err != nil {
			return fmt.Errorf("%w (stopped waiting to ask again: %w)", refused, err)
		}
	}
}

// roundTrip makes one request and reads its answer.
//
// A POST goes without a body, without GetBody and without an Idempotency-Key
// header: net/http's Transport then never sends it again on its own once any of
// it was written (Request.isReplayable), as it does a GET whose reused
// connection closed before the answer.
func (c *Client) roundTrip(ctx context.Context, method, path string) (int, http.Header, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, nil)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("%w: %w", seqd.ErrUnavailable, err)
	}
	req.Header.Set("Accept", "application/json")
	if c.auth != "" {
		req.Header.Set("Authorization", c.auth)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("%w: no answer from seqd: %w", seqd.ErrUnavailable, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return 0, nil, nil, fmt.Errorf("%w: reading seqd's answer (%d): %w", seqd.ErrUnavailable, resp.StatusCode, err)
	}
	if len(body) > maxAnswer {
		return 0, nil, nil, notSeqd(resp.StatusCode, resp.Header, body, fmt.Sprintf("more than %d bytes", maxAnswer))
	}
	return resp.StatusCode, resp.Header, body, nil
}

// retryDelay is how long to wait before attempt+1: what Retry-After asks (seconds
// or an HTTP date), else a backoff that doubles with each attempt.
func retryDelay(retryAfter string, attempt int, now time.Time) time.Duration {
	if retryAfter != "" {
		if s, err := strconv.ParseInt(retryAfter, 10, 64); err == nil && s >= 0 {
			if s > int64(maxRetryAfter/time.Second) {
				return maxRetryAfter
			}
			return time.Duration(s) * time.Second
		}
		if t, err := http.ParseTime(retryAfter); err == nil {
			return min(max(t.Sub(now), 0), maxRetryAfter)
		}
	}
	d := firstBackoff << (attempt - 1)
	if d > maxBackoff || d <= 0 {
		return maxBackoff
	}
	return d
}

// maxRetryAfter caps a Retry-After, so that a duration does not overflow; a call
// without a deadline may wait that long.
const maxRetryAfter = time.Hour

// sleep waits d, or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// nextAnswer is POST /seq/{name}/next's answer.
type nextAnswer struct {
	Name  string `json:"name"`
	Value int64  `json:"value"`
	First int64  `json:"first"`
	Count int64  `json:"count"`
	// A numbered sequence's
	Period         string `json:"period"`
	Formatted      string `json:"formatted"`
	FormattedFirst string `json:"formatted_first"`
}

// valuesOf checks that a answers a request for n values of name, and returns them.
func (a nextAnswer) valuesOf(name string, n int64) (seqd.Range, error) {
	r := seqd.Range{First: a.First, Last: a.Value}
	if a.Name != name || a.First < 1 || a.Count < 1 || a.Count > n || r.Count() != a.Count {
		return seqd.Range{}, fmt.Errorf("%w: seqd's answer is not %d values of %q: name %q, first %d, value %d, count %d",
			seqd.ErrUnavailable, n, name, a.Name, a.First, a.Value, a.Count)
	}
	return r, nil
}

// sequenceAnswer is GET /seq/{name}'s answer.
type sequenceAnswer struct {
	Name     string    `json:"name"`
	Value    *int64    `json:"value"`
	Mode     seqd.Mode `json:"mode"`
	MinBlock int64     `json:"min_block"`
	MaxBlock int64     `json:"max_block"`
	Blocks   struct {
		Reserved int64 `json:"reserved"`
		Served   int64 `json:"served"`
		Returned int64 `json:"returned"`
	} `json:"blocks"`
	StrictFrom time.Time `json:"strict_from"`

	Period        string `json:"period"`
	TimeZone      string `json:"time_zone"`
	Format        string `json:"format"`
	CurrentPeriod string `json:"current_period"`
}

// sequence checks that s describes name, and returns it.
func (s sequenceAnswer) sequence(name string) (seqd.Sequence, error) {
	if s.Name != name || s.Value == nil || *s.Value < 0 {
		return seqd.Sequence{}, fmt.Errorf("%w: seqd's answer does not describe %q", seqd.ErrUnavailable, name)
	}
	mode := s.Mode
	if mode == "" { // a seqd that predates modes: every sequence is strict
		mode = seqd.ModeStrict
	}
	return seqd.Sequence{
		Name: name, Value: *s.Value, Mode: mode, MinBlock: s.MinBlock, MaxBlock: s.MaxBlock,
		Blocks:     seqd.BlockCounts{Reserved: s.Blocks.Reserved, Served: s.Blocks.Served, Returned: s.Blocks.Returned},
		StrictFrom: s.StrictFrom,
		Period:     s.Period, TimeZone: s.TimeZone, Format: s.Format, PeriodKey: s.CurrentPeriod,
	}, nil
}

// page is one page of GET /seq, checked.
type page struct {
	Sequences []seqd.Sequence
	Next      string
}

// listPage asks seqd for the page of names that start with prefix, after after.
func (c *Client) listPage(ctx context.Context, prefix, after string) (page, error) {
	q := url.Values{"limit": {strconv.Itoa(listPage)}}
	if prefix != "" {
		q.Set("prefix", prefix)
	}
	if after != "" {
		q.Set("after", after)
	}
	var a listAnswer
	if err := c.ask(ctx, http.MethodGet, "/seq?"+q.Encode(), &a); err != nil {
		return page{}, err
	}
	return a.page(prefix, after)
}

// listAnswer is GET /seq's answer.
type listAnswer struct {
	Sequences []struct {
		sequenceAnswer
		Error *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	} `json:"sequences"`
	Next string `json:"next"`
}

// page checks that a is a page of the names that start with prefix, after after:
// at most the page size, each such a name, in ascending order, and a next that is
// the last of them, so that a walk moves forward and ends. It returns the page.
func (a listAnswer) page(prefix, after string) (page, error) {
	p := page{Sequences: make([]seqd.Sequence, 0, len(a.Sequences)), Next: a.Next}
	bad := func(why string) (page, error) {
		return page{}, fmt.Errorf("%w: seqd's answer is not a page of the names after %q that start with %q: %s",
			seqd.ErrUnavailable, after, prefix, why)
	}
	if len(a.Sequences) > listPage {
		return bad(fmt.Sprintf("%d sequences, more than the %d asked for", len(a.Sequences), listPage))
	}
	prev := after
	for _, e := range a.Sequences {
		if e.Name <= prev || !strings.HasPrefix(e.Name, prefix) {
			return bad(fmt.Sprintf("%q after %q", e.Name, prev))
		}
		prev = e.Name
		if e.Error != nil {
			// The error a request for the sequence gets: invalid_counter is a 500.
			err := &Error{Status: http.StatusInternalServerError, Code: e.Error.Code, Message: e.Error.Message}
			p.Sequences = append(p.Sequences, seqd.Sequence{Name: e.Name, Err: err})
			continue
		}
		s, err := e.sequence(e.Name)
		if err != nil {
			return page{}, err
		}
		p.Sequences = append(p.Sequences, s)
	}
	if a.Next != "" && a.Next != prev {
		return bad(fmt.Sprintf("next %q, not the page's last name %q", a.Next, prev))
	}
	if a.Next != "" && len(a.Sequences) == 0 {
		return bad("an empty page with a next")
	}
	return p, nil
}
