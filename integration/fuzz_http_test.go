//go:build integration

package integration

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestHTTPFuzz sends SEQD_FUZZ_REQUESTS (default 100,000) random and malformed
// requests to one real seqd, from 16 workers, and checks every answer:
//
//   - no 5xx, and no request without an answer: while the backend is up, seqd has
//     no reason to fail on the server side, whatever a client sends;
//   - no panic in seqd's output, and seqd still healthy at the end;
//   - every error from seqd is the documented {"error":{"code","message"}} with a
//     snake_case code, with Cache-Control: no-store, as are all /oid and /seq answers.
//
// net/http answers requests it cannot parse (a bad request line, a bad header,
// broken framing) itself, before seqd's handler sees them, with a plain-text
// "400 Bad Request" (or 417, 431, 501, 505 for what they mean). Those are counted
// apart, as go-http-400 and go-http-other. When such a request is bigger than
// what net/http reads at once, it closes the connection with the rest unread, the
// kernel resets it, and the reset may destroy the answer: those (requests past
// 1 KiB answered by a reset) are counted as reset-unread, not as failures.
//
// The seed is printed; SEQD_FUZZ_SEED=n repeats a run's requests (not their
// interleaving across workers).
func TestHTTPFuzz(t *testing.T) {
	total := envInt(t, "SEQD_FUZZ_REQUESTS", 100_000)
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("SEQD_FUZZ_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("SEQD_FUZZ_SEED=%q: %v", s, err)
		}
	}
	t.Logf("http fuzz: seed %d (SEQD_FUZZ_SEED=%d repeats these requests)", seed, seed)

	// The deadline is generous so that a 503 can only mean a fault, not a slow
	// machine.
	srv := startSeqdAt(t, seqdURI(), be.Database(t).Name(),
		"SEQD_TOKENS=other-token,"+fuzzClientToken, "SEQD_ADMIN_TOKEN="+fuzzAdminToken, "SEQD_TIMEOUT=10s")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	panics := watchForPanics(t, srv.Output)
	const workers = 16
	tr := &http.Transport{MaxIdleConnsPerHost: workers, DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	stats := newFuzzStats()
	var sent atomic.Int64
	start := time.Now()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			f := newFuzzer(seed, w)
			s := &fuzzSender{base: srv.URL(), addr: srv.Addr(), client: client}
			defer s.close()
			for sent.Add(1) <= int64(total) && ctx.Err() == nil {
				req := f.request()
				stats.record(req, s.send(ctx, req))
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)

	if err := panics(); err != nil {
		t.Error(err)
	}
	select {
	case <-srv.Done():
		t.Fatalf("seqd exited during the fuzz:\n%s", srv.Output())
	default:
	}
	do(t, srv.URL(), call{path: "/healthz"}).want(t, http.StatusOK, nil)
	do(t, srv.URL(), call{path: "/oid", token: fuzzClientToken}).want(t, http.StatusOK, nil)

	stats.report(t, elapsed, seed)
	if stats.total < total {
		t.Errorf("http fuzz: only %d of %d requests sent before the deadline", stats.total, total)
	}
}

func envInt(t *testing.T, key string, def int) int {
	t.Helper()
	s := os.Getenv(key)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive integer", key, s)
	}
	return n
}

// watchForPanics scans output every 100ms until the returned function is called,
// which stops the watch and reports any panic found, then or before. Scanning as
// the test goes keeps a panic line from scrolling out of the kept output (its last
// 256 KiB) under the request log.
func watchForPanics(t *testing.T, output func() string) func() error {
	done := make(chan struct{})
	var found atomic.Pointer[string]
	check := func() {
		out := output()
		i := strings.Index(out, "panic")
		if i < 0 {
			i = strings.Index(out, "PANIC") // Echo's recover middleware
		}
		if i >= 0 && found.Load() == nil {
			excerpt := out[max(0, i-500):min(len(out), i+2000)]
			found.Store(&excerpt)
		}
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				check()
			}
		}
	})
	stop := func() error {
		close(done)
		wg.Wait()
		check()
		if p := found.Load(); p != nil {
			return fmt.Errorf("seqd's output shows a panic:\n%s", *p)
		}
		return nil
	}
	t.Cleanup(func() {
		select {
		case <-done:
		default:
			stop()
		}
	})
	return stop
}

// fuzzSender sends one worker's requests: through net/http's client where it can
// build them, else over raw TCP. It keeps a raw connection open between requests
// whose framing is sound, as a client would.
type fuzzSender struct {
	base, addr string
	client     *http.Client
	conn       net.Conn // kept open, or nil
	br         *bufio.Reader
}

func (s *fuzzSender) close() {
	if s.conn != nil {
		s.conn.Close()
		s.conn = nil
	}
}

