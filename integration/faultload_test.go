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

	"github.com/seqd/seqd/internal/history"
	"github.com/seqd/seqd/internal/proc"
)

// What the fault tests share: seqd started on a database of the test's choosing (so
// that a second seqd can take over the first one's data), a load of clients on
// /seq/{name}/next, and a ledger of every value the clients received.

// startSeqdAt starts seqd on the MongoDB at uri, database db, and stops it when the
// test ends. Unlike startSeqd it can start a second seqd on the same data.
func startSeqdAt(t *testing.T, uri, db string, env ...string) *proc.Seqd {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	bin, err := proc.Build(ctx, "./cmd/seqd")
	if err != nil {
		t.Fatal(err)
	}
	env = append([]string{"MONGODB_URI=" + uri, "SEQD_DB=" + db}, env...)
	srv, err := proc.StartSeqd(ctx, bin, env)
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

// op checks a 200 answer to c and returns it as an operation of the history: the
// values it hands out, asked for at c.start and received c.latency later.
func (c nextCall) op(name string) (history.Op, error) {
	var r nextReply
	if err := json.Unmarshal(c.body, &r); err != nil {
		return history.Op{}, fmt.Errorf("malformed answer to %v: %w", c, err)
	}
	if r.Name != name || r.Count != c.count || r.First < 1 || r.Value-r.First+1 != r.Count || r.Strategy != "counter" {
		return history.Op{}, fmt.Errorf("wrong answer to %v", c)
	}
	return history.Op{
		Client: fmt.Sprintf("http-%d", c.client),
		Start:  c.start, End: c.start.Add(c.latency),
		First: r.First, Last: r.Value,
	}, nil
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

// ledger records every allocation that clients received, and lets a test wait
// for more of them.
type ledger struct {
	ops     history.Recorder
	answers tally
}

func (l *ledger) add(op history.Op) {
	l.ops.Add(op)
	l.answers.add("")
}

// more returns a channel that is closed once n more answers than now are recorded.
func (l *ledger) more(n int) <-chan struct{} { return l.answers.more("", n) }

func (l *ledger) snapshot() []history.Op { return l.ops.Ops() }

// A tally counts outcomes by kind, from many goroutines, so that a test can wait
// for a number of them instead of sleeping.
type tally struct {
	mu      sync.Mutex
	counts  map[string]int
	waiters []tallyWaiter
}

type tallyWaiter struct {
	kind string
	n    int
	ch   chan struct{}
}

// add counts one outcome of kind.
func (t *tally) add(kind string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.counts == nil {
		t.counts = map[string]int{}
	}
	t.counts[kind]++
	keep := t.waiters[:0]
	for _, w := range t.waiters {
		if w.kind == kind && t.counts[kind] >= w.n {
			close(w.ch)
		} else {
			keep = append(keep, w)
		}
	}
	t.waiters = keep
}

// reach returns a channel that is closed once kind has been counted n times.
func (t *tally) reach(kind string, n int) <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.reachLocked(kind, n)
}

// more returns a channel that is closed once kind has been counted n more times
// than now.
func (t *tally) more(kind string, n int) <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.reachLocked(kind, t.counts[kind]+n)
}

func (t *tally) reachLocked(kind string, n int) <-chan struct{} {
	w := tallyWaiter{kind: kind, n: n, ch: make(chan struct{})}
	if t.counts[kind] >= n {
		close(w.ch)
	} else {
		t.waiters = append(t.waiters, w)
	}
	return w.ch
}

// count is how many outcomes of kind have been counted.
func (t *tally) count(kind string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.counts[kind]
}

// span returns how many answers and values the ops hold, and the least and
// greatest value.
func span(ops []history.Op) (answers int, values, lo, hi int64) {
	r := history.Check(ops, history.Options{})
	return r.Ops, r.Values, r.Min, r.Max
}

// checkHistory fails t unless ops are the history of a linearizable counter: no
// value twice, and an allocation that completed before another was asked for holds
// smaller values. It returns what the check found, for the log.
func checkHistory(t *testing.T, ops []history.Op) history.Result {
	t.Helper()
	r := history.Check(ops, history.Options{})
	if err := r.Err(); err != nil {
		t.Error(err)
	}
	return r
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

// restartAndCheck starts seqd again on db, loads name until 300 more answers have
// come, and checks the history of the whole run. The first seqd is gone before the
// second starts, so the check's real-time order means that every value after the
// restart is above every value before what (the fault). It returns the
// allocations before and after.
func restartAndCheck(t *testing.T, ctx context.Context, hc *http.Client, db, name string, fail *failures,
	before []history.Op, what string) (_, after []history.Op) {
	t.Helper()
	second := startSeqdAt(t, seqdURI(), db)
	var l ledger
	load := startLoad(ctx, t, hc, second.URL(), name, faultClients, func(c nextCall) {
		if c.status != http.StatusOK {
			fail.errorf("after the restart: %v", c)
			return
		}
		op, err := c.op(name)
		if err != nil {
			fail.errorf("after the restart: %v", err)
			return
		}
		l.add(op)
	})
	waitFor(t, ctx, l.more(300), "300 answers after the restart")
	load.stop()

	after = l.snapshot()
	if r := checkHistory(t, append(slices.Clone(before), after...)); r.Err() != nil {
		t.Errorf("the history of the run across %s does not hold", what)
	}
	return before, after
}
