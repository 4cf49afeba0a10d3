package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"mime"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seqd/seqd/counters"
	"github.com/seqd/seqd/httpapi"
)

// fakeSequencer is an in-memory counters.Sequencer that keeps the interface's
// contract: new names start at 1, NextN reserves contiguous values, Current reports
// ErrNotFound for unused names, Set refuses to move backwards unless forced. A test
// can make every method fail, or block until its context is done.
type fakeSequencer struct {
	strategy string
	batches  bool // NextN takes n > 1; the optimistic strategy does not

	mu     sync.Mutex
	values map[string]int64
	fail   func(ctx context.Context) error // when set, every method returns its error first
	calls  []call
}

// call records what the handler asked of the sequencer.
type call struct {
	op       string
	name     string
	n        int64
	value    int64
	force    bool
	deadline bool // the context carried a deadline
}

var _ counters.Sequencer = (*fakeSequencer)(nil)

// maxRecorded bounds the calls a fake keeps, so that fuzzing does not grow it.
const maxRecorded = 10000

func newFakeSequencer(strategy string) *fakeSequencer {
	return &fakeSequencer{
		strategy: strategy,
		batches:  strategy != counters.StrategyOptimistic,
		values:   make(map[string]int64),
	}
}

// failWith makes every method return err.
func (f *fakeSequencer) failWith(err error) {
	f.setFail(func(context.Context) error { return err })
}

// blockUntilDone makes every method wait for its context and return ctx.Err()
// bare, as a driver that does not wrap it would.
func (f *fakeSequencer) blockUntilDone() {
	f.setFail(func(ctx context.Context) error {
		<-ctx.Done()
		return ctx.Err()
	})
}

func (f *fakeSequencer) setFail(fail func(context.Context) error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fail = fail
}

// set stores a value directly, bypassing the API.
func (f *fakeSequencer) set(name string, v int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.values[name] = v
}

// value returns the stored value of name and whether it exists.
func (f *fakeSequencer) value(name string) (int64, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	v, ok := f.values[name]
	return v, ok
}

func (f *fakeSequencer) recorded() []call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

// begin records c and returns the error the method must return before doing
// anything, if any.
func (f *fakeSequencer) begin(ctx context.Context, c call) error {
	_, c.deadline = ctx.Deadline()
	f.mu.Lock()
	if len(f.calls) < maxRecorded {
		f.calls = append(f.calls, c)
	}
	fail := f.fail
	f.mu.Unlock()
	if fail != nil { // called unlocked: it may block
		if err := fail(ctx); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("fake: %s: %w: %w", c.op, counters.ErrUnavailable, err)
	}
	if c.op != "list" && !counters.ValidName(c.name) {
		return fmt.Errorf("fake: %s %q: %w", c.op, c.name, counters.ErrInvalidName)
	}
	return nil
}

func (f *fakeSequencer) Strategy() string { return f.strategy }

func (f *fakeSequencer) NextN(ctx context.Context, name string, n int64) (counters.Range, error) {
	if err := f.begin(ctx, call{op: "nextN", name: name, n: n}); err != nil {
		return counters.Range{}, err
	}
	if n < 1 || (n > 1 && !f.batches) {
		return counters.Range{}, fmt.Errorf("fake: next %d of %q: %w", n, name, counters.ErrInvalidCount)
	}
	return f.reserve(name, n)
}

func (f *fakeSequencer) reserve(name string, n int64) (counters.Range, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	last := f.values[name]
	if last > math.MaxInt64-n {
		return counters.Range{}, fmt.Errorf("fake: next %q: %w", name, counters.ErrExhausted)
	}
	f.values[name] = last + n
	return counters.Range{First: last + 1, Last: last + n}, nil
}

func (f *fakeSequencer) Current(ctx context.Context, name string) (int64, error) {
	if err := f.begin(ctx, call{op: "current", name: name}); err != nil {
		return 0, err
	}
	v, ok := f.value(name)
	if !ok {
		return 0, fmt.Errorf("fake: current %q: %w", name, counters.ErrNotFound)
	}
	return v, nil
}