// fuzzAnswer is what came back: a response, or err.
type fuzzAnswer struct {
	raw    bool // sent over raw TCP
	sent   int  // size of the request
	close  bool // the server said it closes the connection
	status int
	header http.Header
	body   []byte
	err    error
}

// send sends req and returns the answer. An exchange that got no answer is tried
// twice more on a fresh connection: a server that refuses a request may close the
// connection before the client has read the answer, and only a request that never
// gets one counts as unanswered.
func (s *fuzzSender) send(ctx context.Context, req fuzzRequest) fuzzAnswer {
	a := s.sendOnce(ctx, req)
	for i := 0; i < 2 && a.err != nil && ctx.Err() == nil; i++ {
		s.close()
		a = s.sendOnce(ctx, req)
	}
	return a
}

func (s *fuzzSender) sendOnce(ctx context.Context, req fuzzRequest) fuzzAnswer {
	if req.raw != nil {
		return s.sendRaw(ctx, req.method, req.raw, false)
	}
	if needsRaw(req) {
		keep := soundFraming(req)
		return s.sendRaw(ctx, req.method, frame(req, s.addr, keep), keep)
	}
	path, query, hasQuery := strings.Cut(req.target, "?")
	var body io.Reader
	if req.body != nil {
		body = bytes.NewReader(req.body)
	}
	r, err := http.NewRequestWithContext(ctx, req.method, s.base, body)
	if err != nil {
		return fuzzAnswer{err: fmt.Errorf("building the request: %w", err)}
	}
	r.URL.Opaque, r.URL.RawQuery = path, query
	r.URL.ForceQuery = hasQuery && query == ""
	for _, h := range req.header {
		r.Header.Add(h[0], h[1])
	}
	a := fuzzAnswer{sent: framedSize(req)}
	resp, err := s.client.Do(r)
	if err == nil {
		a.status, a.header, a.close = resp.StatusCode, resp.Header, resp.Close
		a.body, err = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	if err != nil && ctx.Err() == nil {
		// net/http refuses some requests (a bad escape in the path) by answering
		// and closing at once, and its client can lose that answer, or the end of
		// it, in a race with its own writing: send the same bytes raw, which reads
		// what comes.
		return s.sendRaw(ctx, req.method, frame(req, s.addr, false), false)
	}
	a.err = err
	return a
}

// needsRaw reports whether net/http's client would refuse req, or change it: a
// method that is not a token, a target with bytes outside printable ASCII or that
// is not origin-form, header names and values it rejects, and the headers it sets
// itself.
func needsRaw(req fuzzRequest) bool {
	if !isToken(req.method) || req.method == http.MethodConnect {
		return true
	}
	if !strings.HasPrefix(req.target, "/") || strings.HasPrefix(req.target, "//") {
		return true
	}
	for i := 0; i < len(req.target); i++ {
		if c := req.target[i]; c <= ' ' || c >= 0x7f {
			return true
		}
	}
	for _, h := range req.header {
		switch http.CanonicalHeaderKey(h[0]) {
		case "Host", "Content-Length", "Transfer-Encoding", "Connection", "Upgrade", "Te", "Expect":
			return true
		}
		if !isToken(h[0]) {
			return true
		}
		for i := 0; i < len(h[1]); i++ {
			if c := h[1][i]; (c < ' ' && c != '\t') || c == 0x7f {
				return true
			}
		}
	}
	return false
}

func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// soundFraming reports whether req, framed, is one request and no more, so that
// its connection can carry the next: it sets none of the headers that decide where
// a request ends or whether the connection stays open.
func soundFraming(req fuzzRequest) bool {
	for _, h := range req.header {
		switch http.CanonicalHeaderKey(h[0]) {
		case "Content-Length", "Transfer-Encoding", "Connection", "Expect", "Upgrade":
			return false
		}
	}
	return true
}

// frame writes req as HTTP/1.1 bytes, with a Host header and a Content-Length
// unless req has its own, and Connection: close unless keep.
func frame(req fuzzRequest, host string, keep bool) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\n", req.method, req.target)
	has := map[string]bool{}
	for _, h := range req.header {
		has[http.CanonicalHeaderKey(h[0])] = true
	}
	if !has["Host"] {
		fmt.Fprintf(&b, "Host: %s\r\n", host)
	}
	for _, h := range req.header {
		fmt.Fprintf(&b, "%s: %s\r\n", h[0], h[1])
	}
	if req.body != nil && !has["Content-Length"] && !has["Transfer-Encoding"] {
		fmt.Fprintf(&b, "Content-Length: %d\r\n", len(req.body))
	}
	if !has["Connection"] && !keep {
		b.WriteString("Connection: close\r\n")
	}
	b.WriteString("\r\n")
	if has["Transfer-Encoding"] {
		// An empty chunked body: the point is the header, and a body that is not
		// chunked would keep the server waiting for the next chunk line.
		b.WriteString("0\r\n\r\n")
	} else {
		b.Write(req.body)
	}
	return b.Bytes()
}

