package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seqd/seqd/counters"
	"github.com/seqd/seqd/httpapi"
	"github.com/seqd/seqd/internal/memseq"
)

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
	counter    *memseq.Sequencer
	optimistic *memseq.Sequencer
	ping       *fakePing
	metrics    *httpapi.Metrics
	logs       *bytes.Buffer // JSON log lines, at Debug and above
	// skipContract leaves out checkContract, for a test whose fakes answer what
	// the real backends never do.
	skipContract bool
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
		counter:    memseq.New(counters.StrategyCounter),
		optimistic: memseq.New(counters.StrategyOptimistic),
		ping:       &fakePing{},
		metrics:    httpapi.NewMetrics(prometheus.NewRegistry()),
		logs:       new(bytes.Buffer),
	}
	cfg := httpapi.Config{
		Sequencers: []counters.Sequencer{
			// The optimistic strategy has no modes: hide the fake's mode methods, as
			// the real one has none.
			s.counter, withoutModes{s.optimistic},
		},
		Ping: s.ping.ping,
		// httptest.NewRequest's Host: the tests of the Host check set their own.
		AllowedHosts: []string{"example.com"},
		// A ping a request, so that a test sees the backend go down at once;
		// TestReadyzPingsOnceASecond tests the default.
		ReadyInterval: time.Nanosecond,
		Logger:        slog.New(slog.NewJSONHandler(&lockedWriter{w: s.logs}, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Metrics:       s.metrics,
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

// withoutModes is a Sequencer without SetMode or BlockStatus.
type withoutModes struct{ counters.Sequencer }

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

// serve runs req through the handler and checks what every response must satisfy,
// and that request and answer keep openapi.json's contract (checkContract).
func (s *server) serve(t testing.TB, req *http.Request) *httptest.ResponseRecorder {
	t.Helper()
	body := readBody(t, req)
	rec := httptest.NewRecorder()
	s.handler.ServeHTTP(rec, req)
	checkInvariants(t, req, rec)
	s.checkContract(t, req, body, rec)
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

var snakeCase = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// goWords are what Go error texts carry and API messages must not: a package prefix,
// Go type talk, Echo's error formatting.
var goWords = regexp.MustCompile(`^(counters|objectid|uuidv7|httpapi|json|strconv|fake|memseq|echo|readyz): |Go value|code=\d+, message=`)

// maxMessageLen bounds an error message, echoed input included (512 bytes and "…").
const maxMessageLen = 512 + len("…")

// checkInvariants asserts the rules of the whole API: /oid, /uuid, /snowflake, /seq and /status
// answers are never cacheable, errors have one shape, 401s name the scheme, 503s say when to
// come back, HEAD answers have no body.
func checkInvariants(t testing.TB, req *http.Request, rec *httptest.ResponseRecorder) {
	t.Helper()
	what := req.Method + " " + req.URL.String()
	if p := req.URL.Path; p == "/oid" || p == "/uuid" || p == "/snowflake" || p == "/seq" || p == "/status" || strings.HasPrefix(p, "/oid/") || strings.HasPrefix(p, "/uuid/") || strings.HasPrefix(p, "/snowflake/") || strings.HasPrefix(p, "/seq/") {
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
		// The status page asks a browser for Basic credentials first; the API never does.
		got := rec.Header().Values("WWW-Authenticate")
		if req.URL.Path == "/status" && len(got) > 0 && got[0] == `Basic realm="seqd"` {
			got = got[1:]
		}
		if len(got) != 1 || !strings.HasPrefix(got[0], "Bearer") {
			t.Errorf("%s: 401 with WWW-Authenticate %q, want Bearer… (after Basic on /status)", what, got)
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
		Name     string      `json:"name"`
		Value    int64       `json:"value"`
		Mode     string      `json:"mode"`
		MinBlock int64       `json:"min_block"`
		MaxBlock int64       `json:"max_block"`
		Blocks   blockCounts `json:"blocks"` // zero when absent
	}
	blockCounts struct {
		Reserved    int64 `json:"reserved"`
		Served      int64 `json:"served"`
		Returned    int64 `json:"returned"`
		Unaccounted int64 `json:"unaccounted"`
	}
	listResponse struct {
		Sequences []sequence `json:"sequences"`
		Next      string     `json:"next"` // absent on the last page
	}
	statusResponse struct {
		Status string `json:"status"`
	}
	healthResponse struct {
		Status    string `json:"status"`
		Snowflake struct {
			Layout string `json:"layout"`
			Worker *int   `json:"worker"`
			Until  string `json:"until"`
		} `json:"snowflake"`
	}
)

// httpBody is a request body of unknown length.
func httpBody(s string) io.ReadCloser { return io.NopCloser(strings.NewReader(s)) }
