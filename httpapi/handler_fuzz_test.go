package httpapi_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/seqd/seqd/counters"
)

// handlerInput is one request a client may send, as FuzzHandler and
// TestHandlerRandomRequests send it: the parts a client chooses, and a fault of the
// backend for the request to meet.
type handlerInput struct {
	method, target    string // the request line's, exactly as sent
	auth, contentType string // header values; none when empty
	header            string // one more header line, "Name: value"; none when empty
	body              []byte
	fault             byte // an index into backendFaults, modulo its length
}

// backendFaults are what the fakes answer every call with while a request is
// served: nothing, or a backend failure. A 5xx is seqd's answer only to one of these.
var backendFaults = []struct {
	err    error
	status int
	code   string
}{
	{nil, 0, ""},
	{fmt.Errorf("counters: next %q: %w: connection refused", "x", counters.ErrUnavailable), http.StatusServiceUnavailable, "unavailable"},
	{fmt.Errorf("counters: next %q: %w", "x", counters.ErrContention), http.StatusServiceUnavailable, "contention"},
	{fmt.Errorf("counters: next %q: %w: the seq is a string", "x", counters.ErrInvalidCounter), http.StatusInternalServerError, "invalid_counter"},
	{errors.New("an error the backend has no word for"), http.StatusInternalServerError, "internal"},
}

// frame writes in as HTTP/1.1 bytes.
func (in handlerInput) frame() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: seqd\r\n", in.method, in.target)
	for _, h := range [][2]string{{"Authorization", in.auth}, {"Content-Type", in.contentType}} {
		if h[1] != "" {
			fmt.Fprintf(&b, "%s: %s\r\n", h[0], h[1])
		}
	}
	if in.header != "" {
		b.WriteString(in.header + "\r\n")
	}
	if len(in.body) > 0 {
		fmt.Fprintf(&b, "Content-Length: %d\r\n", len(in.body))
	}
	b.WriteString("\r\n")
	b.Write(in.body)
	return b.Bytes()
}

// outcome is how a request went.
type outcome int

const (
	unparsed outcome = iota // net/http's parser refused it: the handler never sees it
	answered                // the handler answered, with no backend fault
	faulted                 // the handler answered while the backend failed
)

// serveInput frames in and reads it back with net/http's parser, so that the
// handler gets only what a real server would hand it, then serves it with the
// input's backend fault and checks the answer: checkInvariants, and no 5xx but the
// fault's own.
func (s *server) serveInput(t testing.TB, in handlerInput) (outcome, *httptest.ResponseRecorder) {
	t.Helper()
	req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(in.frame())))
	if err != nil {
		return unparsed, nil
	}
	req.RemoteAddr = "192.0.2.1:40000"
	fault := backendFaults[int(in.fault)%len(backendFaults)]
	if fault.err != nil {
		s.counter.FailWith(fault.err)
		s.optimistic.FailWith(fault.err)
		// A ping is the driver's, whose errors are never the domain's sentinels.
		s.ping.setFail(func(context.Context) error { return errors.New("ping: " + fault.err.Error()) })
		defer func() {
			s.counter.FailFunc(nil)
			s.optimistic.FailFunc(nil)
			s.ping.setFail(nil)
		}()
	}
	rec := s.serve(t, req)
	what := func() string { return fmt.Sprintf("%q", truncate(in.frame(), 300)) }
	if rec.Code >= 500 {
		var code string
		if req.Method != http.MethodHead {
			code = decodeError(t, what(), rec).Code
		}
		// /readyz answers any failure of the backend with 503 unavailable.
		readyz := rec.Code == http.StatusServiceUnavailable && (code == "unavailable" || req.Method == http.MethodHead)
		if fault.err == nil || !(readyz || rec.Code == fault.status && code == fault.code) {
			t.Errorf("%s, backend fault %v: status %d, code %q", what(), fault.err, rec.Code, code)
		}
	}
	// A value handed out is JSON (204 is the answer to OPTIONS).
	if p := req.URL.Path; rec.Code/100 == 2 && rec.Code != http.StatusNoContent && req.Method != http.MethodHead && (strings.HasPrefix(p, "/oid") || strings.HasPrefix(p, "/uuid") || strings.HasPrefix(p, "/seq")) {
		if mt, _, err := mime.ParseMediaType(rec.Header().Get("Content-Type")); err != nil || mt != "application/json" || !json.Valid(rec.Body.Bytes()) {
			t.Errorf("%s: status %d, %q, body %.200q: want JSON", what(), rec.Code, rec.Header().Get("Content-Type"), rec.Body)
		}
	}
	if fault.err != nil {
		return faulted, rec
	}
	return answered, rec
}

func truncate(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return fmt.Sprintf("%s… (%d bytes)", b[:n], len(b))
}

// FuzzHandler sends the handler whatever a client may send through net/http: any
// method, request target, token, content type, one more header and body, while the
// backend works or fails. It checks what every answer must satisfy (checkInvariants:
// no-store, the one error shape, codes, messages for the API's users and cut short,
// 401 with WWW-Authenticate, 503 and 429 with Retry-After, HEAD without a body) and
// that no 5xx comes but a backend fault's. Each input gets a server of its own, so
// that a failure repeats from its input alone.
func FuzzHandler(f *testing.F) {
	for _, in := range handlerSeeds() {
		f.Add(in.method, in.target, in.auth, in.contentType, in.header, in.body, in.fault)
	}
	f.Fuzz(func(t *testing.T, method, target, auth, contentType, header string, body []byte, fault byte) {
		s := newServer(t, withoutLogs, withTokens(clientToken, clientToken2), withAdmin(adminToken))
		s.serveInput(t, handlerInput{method, target, auth, contentType, header, body, fault})
	})
}