// framedSize is about the size of req on the wire.
func framedSize(req fuzzRequest) int {
	n := len(req.method) + len(req.target) + len(req.body) + 64
	for _, h := range req.header {
		n += len(h[0]) + len(h[1]) + 4
	}
	return n
}

// sendRaw writes raw and reads the first final response: on the kept connection
// if keep and there is one, else on a new connection. It keeps the connection if
// keep and the server does. Its deadline is a hang guard.
func (s *fuzzSender) sendRaw(ctx context.Context, method string, raw []byte, keep bool) fuzzAnswer {
	reused := keep && s.conn != nil
	if !reused {
		s.close()
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", s.addr)
		if err != nil {
			return fuzzAnswer{raw: true, sent: len(raw), err: err}
		}
		s.conn, s.br = conn, bufio.NewReader(conn)
	}
	a := s.exchange(method, raw)
	if a.err != nil && reused {
		// The server may have closed the kept connection; one more try on a new one.
		s.close()
		return s.sendRaw(ctx, method, raw, keep)
	}
	if !keep || a.close || a.err != nil {
		s.close()
	}
	return a
}

func (s *fuzzSender) exchange(method string, raw []byte) fuzzAnswer {
	a := fuzzAnswer{raw: true, sent: len(raw)}
	s.conn.SetDeadline(time.Now().Add(30 * time.Second))
	// The server may answer and close before it has read everything (a header
	// block over the limit); the answer is what counts, so a failed write is
	// not an error in itself.
	_, werr := s.conn.Write(raw)
	for {
		resp, err := http.ReadResponse(s.br, &http.Request{Method: method})
		if err != nil {
			a.err = fmt.Errorf("reading the answer: %w (write: %v)", err, werr)
			return a
		}
		if resp.StatusCode >= 100 && resp.StatusCode < 200 && resp.StatusCode != http.StatusSwitchingProtocols {
			continue // 100 Continue
		}
		a.status, a.header, a.close = resp.StatusCode, resp.Header, resp.Close
		a.body, a.err = io.ReadAll(resp.Body)
		resp.Body.Close()
		return a
	}
}

// fuzzStats counts answers by kind and keeps a few samples of each failure.
type fuzzStats struct {
	mu           sync.Mutex
	total, raw   int
	classes      [6]int // by status/100
	goHTTP       map[int]int
	codes        map[string]int // error codes from seqd
	failures     map[string]int
	samples      map[string][]string
	noAnswer     int
	resets       int
	resetSamples []string
	statusCount  map[int]int
}

func newFuzzStats() *fuzzStats {
	return &fuzzStats{goHTTP: map[int]int{}, codes: map[string]int{}, failures: map[string]int{},
		samples: map[string][]string{}, statusCount: map[int]int{}}
}

var snakeCase = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

