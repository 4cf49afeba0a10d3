//go:build integration

package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/seqd/seqd/integration/seqdproc"
)

// What the fault tests share: seqd started on a database of the test's choosing (so
// that a second seqd can take over the first one's data), a load of clients on
// /seq/{name}/next, and a ledger of every value the clients received.

// startSeqdAt starts seqd on the MongoDB at uri, database db, and stops it when the
// test ends. Unlike startSeqd it can start a second seqd on the same data.
func startSeqdAt(t *testing.T, uri, db string, env ...string) *seqdproc.Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	bin, err := seqdproc.Build(ctx)
	if err != nil {
		t.Fatal(err)
	}
	env = append([]string{"MONGODB_URI=" + uri, "SEQD_DB=" + db}, env...)
	srv, err := seqdproc.Start(ctx, bin, env)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Its own deadline: the test's context may be over by now.
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		if err := srv.Stop(ctx); err != nil {
			t.Errorf("stopping seqd: %v\n%s", err, srv.Output())
		}
	})
	return srv
}

// loadClient is an HTTP client for a load of clients: it keeps that many idle
// connections, and its timeout is a hang guard far above any deadline seqd has.
func loadClient(t *testing.T, clients int) *http.Client {
	tr := &http.Transport{MaxIdleConnsPerHost: clients, DisableCompression: true}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 15 * time.Second}
}

// nextCall is the outcome of one request to /seq/{name}/next.
type nextCall struct {
	client  int // which of the load's clients
	method  string
	count   int64 // values asked for
	start   time.Time
	latency time.Duration
	status  int // 0 without a response
	header  http.Header
	body    []byte
	err     error // no response, or the body could not be read
}

func (c nextCall) String() string {
	if c.err != nil {
		return fmt.Sprintf("%s count=%d: %v after %v", c.method, c.count, c.err, c.latency.Round(time.Millisecond))
	}
	return fmt.Sprintf("%s count=%d: %d %q after %v", c.method, c.count, c.status, c.body, c.latency.Round(time.Millisecond))
}

// issued checks a 200 answer to c and returns the values it hands out.
func (c nextCall) issued(name string) (valueRange, error) {
	var r nextReply
	if err := json.Unmarshal(c.body, &r); err != nil {
		return valueRange{}, fmt.Errorf("malformed answer to %v: %w", c, err)
	}
	if r.Name != name || r.Count != c.count || r.First < 1 || r.Value-r.First+1 != r.Count || r.Strategy != "counter" {
		return valueRange{}, fmt.Errorf("wrong answer to %v", c)
	}
	return valueRange{first: r.First, last: r.Value}, nil
}

// connectionError reports whether c failed the way a request fails when the server
// goes away: refused, reset, or cut off before a response. A timeout (a hang) or a
// malformed response is not one.
func (c nextCall) connectionError() bool {
	if c.err == nil || c.status != 0 {
		return false
	}
	return errors.Is(c.err, syscall.ECONNREFUSED) || errors.Is(c.err, syscall.ECONNRESET) ||
		errors.Is(c.err, syscall.EPIPE) || errors.Is(c.err, io.EOF) || errors.Is(c.err, io.ErrUnexpectedEOF) ||
		// net/http's errServerClosedIdle: the server closed a kept-alive connection
		// as the request went out, and a POST is not retried.
		strings.Contains(c.err.Error(), "server closed idle connection")
}

// load is a number of clients calling /seq/{name}/next in the background.
type load struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// startLoad has clients goroutines call base/seq/{name}/next until stop, each
// asking mostly for one value and now and then for up to ten, by GET or POST. Each
// outcome goes to handle, from the client's goroutine. A request cut short by stop
// is not passed on. After a failure a client waits 10ms, so that a dead server is
// not hammered in a tight loop.
func startLoad(ctx context.Context, t *testing.T, hc *http.Client, base, name string, clients int, handle func(nextCall)) *load {
	ctx, cancel := context.WithCancel(ctx)
	l := &load{cancel: cancel, done: make(chan struct{})}
	var wg sync.WaitGroup
	for client := range clients {
		wg.Go(func() {
			for ctx.Err() == nil {
				c := callNext(ctx, hc, base, name)
				c.client = client
				if c.err != nil && ctx.Err() != nil {
					return
				}
				handle(c)
				if c.err != nil || c.status != http.StatusOK {
					select {
					case <-ctx.Done():
					case <-time.After(10 * time.Millisecond):
					}
				}
			}
		})
	}
	go func() {
		wg.Wait()
		close(l.done)
	}()
	t.Cleanup(l.stop)
	return l
}