func (f *fakeSequencer) Set(ctx context.Context, name string, value int64, force bool) error {
	if err := f.begin(ctx, call{op: "set", name: name, value: value, force: force}); err != nil {
		return err
	}
	if value < 0 {
		return fmt.Errorf("fake: set %q: %w", name, counters.ErrInvalidValue)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if value < f.values[name] && !force {
		return fmt.Errorf("fake: set %q to %d: %w", name, value, counters.ErrBackwards)
	}
	f.values[name] = value
	return nil
}

func (f *fakeSequencer) List(ctx context.Context) ([]counters.Sequence, error) {
	if err := f.begin(ctx, call{op: "list"}); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var list []counters.Sequence
	for name, v := range f.values {
		list = append(list, counters.Sequence{Name: name, Value: v})
	}
	slices.SortFunc(list, func(a, b counters.Sequence) int { return strings.Compare(a.Name, b.Name) })
	return list, nil
}

// fakePing is Config.Ping: nil until told otherwise.
type fakePing struct {
	mu   sync.Mutex
	fail func(ctx context.Context) error
}

func (p *fakePing) ping(ctx context.Context) error {
	p.mu.Lock()
	fail := p.fail
	p.mu.Unlock()
	if fail == nil {
		return nil
	}
	return fail(ctx)
}

func (p *fakePing) setFail(fail func(context.Context) error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fail = fail
}

// server is the API under test with its fakes.
type server struct {
	handler    http.Handler
	counter    *fakeSequencer
	optimistic *fakeSequencer
	ping       *fakePing
	metrics    *httpapi.Metrics
	logs       *bytes.Buffer // JSON log lines, at Debug and above
}

// Tokens the tests configure.
const (
	clientToken  = "client-token-1"
	clientToken2 = "client-token-2"
	adminToken   = "admin-token"
)

// newServer builds the API with one fake per strategy, a fresh metrics registry,
// a log buffer and no tokens; options adjust the Config before New.
func newServer(t testing.TB, options ...func(*httpapi.Config)) *server {
	t.Helper()
	s := &server{
		counter:    newFakeSequencer(counters.StrategyCounter),
		optimistic: newFakeSequencer(counters.StrategyOptimistic),
		ping:       &fakePing{},
		metrics:    httpapi.NewMetrics(prometheus.NewRegistry()),
		logs:       new(bytes.Buffer),
	}
	cfg := httpapi.Config{
		Sequencers: []counters.Sequencer{
			s.counter, s.optimistic,
		},
		Ping:    s.ping.ping,
		Logger:  slog.New(slog.NewJSONHandler(&lockedWriter{w: s.logs}, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Metrics: s.metrics,
	}
	for _, o := range options {
		o(&cfg)
	}
	h, err := httpapi.New(cfg)
	if err != nil {
		t.Fatalf("httpapi.New: %v", err)
	}
	s.handler = h
	return s
}

func withTokens(tokens ...string) func(*httpapi.Config) {
	return func(c *httpapi.Config) { c.Tokens = tokens }
}

func withAdmin(token string) func(*httpapi.Config) {
	return func(c *httpapi.Config) { c.AdminToken = token }
}

// withoutLogs discards the logs, so that fuzzing does not grow the buffer.
func withoutLogs(c *httpapi.Config) { c.Logger = nil }

func withTimeout(d time.Duration) func(*httpapi.Config) {
	return func(c *httpapi.Config) { c.Timeout = d }
}

// lockedWriter lets concurrent requests share the log buffer.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// newRequest builds a request; header is alternating names and values.
func newRequest(method, target, body string, header ...string) *http.Request {
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, target, r)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return req
}

// serve runs req through the handler and checks what every response must satisfy.
func (s *server) serve(t testing.TB, req *http.Request) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	s.handler.ServeHTTP(rec, req)
	checkInvariants(t, req, rec)
	return rec
}

// get serves GET target; header is alternating names and values.
func (s *server) get(t testing.TB, target string, header ...string) *httptest.ResponseRecorder {
	t.Helper()
	return s.serve(t, newRequest(http.MethodGet, target, "", header...))
}

// put serves PUT target with a JSON body and the admin token.
func (s *server) put(t testing.TB, target, body string) *httptest.ResponseRecorder {
	t.Helper()
	return s.serve(t, newRequest(http.MethodPut, target, body,
		"Content-Type", "application/json", "Authorization", "Bearer "+adminToken))
}

var snakeCase = regexp.MustCompile(`^[a-z]+(_[a-z]+)*$`)

// goWords are what Go error texts carry and API messages must not: a package prefix,
// Go type talk, Echo's error formatting.
var goWords = regexp.MustCompile(`^(counters|objectid|httpapi|json|strconv|fake|echo|readyz): |Go value|code=\d+, message=`)

// maxMessageLen bounds an error message, echoed input included (512 bytes and "…").
const maxMessageLen = 512 + len("…")

// checkInvariants asserts the rules of the whole API: /oid and /seq answers are
// never cacheable, errors have one shape, 401s name the scheme, 503s say when to
// come back, HEAD answers have no body.
func checkInvariants(t testing.TB, req *http.Request, rec *httptest.ResponseRecorder) {
	t.Helper()
	what := req.Method + " " + req.URL.String()
	if p := req.URL.Path; p == "/oid" || p == "/seq" || strings.HasPrefix(p, "/oid/") || strings.HasPrefix(p, "/seq/") {
		if got := rec.Header().Get("Cache-Control"); got != "no-store" {
			t.Errorf("%s: status %d, Cache-Control %q, want no-store", what, rec.Code, got)
		}
	}
	if req.Method == http.MethodHead {
		// 503 is /readyz's answer while the backend is down; nothing else may fail.
		if rec.Code >= 500 && rec.Code != http.StatusServiceUnavailable {
			t.Errorf("%s: status %d", what, rec.Code)
		}
		if rec.Body.Len() != 0 {
			t.Errorf("%s: body %q, want none", what, rec.Body)
		}
	} else if rec.Code >= 400 {
		wantJSONContent(t, what, rec)
		e := decodeError(t, what, rec)
		if !snakeCase.MatchString(e.Code) || e.Message == "" {
			t.Errorf("%s: error %+v: want a snake_case code and a message", what, e)
		}
		if goWords.MatchString(e.Message) {
			t.Errorf("%s: message %q speaks Go, not to the API's user", what, e.Message)
		}
		if len(e.Message) > maxMessageLen {
			t.Errorf("%s: message of %d bytes, want at most %d: %.80q…", what, len(e.Message), maxMessageLen, e.Message)
		}
	}
	switch rec.Code {
	case http.StatusUnauthorized:
		if got := rec.Header().Get("WWW-Authenticate"); !strings.HasPrefix(got, "Bearer") {
			t.Errorf("%s: 401 with WWW-Authenticate %q, want Bearer…", what, got)
		}
	case http.StatusServiceUnavailable, http.StatusTooManyRequests:
		if n, err := strconv.Atoi(rec.Header().Get("Retry-After")); err != nil || n < 1 {
			t.Errorf("%s: %d with Retry-After %q, want a number of seconds", what, rec.Code, rec.Header().Get("Retry-After"))
		}
	case http.StatusMethodNotAllowed:
		if rec.Header().Get("Allow") == "" {
			t.Errorf("%s: 405 without Allow", what)
		}
	}
}

func wantJSONContent(t testing.TB, what string, rec *httptest.ResponseRecorder) {
	t.Helper()
	ct := rec.Header().Get("Content-Type")
	if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
		t.Errorf("%s: Content-Type %q, want application/json", what, ct)
	}
}

type errorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// decodeError decodes {"error":{"code","message"}} and nothing else.
func decodeError(t testing.TB, what string, rec *httptest.ResponseRecorder) errorDetail {
	t.Helper()
	var body struct {
		Error *errorDetail `json:"error"`
	}
	if err := strictDecode(rec.Body.Bytes(), &body); err != nil || body.Error == nil {
		t.Errorf("%s: status %d, body %q is not {\"error\":{\"code\",\"message\"}}: %v", what, rec.Code, rec.Body, err)
		return errorDetail{}
	}
	return *body.Error
}

// strictDecode decodes exactly one JSON value with no unknown fields.
func strictDecode(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("data after the JSON value")
	}
	return nil
}

// wantError asserts an error answer with the given status and code.
func wantError(t testing.TB, rec *httptest.ResponseRecorder, status int, code string) errorDetail {
	t.Helper()
	if rec.Code != status {
		t.Errorf("status %d, want %d; body %s", rec.Code, status, rec.Body)
	}
	e := decodeError(t, "response", rec)
	if e.Code != code {
		t.Errorf("error code %q, want %q (message %q)", e.Code, code, e.Message)
	}
	return e
}

// decode asserts a JSON answer with the given status and decodes it strictly into T.
func decode[T any](t testing.TB, rec *httptest.ResponseRecorder, status int) T {
	t.Helper()
	var v T
	if rec.Code != status {
		t.Fatalf("status %d, want %d; body %s", rec.Code, status, rec.Body)
	}
	wantJSONContent(t, "response", rec)
	if err := strictDecode(rec.Body.Bytes(), &v); err != nil {
		t.Fatalf("decoding %s into %T: %v", rec.Body, v, err)
	}
	return v
}

// Response bodies, as a client reads them.
type (
	oidResponse struct {
		OID string `json:"oid"`
	}
	oidsResponse struct {
		OIDs []string `json:"oids"`
	}
	oidInfo struct {
		OID     string `json:"oid"`
		Time    string `json:"time"`
		Unix    int64  `json:"unix"`
		Counter uint32 `json:"counter"`
		Process string `json:"process"`
		Machine string `json:"machine"`
		Pid     uint16 `json:"pid"`
	}
	oidBounds struct {
		Time string `json:"time"`
		Min  string `json:"min"`
		Max  string `json:"max"`
	}
	nextResponse struct {
		Name     string `json:"name"`
		Value    int64  `json:"value"`
		First    int64  `json:"first"`
		Count    int64  `json:"count"`
		Strategy string `json:"strategy"`
	}
	sequence struct {
		Name  string `json:"name"`
		Value int64  `json:"value"`
	}
	listResponse struct {
		Sequences []sequence `json:"sequences"`
	}
	statusResponse struct {
		Status string `json:"status"`
	}
)

// httpBody is a request body of unknown length.
func httpBody(s string) io.ReadCloser { return io.NopCloser(strings.NewReader(s)) }
