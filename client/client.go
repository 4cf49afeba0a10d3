// Package client is a Go client for seqd's HTTP API: it takes values of seqd's
// sequences (POST /seq/{name}/next), reads a sequence as stored (GET
// /seq/{name}), lists them a page at a time (GET /seq), and takes snowflake ids
// (GET /snowflake). It imports package seqd and the standard library, and package
// blocks for its local cache; never the MongoDB driver or Echo.
//
// # Errors
//
// seqd answers a refused request with {"error":{"code":…,"message":…}}. The
// client returns it as an *Error, which unwraps to the seqd sentinel of its code
// (sequence_not_found → seqd.ErrNotFound, exhausted → seqd.ErrExhausted, …), so
// both errors.Is and errors.As work. A network error, or an answer that is not
// seqd's JSON (a proxy's error page, say), wraps seqd.ErrUnavailable. A name that
// fails seqd.ValidName gets seqd.ErrInvalidName before any request is made.
//
// # Retries
//
// A 503 (seqd could not confirm with its store) or a 429 (a rate limit) is asked
// again after the Retry-After it carries (or a short backoff without one), at most
// MaxAttempts times in all, and only while the context's deadline leaves room for
// the wait: a Retry-After that ends past the deadline returns the 503 at once.
// Asking again for values is safe for their uniqueness: seqd never hands a value
// out twice, so a first request that did reserve values, though it could not say
// so, leaves a gap, never a duplicate.
//
// # Lost answers
//
// A request whose answer was lost on the network (a connection that broke, a
// timeout, a context that ended while seqd worked) is not asked again: the client
// cannot tell whether seqd took values for it, and its caller decides. Nothing
// below the client asks again either. A request that takes values is a POST
// without a body, GetBody or Idempotency-Key: net/http's Transport sends it again
// only if none of it was written, where it resends a GET whose reused connection
// closed before the answer; proxies that keep to HTTP's semantics do not retry it
// (RFC 9110, 9.2.2). A redirect that would turn it into a GET (net/http's rule
// for 301, 302 and 303) is not followed.
//
// What a lost answer costs is a gap, never a duplicate: the values seqd took for
// the request are never seen by the caller, and never handed out again, to
// anyone. Without the cache that is at most the n values of the call, which
// returns an error wrapping seqd.ErrUnavailable. With WithCache it is the block
// being fetched, up to MaxBlock values (seqd.MaxCount, 1,000,000, by default),
// often in a prefetch that runs in the background, with no caller waiting for it.
//
// # Local cache
//
// WithCache makes the client reserve blocks of values with one request each
// (POST /seq/{name}/next?count=N, N up to seqd.MaxCount) and serve Next and NextN from
// memory, with one blocks.Allocator per name. Its guarantees:
//   - values are unique across all clients and seqd instances: each block comes
//     from seqd, which never hands a value out twice;
//   - a sequence's values are strictly increasing within one Client: an answer
//     that starts after another answer of the same Client returned is larger;
//   - there is no order across clients, cached or not;
//   - values held in the cache when the process ends are lost: a gap;
//   - Close releases the allocators; the client cannot give values back to seqd.
//
// Current always asks seqd: in cached use, a sequence's value counts the values
// reserved in blocks, served or not.
//
// NextNumbered never uses the cache. Through NextN, the cache serves a periodic
// sequence's values without their period, and a block's values stay its period's
// after the next one has begun on seqd: read periodic sequences with NextNumbered.
//
// Without the cache, every value comes from a request, and the order across
// requests is what the sequence's mode on seqd gives (strict: linearizable).
package client

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/seqd/seqd"
	"github.com/seqd/seqd/blocks"
)

// maxIdleConns is how many idle connections to seqd a Client of its own keeps.
const maxIdleConns = 64

// ErrClosed is returned by calls on a Client after Close.
var ErrClosed = errors.New("client: closed")

// Client takes values from one seqd. It is safe for concurrent use.
type Client struct {
	base  string // scheme://host[/path], without a trailing slash
	http  *http.Client
	owned bool   // c.http was made by New, so Close closes its idle connections
	auth  string // the Authorization header, or ""

	// wait pauses between attempts; tests replace it.
	wait func(ctx context.Context, d time.Duration) error

	cache *cache // nil without WithCache

	closed atomic.Bool
}

// Option configures a Client.
type Option func(*options) error

type options struct {
	token  string
	http   *http.Client
	blocks *blocks.Options
}

// WithToken sends token as a bearer token (Authorization: Bearer token), as seqd
// started with client or admin tokens requires. An empty token is an error,
// not "no token", so that an unset variable does not go unnoticed.
func WithToken(token string) Option {
	return func(o *options) error {
		if token == "" {
			return errors.New("empty token")
		}
		if strings.ContainsFunc(token, func(r rune) bool { return r < ' ' || r == 0x7f }) {
			return errors.New("the token holds a control character, which no HTTP header may")
		}
		o.token = token
		return nil
	}
}

