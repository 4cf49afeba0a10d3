//go:build integration

package integration

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// rawCase is bytes a client writes on one connection, and the statuses of the
// answers it must read back, in order, before the connection ends.
type rawCase struct {
	name      string
	raw       string
	halfClose bool  // close the writing side after raw: a client that stops mid-request
	want      []int // the final statuses, in order; none: the connection closes unanswered
	goHTTP    bool  // net/http answers, before seqd's handler: plain text, connection closed
}

// rawCases are the requests only a raw socket can send: broken request lines and
// versions, headers and framing net/http refuses or must get right, huge headers,
// half-written requests, pipelining. What is inside a well-framed request (paths,
// escapes, queries, tokens, bodies) is FuzzHandler's, in process.
func rawCases() []rawCase {
	auth := "Authorization: Bearer " + clientToken + "\r\n"
	admin := "Authorization: Bearer " + adminToken + "\r\n"
	get := func(target string) string {
		return "GET " + target + " HTTP/1.1\r\nHost: localhost\r\n" + auth + "\r\n"
	}
	put := func(extra, body string) string {
		return "PUT /seq/raw HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n" + admin + extra + "\r\n" + body
	}
	return []rawCase{
		// Request lines and versions.
		{name: "no target", raw: "GET\r\n\r\n", want: []int{400}, goHTTP: true},
		{name: "no version", raw: "GET /oid\r\n\r\n", want: []int{400}, goHTTP: true},
		{name: "space in target", raw: "GET /seq/a b/next HTTP/1.1\r\nHost: localhost\r\n" + auth + "\r\n", want: []int{400}, goHTTP: true},
		{name: "binary", raw: "\x00\x01\x02\x03\r\n\r\n", want: []int{400}, goHTTP: true},
		{name: "TLS hello", raw: "\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03\r\n\r\n", want: []int{400}, goHTTP: true},
		{name: "HTTP/9.9", raw: "GET /oid HTTP/9.9\r\nHost: localhost\r\n\r\n", want: []int{505}, goHTTP: true},
		// net/http hands it on as a request for "*", found nowhere, and closes.
		{name: "HTTP/2 preface", raw: "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", want: []int{404}},
		{name: "HTTP/1.0 without Host", raw: "GET /oid HTTP/1.0\r\n" + auth + "\r\n", want: []int{200}},
		{name: "OPTIONS *", raw: "OPTIONS * HTTP/1.1\r\nHost: localhost\r\n\r\n", want: []int{200}},
		{name: "CONNECT", raw: "CONNECT 127.0.0.1:1 HTTP/1.1\r\nHost: localhost\r\n" + auth + "\r\n", want: []int{404}},
		{name: "empty line first", raw: "\r\n" + get("/oid"), want: []int{400}, goHTTP: true},
		{name: "lower-case method", raw: "get /oid HTTP/1.1\r\nHost: localhost\r\n" + auth + "\r\n", want: []int{405}},
		{name: "absolute form", raw: get("http://localhost/oid"), want: []int{200}},
		{name: "absolute form, another host", raw: get("http://evil.example/oid"), want: []int{421}}, // the URL's host is the Host
		{name: "control byte in query", raw: get("/oid?count=\x01"), want: []int{400}, goHTTP: true},
		{name: "bad escape in path", raw: get("/seq/%zz/next"), want: []int{400}, goHTTP: true},
		{name: "raw UTF-8 in path", raw: get("/seq/\xc3\xa9/next"), want: []int{400}},
		{name: "request line of 30,000 bytes", raw: get("/seq/" + strings.Repeat("n", 30000) + "/next"), want: []int{400}},
		// Past seqd's 32 KB bound on a request's header (the request line counts):
		// net/http's 431, plain text.
		{name: "request line of 60,000 bytes", raw: get("/seq/" + strings.Repeat("n", 60000) + "/next"), want: []int{431}, goHTTP: true},

		// Headers.
		{name: "no Host", raw: "GET /oid HTTP/1.1\r\n" + auth + "\r\n", want: []int{400}, goHTTP: true},
		{name: "two Hosts", raw: "GET /oid HTTP/1.1\r\nHost: a\r\nHost: b\r\n" + auth + "\r\n", want: []int{400}, goHTTP: true},
		{name: "header without colon", raw: "GET /oid HTTP/1.1\r\nHost: localhost\r\nNoColon\r\n\r\n", want: []int{400}, goHTTP: true},
		{name: "NUL in a header", raw: "GET /oid HTTP/1.1\r\nHost: localhost\r\nX-Nul: a\x00b\r\n" + auth + "\r\n", want: []int{400}, goHTTP: true},
		{name: "folded header", raw: "GET /oid HTTP/1.1\r\nHost: localhost\r\nX-Folded: a\r\n b\r\n" + auth + "\r\n", want: []int{200}},
		{name: "h2c upgrade", raw: "GET /oid HTTP/1.1\r\nHost: localhost\r\nUpgrade: h2c\r\nConnection: Upgrade, HTTP2-Settings\r\n" +
			"HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n" + auth + "\r\n", want: []int{200}},
		{name: "bare LF", raw: "GET /oid HTTP/1.1\nHost: localhost\n" + strings.TrimSuffix(auth, "\r\n") + "\n\n", want: []int{200}},
		{name: "header block past 32 KiB", raw: "GET /oid HTTP/1.1\r\nHost: localhost\r\nX-Big: " + strings.Repeat("b", 32<<10+8192) + "\r\n\r\n",
			want: []int{431}, goHTTP: true},
		{name: "header block past 1 MiB", raw: "GET /oid HTTP/1.1\r\nHost: localhost\r\nX-Big: " + strings.Repeat("b", 1<<20+8192) + "\r\n\r\n",
			want: []int{431}, goHTTP: true},

		// Lengths and chunking.
		{name: "negative Content-Length", raw: put("Content-Length: -1\r\n", ""), want: []int{400}, goHTTP: true},
		{name: "two Content-Lengths", raw: put("Content-Length: 1\r\nContent-Length: 2\r\n", "ab"), want: []int{400}, goHTTP: true},
		{name: "unknown Transfer-Encoding", raw: put("Transfer-Encoding: gzip\r\n", ""), want: []int{501}, goHTTP: true},
		// What request smuggling is made of: net/http reads the chunks and drops
		// Content-Length, so seqd sees an empty body.
		{name: "Content-Length and chunked", raw: put("Content-Length: 5\r\nTransfer-Encoding: chunked\r\n", "0\r\n\r\n"), want: []int{400}},
		{name: "chunked", raw: put("Transfer-Encoding: chunked\r\n", "b\r\n{\"value\":1}\r\n0\r\n\r\n"), want: []int{200}},
		{name: "bad chunk size", raw: put("Transfer-Encoding: chunked\r\n", "zz\r\n{\"value\":1}\r\n0\r\n\r\n"), want: []int{400}},
		{name: "chunked past the body limit", raw: put("Transfer-Encoding: chunked\r\n", "1001\r\n"+strings.Repeat(" ", 4097)+"\r\n0\r\n\r\n"),
			want: []int{413}},
		{name: "Expect: 100-continue", raw: put("Expect: 100-continue\r\nContent-Length: 11\r\n", `{"value":2}`), want: []int{200}},

		// Half-written requests, and several on one connection.
		{name: "header cut short", raw: "GET /oid HTTP/1.1\r\nHost: localhost\r\n", halfClose: true, want: []int{400}, goHTTP: true},
		// net/http ends the request's context when the body ends early, as when a
		// client leaves: seqd's 499.
		{name: "body cut short", raw: put("Content-Length: 11\r\n", `{"val`), halfClose: true, want: []int{499}},
		{name: "pipelined", raw: get("/oid?count=0") + get("/oid") + "DELETE /oid HTTP/1.1\r\nHost: localhost\r\n" + auth + "\r\n" + get("/healthz"),
			want: []int{400, 200, 405, 200}},
	}
}