// everyClient returns a function to call with each client's failures and a
// channel that is closed once every one of clients has had one. After a fault,
// that is when every request that was in flight has been accounted for.
func everyClient(clients int) (failed func(nextCall), all <-chan struct{}) {
	var mu sync.Mutex
	seen := map[int]bool{}
	ch := make(chan struct{})
	return func(c nextCall) {
		mu.Lock()
		defer mu.Unlock()
		if !seen[c.client] {
			if seen[c.client] = true; len(seen) == clients {
				close(ch)
			}
		}
	}, ch
}

// stop ends the load and waits until every client has returned.
func (l *load) stop() {
	l.cancel()
	<-l.done
}

func callNext(ctx context.Context, hc *http.Client, base, name string) nextCall {
	c := nextCall{method: http.MethodGet, count: 1}
	if rand.IntN(2) == 0 {
		c.method = http.MethodPost
	}
	if rand.IntN(4) == 0 {
		c.count = 2 + rand.Int64N(9)
	}
	url := base + "/seq/" + name + "/next"
	if c.count > 1 || rand.IntN(2) == 0 {
		url += "?count=" + strconv.FormatInt(c.count, 10)
	}
	req, err := http.NewRequestWithContext(ctx, c.method, url, nil)
	if err != nil {
		c.err = err
		return c
	}
	c.start = time.Now()
	resp, err := hc.Do(req)
	if err == nil {
		c.status, c.header = resp.StatusCode, resp.Header
		c.body, err = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	c.err = err
	c.latency = time.Since(c.start)
	return c
}

// valueRange is the values first…last that one answer handed out.
type valueRange struct{ first, last int64 }

// ledger records every range of values that clients received.
type ledger struct {
	mu      sync.Mutex
	ranges  []valueRange
	waiters []ledgerWaiter
}

type ledgerWaiter struct {
	n  int
	ch chan struct{}
}

func (l *ledger) add(r valueRange) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ranges = append(l.ranges, r)
	keep := l.waiters[:0]
	for _, w := range l.waiters {
		if len(l.ranges) >= w.n {
			close(w.ch)
		} else {
			keep = append(keep, w)
		}
	}
	l.waiters = keep
}

// more returns a channel that is closed once n more answers than now are recorded.
func (l *ledger) more(n int) <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	w := ledgerWaiter{n: len(l.ranges) + n, ch: make(chan struct{})}
	l.waiters = append(l.waiters, w)
	return w.ch
}

func (l *ledger) snapshot() []valueRange {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.ranges)
}

// span returns how many answers and values the ranges hold, and the least and
// greatest value.
func span(ranges []valueRange) (answers int, values, lo, hi int64) {
	for i, r := range ranges {
		if i == 0 || r.first < lo {
			lo = r.first
		}
		if i == 0 || r.last > hi {
			hi = r.last
		}
		values += r.last - r.first + 1
	}
	return len(ranges), values, lo, hi
}

// checkNoDuplicates fails t if any value is in more than one range.
func checkNoDuplicates(t *testing.T, ranges []valueRange) {
	t.Helper()
	sorted := slices.Clone(ranges)
	slices.SortFunc(sorted, func(a, b valueRange) int { return compareInt64(a.first, b.first) })
	var dups []string
	var widest valueRange // of those so far, the one that reaches highest
	for i, r := range sorted {
		if i > 0 && r.first <= widest.last {
			dups = append(dups, fmt.Sprintf("%d…%d and %d…%d", widest.first, widest.last, r.first, r.last))
		}
		if i == 0 || r.last > widest.last {
			widest = r
		}
	}
	if len(dups) > 0 {
		t.Errorf("values issued twice: %d answers repeat values of earlier ones: %s", len(dups), strings.Join(dups[:min(len(dups), 10)], "; "))
	}
}

func compareInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// waitFor waits for ch to close, or fails the test when ctx ends first.
func waitFor(t *testing.T, ctx context.Context, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-ctx.Done():
		t.Fatalf("waiting for %s: %v", what, ctx.Err())
	}
}

// apiError decodes the documented error body {"error":{"code","message"}}, with
// nothing else in it, and returns its code and message.
func apiError(body []byte) (code, message string, err error) {
	// The prefix pins the keys' case, which decoding into a struct ignores.
	if !bytes.HasPrefix(body, []byte(`{"error":{"code":`)) {
		return "", "", fmt.Errorf(`error body %q is not {"error":{"code","message"}}`, body)
	}
	var e struct {
		Error *struct {
			Code    *string `json:"code"`
			Message *string `json:"message"`
		} `json:"error"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil || dec.More() {
		return "", "", fmt.Errorf(`error body %q is not {"error":{"code","message"}}: %v`, body, err)
	}
	if e.Error == nil || e.Error.Code == nil || e.Error.Message == nil || *e.Error.Code == "" || *e.Error.Message == "" {
		return "", "", fmt.Errorf("error body %q: missing or empty code or message", body)
	}
	return *e.Error.Code, *e.Error.Message, nil
}

// checkUnavailable checks that a reply is the 503 seqd gives when its backend is
// down: Retry-After, Cache-Control: no-store and the error body with code
// "unavailable".
func checkUnavailable(status int, header http.Header, body []byte) error {
	if status != http.StatusServiceUnavailable {
		return fmt.Errorf("status %d, want 503", status)
	}
	if header.Get("Retry-After") == "" {
		return errors.New("503 without Retry-After")
	}
	if got := header.Get("Cache-Control"); got != "no-store" {
		return fmt.Errorf("503 with Cache-Control %q", got)
	}
	code, _, err := apiError(body)
	if err != nil {
		return err
	}
	if code != "unavailable" {
		return fmt.Errorf("503 with code %q, want unavailable", code)
	}
	return nil
}

// pollUntil calls check every 50ms until it reports done, and fails the test if ctx
// ends first. Use it only where no event says the state has changed.
func pollUntil(t *testing.T, ctx context.Context, what string, check func() (bool, error)) {
	t.Helper()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		ok, err := check()
		if ok {
			return
		}
		if err != nil {
			last = err
		}
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v (last error: %v)", what, ctx.Err(), last)
		case <-tick.C:
		}
	}
}

// failures reports the first few failures of one kind and counts the rest, so that
// a fault that fails every request does not flood the log. It is safe for
// concurrent use.
type failures struct {
	t  *testing.T
	mu sync.Mutex
	n  int
}

func (f *failures) errorf(format string, args ...any) {
	f.t.Helper()
	f.mu.Lock()
	f.n++
	n := f.n
	f.mu.Unlock()
	switch {
	case n <= 10:
		f.t.Errorf(format, args...)
	case n == 11:
		f.t.Errorf("(further failures are counted, not shown)")
	}
}

// count is how many failures were reported.
// restartAndCheck starts seqd again on db, loads name until 300 more answers have
// come, and checks the whole run: no value issued twice, and every value after the
// restart above every value before what (the fault). It returns the ranges issued
// before and after.
func restartAndCheck(t *testing.T, ctx context.Context, hc *http.Client, db, name string, fail *failures,
	before []valueRange, what string) (_, after []valueRange) {
	t.Helper()
	second := startSeqdAt(t, seqdURI(), db)
	var l ledger
	load := startLoad(ctx, t, hc, second.URL(), name, faultClients, func(c nextCall) {
		if c.status != http.StatusOK {
			fail.errorf("after the restart: %v", c)
			return
		}
		r, err := c.issued(name)
		if err != nil {
			fail.errorf("after the restart: %v", err)
			return
		}
		l.add(r)
	})
	waitFor(t, ctx, l.more(300), "300 answers after the restart")
	load.stop()

	after = l.snapshot()
	checkNoDuplicates(t, append(slices.Clone(before), after...))
	_, _, _, lastBefore := span(before)
	if _, _, firstAfter, _ := span(after); firstAfter <= lastBefore {
		t.Errorf("after the restart seqd handed out %d, not above %d from before %s", firstAfter, lastBefore, what)
	}
	return before, after
}