// WithHTTPClient sends requests with hc instead of a client of the Client's own;
// its Timeout, if any, bounds every attempt, and Close leaves it alone. Without a
// CheckRedirect of its own, hc gets the Client's, which follows no redirect that
// changes the method. hc's Transport must not send a request again on its own:
// net/http's does not resend the Client's POSTs, but a retrying wrapper would,
// and hide values taken and lost.
func WithHTTPClient(hc *http.Client) Option {
	return func(o *options) error {
		if hc == nil {
			return errors.New("nil *http.Client")
		}
		if hc.CheckRedirect == nil {
			copied := *hc
			copied.CheckRedirect = sameMethod
			hc = &copied
		}
		o.http = hc
		return nil
	}
}

// WithCache serves Next and NextN from blocks of values reserved ahead, as the
// package comment describes; opts tunes the blocks (zero fields take blocks'
// defaults, except that MaxBlock defaults to, and may not exceed, seqd.MaxCount).
func WithCache(opts blocks.Options) Option {
	return func(o *options) error {
		if opts.MaxBlock == 0 {
			opts.MaxBlock = seqd.MaxCount
		}
		if opts.MaxBlock < 0 || opts.MaxBlock > seqd.MaxCount || opts.MinBlock < 0 || opts.MinBlock > opts.MaxBlock {
			return fmt.Errorf("cache blocks must be 0 ≤ MinBlock ≤ MaxBlock ≤ %d, got %d and %d",
				seqd.MaxCount, opts.MinBlock, opts.MaxBlock)
		}
		o.blocks = &opts
		return nil
	}
}

// New returns a Client of the seqd at baseURL: http or https, a host, and
// optionally a path under which a proxy serves seqd's API.
func New(baseURL string, opts ...Option) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil {
		return nil, fmt.Errorf("client: base URL %q: %w", baseURL, err)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("client: base URL %q: the scheme must be http or https", baseURL)
	case u.Host == "":
		return nil, fmt.Errorf("client: base URL %q: no host", baseURL)
	case u.User != nil:
		return nil, fmt.Errorf("client: base URL %q: seqd takes a token (WithToken), not a user in the URL", baseURL)
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return nil, fmt.Errorf("client: base URL %q: no query or fragment, please", baseURL)
	}
	var o options
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, fmt.Errorf("client: %w", err)
		}
	}
	c := &Client{
		base: strings.TrimSuffix(u.Scheme+"://"+u.Host+u.EscapedPath(), "/"),
		http: o.http,
		wait: sleep,
	}
	if c.http == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		// Every request goes to one host: keep a connection for each of the
		// goroutines that share the Client, not net/http's default of two.
		tr.MaxIdleConnsPerHost = maxIdleConns
		c.http = &http.Client{Transport: tr, CheckRedirect: sameMethod}
		c.owned = true
	}
	if o.token != "" {
		c.auth = "Bearer " + o.token
	}
	if o.blocks != nil {
		c.cache = newCache(*o.blocks, c.fetchBlock)
	}
	return c, nil
}

// sameMethod is a Client's redirect policy: net/http's default, except that a
// redirect must keep the request's method. net/http turns a POST into a GET on
// 301, 302 and 303, and a GET that takes values is one its Transport may send
// twice.
func sameMethod(req *http.Request, via []*http.Request) error {
	if req.Method != via[0].Method {
		return fmt.Errorf("a redirect to %s would send the %s as a %s: give New the URL seqd answers at",
			req.URL.Redacted(), via[0].Method, req.Method)
	}
	if len(via) >= maxRedirects {
		return fmt.Errorf("stopped after %d redirects", maxRedirects)
	}
	return nil
}

// maxRedirects is net/http's default limit.
const maxRedirects = 10

// Next returns the next value of the sequence name.
func (c *Client) Next(ctx context.Context, name string) (int64, error) {
	r, err := c.NextN(ctx, name, 1)
	return r.Last, err
}

// NextN returns n contiguous values of the sequence name, 1 ≤ n ≤ seqd.MaxCount.
func (c *Client) NextN(ctx context.Context, name string, n int64) (seqd.Range, error) {
	if c.cache != nil {
		return c.cache.nextN(ctx, name, n)
	}
	if !seqd.ValidName(name) {
		return seqd.Range{}, fmt.Errorf("client: next %q: %w", name, seqd.ErrInvalidName)
	}
	if c.closed.Load() {
		return seqd.Range{}, fmt.Errorf("client: next %q: %w", name, ErrClosed)
	}
	return c.fetch(ctx, name, n)
}

// NextNumbered returns n contiguous values of the numbered sequence name
// (PUT /seq/{name} with a period or a format), with the key of the period they
// belong to and their formatted text, from one request. It never uses the
// local cache: a period's values come from seqd, so that periods never go
// back. For a sequence without a numbering, the period and texts are "".
func (c *Client) NextNumbered(ctx context.Context, name string, n int64) (seqd.Numbered, error) {
	if !seqd.ValidName(name) {
		return seqd.Numbered{}, fmt.Errorf("client: next %q: %w", name, seqd.ErrInvalidName)
	}
	if c.closed.Load() {
		return seqd.Numbered{}, fmt.Errorf("client: next %q: %w", name, ErrClosed)
	}
	return c.fetchNumbered(ctx, name, n)
}