// TestRawHTTP writes each of rawCases on a connection of its own to a real seqd
// and reads every answer: the statuses expected, seqd's errors in the documented
// JSON shape with no-store, never a 5xx from seqd, and seqd alive and without a
// panic at the end.
func TestRawHTTP(t *testing.T) {
	srv := startSeqd(t, "SEQD_TOKENS="+clientToken, "SEQD_ADMIN_TOKEN="+adminToken)
	for _, tc := range rawCases() {
		t.Run(tc.name, func(t *testing.T) {
			answers, err := exchangeRaw(srv.Addr(), tc)
			var got []int
			for _, a := range answers {
				got = append(got, a.StatusCode)
				checkRawAnswer(t, tc, a)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("statuses %v, want %v (then: %v)", got, tc.want, err)
			}
		})
	}
	if out := srv.Output(); strings.Contains(out, "panic") {
		t.Errorf("seqd's output shows a panic:\n%s", out)
	}
	do(t, srv.URL(), call{path: "/oid", token: clientToken}).want(t, http.StatusOK, nil)
}

type rawAnswer struct {
	*http.Response
	body []byte
}

// exchangeRaw writes tc.raw on a new connection while it reads the final answers,
// until the server closes the connection or len(tc.want) came, and returns them
// with what ended the reading. Reading as it writes, a client gets the answer to a
// request refused half-way (a header block too large) before the server hangs up.
func exchangeRaw(addr string, tc rawCase) ([]rawAnswer, error) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	conn.SetDeadline(time.Now().Add(30 * time.Second)) // a hang guard
	var wg sync.WaitGroup
	defer func() {
		conn.Close() // ends the write too, if the server stopped reading
		wg.Wait()
	}()
	wg.Go(func() {
		// The server may answer and close before it has read everything: the
		// answer is what counts, not the write.
		if _, err := io.WriteString(conn, tc.raw); err == nil && tc.halfClose {
			conn.(*net.TCPConn).CloseWrite()
		}
	})
	br := bufio.NewReader(conn)
	var answers []rawAnswer
	method, _, _ := strings.Cut(tc.raw, " ") // no case sends HEAD, whose answer has no body
	for len(answers) < max(1, len(tc.want)) {
		resp, err := http.ReadResponse(br, &http.Request{Method: method})
		if err != nil {
			return answers, err
		}
		if resp.StatusCode == http.StatusContinue {
			continue
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		answers = append(answers, rawAnswer{resp, body})
		if err != nil || resp.Close {
			return answers, err
		}
	}
	return answers, nil
}

// checkRawAnswer checks who answered and how: net/http in plain text, closing the
// connection; seqd never with a 5xx, and with its errors in the documented shape.
func checkRawAnswer(t *testing.T, tc rawCase, a rawAnswer) {
	t.Helper()
	if tc.goHTTP {
		if ct := a.Header.Get("Content-Type"); ct != "text/plain; charset=utf-8" || !a.Close {
			t.Errorf("%d with Content-Type %q, close %v: want net/http's plain-text answer, closing", a.StatusCode, ct, a.Close)
		}
		return
	}
	if a.StatusCode >= 500 {
		t.Errorf("seqd answered %d: %s", a.StatusCode, a.body)
	}
	if a.StatusCode >= 400 {
		if a.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("%d without Cache-Control: no-store", a.StatusCode)
		}
		var e struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		if err := json.Unmarshal(a.body, &e); err != nil || e.Error.Code == "" || e.Error.Message == "" {
			t.Errorf("%d with body %q: want {\"error\":{\"code\",\"message\"}}", a.StatusCode, a.body)
		}
	}
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