func (s *fuzzStats) record(req fuzzRequest, a fuzzAnswer) {
	var failed []string
	fail := func(kind string) { failed = append(failed, kind) }
	goHTTP := false
	code := ""
	switch {
	case resetUnread(a):
	case a.err != nil:
		fail("no answer")
	case isGoHTTPAnswer(a):
		goHTTP = true
	default:
		if a.status >= 500 {
			fail("5xx")
		}
		path, _, _ := strings.Cut(req.target, "?")
		api := req.raw == nil && (strings.HasPrefix(path, "/oid") || strings.HasPrefix(path, "/seq"))
		if (a.status >= 400 || api) && a.header.Get("Cache-Control") != "no-store" {
			fail("no Cache-Control: no-store")
		}
		switch {
		case a.status >= 400 && req.method == http.MethodHead:
			if len(a.body) != 0 {
				fail("HEAD error with a body")
			}
		case a.status >= 400:
			c, _, err := apiError(a.body)
			switch {
			case err != nil:
				fail("error body not {\"error\":{\"code\",\"message\"}}")
			case !snakeCase.MatchString(c):
				fail("error code not snake_case")
			case !strings.HasPrefix(a.header.Get("Content-Type"), "application/json"):
				fail("error not application/json")
			}
			code = c
		case a.status >= 200 && a.status < 300 && api && req.method != http.MethodHead && a.status != http.StatusNoContent:
			if !strings.HasPrefix(a.header.Get("Content-Type"), "application/json") || !json.Valid(a.body) {
				fail("2xx from /oid or /seq that is not JSON")
			}
		}
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	s.total++
	if a.raw {
		s.raw++
	}
	switch {
	case resetUnread(a):
		s.resets++
		if len(s.resetSamples) < 3 {
			s.resetSamples = append(s.resetSamples, describeExchange(req, a))
		}
	case a.err != nil:
		s.noAnswer++
	case goHTTP:
		s.goHTTP[a.status]++
	default:
		s.classes[min(a.status/100, 5)]++
		s.statusCount[a.status]++
		if code != "" {
			s.codes[code]++
		}
	}
	for _, kind := range failed {
		s.failures[kind]++
		if len(s.samples[kind]) < 5 {
			s.samples[kind] = append(s.samples[kind], describeExchange(req, a))
		}
	}
}

// resetUnread reports whether a request with more than net/http may have read of it
// was answered with a reset. net/http closes a connection whose request it refuses
// (a bad request line, header or escape) without reading the rest, so the kernel
// resets it, and the reset can overtake the answer on its way to the client. What
// net/http has read when it refuses depends on how the bytes arrived, so any
// request past 1 KiB can meet this (one of 4,060 bytes was seen to).
func resetUnread(a fuzzAnswer) bool {
	return a.sent > 1024 && (errors.Is(a.err, syscall.ECONNRESET) || errors.Is(a.err, syscall.EPIPE))
}

// isGoHTTPAnswer reports whether net/http answered by itself, before any handler:
// an error with a plain-text body, or none for 417, and the connection closed.
// seqd's own errors are all JSON.
func isGoHTTPAnswer(a fuzzAnswer) bool {
	if !a.close || a.status < 400 {
		return false
	}
	ct := a.header.Get("Content-Type")
	return ct == "text/plain; charset=utf-8" || (a.status == http.StatusExpectationFailed && ct == "" && len(a.body) == 0)
}

func describeExchange(req fuzzRequest, a fuzzAnswer) string {
	via := "raw TCP"
	sent := req.raw
	if sent == nil {
		sent = frame(req, "seqd", !a.raw || soundFraming(req))
		if !a.raw {
			via = "net/http, framed here as"
		}
	}
	got := fmt.Sprintf("%d %v %q", a.status, a.header, truncate(a.body, 300))
	if a.err != nil {
		got = a.err.Error()
	}
	return fmt.Sprintf("sent (%s) %q\n\t\tgot %s", via, truncate(sent, 400), got)
}

func truncate(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	return append(b[:n:n], "…"...)
}

func (s *fuzzStats) report(t *testing.T, elapsed time.Duration, seed uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	goHTTPOther := 0
	for status, n := range s.goHTTP {
		if status != http.StatusBadRequest {
			goHTTPOther += n
		}
	}
	line := fmt.Sprintf("http fuzz: %d requests: 2xx=%d, 4xx=%d, 5xx=%d, go-http-400=%d, go-http-other=%d",
		s.total, s.classes[2], s.classes[4], s.classes[5], s.goHTTP[http.StatusBadRequest], goHTTPOther)
	if n := s.classes[1] + s.classes[3]; n > 0 {
		line += fmt.Sprintf(", 1xx+3xx=%d", n)
	}
	if s.resets > 0 {
		line += fmt.Sprintf(", reset-unread=%d", s.resets)
	}
	if s.noAnswer > 0 {
		line += fmt.Sprintf(", no-answer=%d", s.noAnswer)
	}
	t.Logf("%s, seed=%d", line, seed)
	t.Logf("http fuzz: %v, %.0f requests/s, %d over raw TCP; statuses %v; net/http's own %v; error codes %v",
		elapsed.Round(time.Millisecond), float64(s.total)/elapsed.Seconds(), s.raw,
		sortedCounts(s.statusCount), sortedCounts(s.goHTTP), sortedCounts(s.codes))
	if s.resets > 0 {
		t.Logf("http fuzz: reset-unread, for example:\n\t%s", strings.Join(s.resetSamples, "\n\t"))
	}
	for _, kind := range slices.Sorted(maps.Keys(s.failures)) {
		t.Errorf("http fuzz: %d × %s; for example:\n\t%s", s.failures[kind], kind, strings.Join(s.samples[kind], "\n\t"))
	}
}

func sortedCounts[K int | string](m map[K]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%v=%d", k, m[k]))
	}
	return "{" + strings.Join(parts, " ") + "}"
}

// Every /oid and /seq response carries Cache-Control: no-store, also the OPTIONS
// answers Echo gives itself (204 with Allow) without running any route's
// middleware. do checks the header.
func TestHTTPOptionsNoStore(t *testing.T) {
	srv := startSeqd(t, "SEQD_TOKENS="+clientToken)
	for _, path := range []string{"/oid", "/oid/5a17b9d9ab102555b9c38874", "/seq", "/seq/orders", "/seq/orders/next"} {
		r := do(t, srv.URL(), call{method: http.MethodOptions, path: path, token: clientToken})
		if r.status >= 500 {
			t.Errorf("OPTIONS %s: %d", path, r.status)
		}
	}
}