// PeriodValue returns the last value of the periodic sequence name in the
// period key ("2026-11"): the current period's, or one of the latest finished
// ones seqd remembers. A period it does not remember is seqd.ErrNotFound.
func (c *Client) PeriodValue(ctx context.Context, name, key string) (int64, error) {
	if !seqd.ValidName(name) {
		return 0, fmt.Errorf("client: period value %q: %w", name, seqd.ErrInvalidName)
	}
	if c.closed.Load() {
		return 0, fmt.Errorf("client: period value %q: %w", name, ErrClosed)
	}
	var a struct {
		Name   string `json:"name"`
		Period string `json:"period"`
		Value  *int64 `json:"value"`
	}
	if err := c.ask(ctx, http.MethodGet, "/seq/"+url.PathEscape(name)+"?period="+url.QueryEscape(key), &a); err != nil {
		return 0, fmt.Errorf("client: period value %q: %w", name, err)
	}
	if a.Name != name || a.Period != key || a.Value == nil || *a.Value < 0 {
		return 0, fmt.Errorf("client: period value %q: %w: seqd's answer is not the value of period %q", name, seqd.ErrUnavailable, key)
	}
	return *a.Value, nil
}

// Current returns the sequence name as seqd stores it: its value (the last value
// handed out, or the end of the last block reserved), its mode and, for a cached
// sequence, its block bounds and counts.
func (c *Client) Current(ctx context.Context, name string) (seqd.Sequence, error) {
	if !seqd.ValidName(name) {
		return seqd.Sequence{}, fmt.Errorf("client: current %q: %w", name, seqd.ErrInvalidName)
	}
	if c.closed.Load() {
		return seqd.Sequence{}, fmt.Errorf("client: current %q: %w", name, ErrClosed)
	}
	return c.current(ctx, name)
}

// current is Current's request, which the cache makes too while Close waits for it.
func (c *Client) current(ctx context.Context, name string) (seqd.Sequence, error) {
	var s sequenceAnswer
	if err := c.ask(ctx, http.MethodGet, "/seq/"+url.PathEscape(name), &s); err != nil {
		return seqd.Sequence{}, fmt.Errorf("client: current %q: %w", name, err)
	}
	seq, err := s.sequence(name)
	if err != nil {
		return seqd.Sequence{}, fmt.Errorf("client: current %q: %w", name, err)
	}
	return seq, nil
}

// listPage is how many sequences List asks for at a time: seqd's default page,
// whose answer stays well inside maxAnswer.
const listPage = 100

// List returns the sequences whose names start with prefix ("" for all), in order
// of name, asking seqd for a page at a time (GET /seq?prefix=…&after=…) as the
// loop reaches the end of the one before, so that neither the client nor seqd
// holds more than a page. A sequence whose record seqd cannot use comes with Err
// set to its *Error (code invalid_counter, which unwraps to
// seqd.ErrInvalidCounter), and the loop goes on. A failed request ends the loop:
// its error comes as the last pair, with a zero Sequence. A prefix that is not
// the start of a name (seqd.ValidName) is seqd.ErrInvalidName, before any request.
//
// A walk sees each name once, in order, but not one moment's state: a sequence
// created behind the page being read is missed, and values go on changing.
func (c *Client) List(ctx context.Context, prefix string) iter.Seq2[seqd.Sequence, error] {
	return func(yield func(seqd.Sequence, error) bool) {
		switch {
		case prefix != "" && !seqd.ValidName(prefix):
			yield(seqd.Sequence{}, fmt.Errorf("client: list: prefix %q: %w", prefix, seqd.ErrInvalidName))
			return
		case c.closed.Load():
			yield(seqd.Sequence{}, fmt.Errorf("client: list: %w", ErrClosed))
			return
		}
		after := ""
		for {
			page, err := c.listPage(ctx, prefix, after)
			if err != nil {
				yield(seqd.Sequence{}, fmt.Errorf("client: list %q after %q: %w", prefix, after, err))
				return
			}
			for _, s := range page.Sequences {
				if !yield(s, nil) {
					return
				}
			}
			if page.Next == "" {
				return
			}
			after = page.Next
		}
	}
}

// Close releases the cache's allocators, waiting until ctx ends for blocks
// being fetched, and the client's idle connections. The values the cache held are
// lost (a gap), and so is a block whose fetch is still running when ctx ends: a
// client cannot give values back, so Close has nothing to fail and returns nil.
// Later calls return ErrClosed.
func (c *Client) Close(ctx context.Context) error {
	if !c.closed.CompareAndSwap(false, true) {
		return nil
	}
	if c.cache != nil {
		c.cache.close(ctx)
	}
	if c.owned {
		c.http.CloseIdleConnections()
	}
	return nil
}

// CacheStatus reports the local cache's allocator for name: the blocks it holds,
// its block size and rate, and what it fetched and served. It reports false
// without WithCache, or before the first Next or NextN of name.
func (c *Client) CacheStatus(name string) (blocks.Status, bool) {
	if c.cache == nil {
		return blocks.Status{}, false
	}
	return c.cache.status(name)
}