// handlerSeeds are the seed corpus of FuzzHandler: each path, odd segment, query,
// token, content type, header and body of the random requests, once, in a request
// that reaches it, and each backend fault.
func handlerSeeds() []handlerInput {
	client, admin := "Bearer "+clientToken, "Bearer "+adminToken
	var seeds []handlerInput
	add := func(in handlerInput) { seeds = append(seeds, in) }
	for _, p := range randomPaths {
		add(handlerInput{method: "GET", target: strings.NewReplacer("{name}", "orders", "{hex}", "5a17b9d9ab102555b9c38874",
			"{time}", "1511504345", "{odd}", "x").Replace(p.s), auth: client})
	}
	for _, m := range randomMethods {
		add(handlerInput{method: m.s, target: "/seq/orders/next", auth: client})
	}
	for _, seg := range randomOddSegments {
		add(handlerInput{method: "GET", target: "/seq/" + seg + "/next", auth: client})
		add(handlerInput{method: "GET", target: "/oid/at/" + seg, auth: client})
	}
	for _, h := range randomBadHex {
		add(handlerInput{method: "GET", target: "/oid/" + h, auth: client})
	}
	for _, tm := range randomTimes {
		add(handlerInput{method: "GET", target: "/oid/at/" + tm, auth: client})
	}
	for _, q := range randomOddQueries {
		add(handlerInput{method: "GET", target: "/oid?" + q, auth: client})
	}
	for _, target := range []string{"/uuid", "/uuid?count=3", "/uuid?count=10001", "/uuid/017f22e2-79b0-7cc3-98c4-dc0c0c07398f",
		"/uuid/017F22E2-79B0-7CC3-98C4-DC0C0C07398", "/uuid/at/2026-11-25T12:00:00.123Z", "/uuid/at/281474976711"} {
		add(handlerInput{method: "GET", target: target, auth: client})
	}
	for _, c := range randomCounts {
		add(handlerInput{method: "POST", target: "/seq/orders/next?count=" + c, auth: client})
	}
	for _, q := range []string{"strategy=optimistic&count=2", "strategy=magic", "layout=legacy&count=3", "force=yes", "count=1&count=2"} {
		add(handlerInput{method: "GET", target: "/seq/orders/next?" + q, auth: client})
		add(handlerInput{method: "PUT", target: "/seq/orders?" + q, auth: admin, body: []byte(`{"value":5}`)})
	}
	for _, a := range randomBadAuthorizations {
		add(handlerInput{method: "GET", target: "/oid", auth: a})
		add(handlerInput{method: "PUT", target: "/seq/orders", auth: a, body: []byte(`{"value":1}`)})
	}
	for _, ct := range randomContentTypes {
		add(handlerInput{method: "PUT", target: "/seq/orders", auth: admin, contentType: ct, body: []byte(`{"value":7}`)})
	}
	for _, m := range randomModes {
		add(handlerInput{method: "PUT", target: "/seq/orders", auth: admin, contentType: "application/json", body: []byte(`{"mode":` + m + `}`)})
	}
	for _, b := range randomBounds {
		add(handlerInput{method: "PUT", target: "/seq/orders", auth: admin, contentType: "application/json",
			body: []byte(`{"mode":"cached","min_block":` + b + `,"max_block":` + b + `}`)})
	}
	add(handlerInput{method: "PUT", target: "/seq/orders?strategy=optimistic", auth: admin, body: []byte(`{"value":5,"mode":"cached"}`)})
	for _, v := range randomValues {
		add(handlerInput{method: "PUT", target: "/seq/orders?force=true", auth: admin, contentType: "application/json", body: []byte(`{"value":` + v + `}`)})
	}
	for _, b := range randomBodies {
		add(handlerInput{method: "PUT", target: "/seq/orders", auth: admin, contentType: "application/json", body: []byte(b)})
	}
	for _, b := range randomBodiesAtLimit {
		add(handlerInput{method: "PUT", target: "/seq/orders", auth: admin, body: b})
	}
	for _, h := range randomHeaders {
		add(handlerInput{method: "GET", target: "/seq/orders/next", auth: client, header: h.name + ": " + h.values[0]})
	}
	for i := range backendFaults {
		for _, target := range []string{"/seq/orders/next", "/seq/orders", "/seq", "/seq/orders/status", "/status", "/readyz"} {
			add(handlerInput{method: "GET", target: target, auth: client, fault: byte(i)})
		}
		add(handlerInput{method: "PUT", target: "/seq/orders", auth: admin, body: []byte(`{"value":1}`), fault: byte(i)})
		add(handlerInput{method: "PUT", target: "/seq/orders", auth: admin, body: []byte(`{"value":1,"mode":"cached"}`), fault: byte(i)})
		add(handlerInput{method: "HEAD", target: "/readyz", fault: byte(i)})
	}
	return seeds
}
