//go:build integration

package integration

import (
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/seqd/seqd/internal/proc"
	"github.com/seqd/seqd/objectid"
)

const (
	clientToken = "client-token-e2e"
	adminToken  = "admin-token-e2e"
)

// seqdURI is the backend's connection string as seqd takes it.
func seqdURI() string {
	if !be.Direct {
		return be.URI
	}
	u, err := url.Parse(be.URI)
	if err != nil {
		return be.URI
	}
	q := u.Query()
	q.Set("directConnection", "true")
	u.RawQuery = q.Encode()
	if u.Path == "" {
		u.Path = "/"
	}
	return u.String()
}

// startSeqd builds and starts the real seqd against the suite's backend, on a
// database of the test's own, and stops it when the test ends.
func startSeqd(t *testing.T, env ...string) *proc.Seqd {
	t.Helper()
	return startSeqdAt(t, seqdURI(), be.Database(t).Name(), env...)
}

// call is one HTTP exchange with seqd.
type call struct {
	method, path, token, body, contentType string
}

type reply struct {
	status int
	header http.Header
	body   []byte
}

func do(t *testing.T, base string, c call) reply {
	t.Helper()
	if c.method == "" {
		c.method = http.MethodGet
	}
	var body io.Reader
	if c.body != "" {
		body = strings.NewReader(c.body)
	}
	req, err := http.NewRequestWithContext(testContext(t), c.method, base+c.path, body)
	if err != nil {
		t.Fatal(err)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if c.contentType != "" {
		req.Header.Set("Content-Type", c.contentType)
	} else if c.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", c.method, c.path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	r := reply{status: resp.StatusCode, header: resp.Header, body: b}
	if strings.HasPrefix(c.path, "/oid") || strings.HasPrefix(c.path, "/seq") {
		if got := resp.Header.Get("Cache-Control"); got != "no-store" {
			t.Errorf("%s %s: Cache-Control %q, want no-store", c.method, c.path, got)
		}
	}
	return r
}

// want checks the status and decodes the JSON body into v (if not nil).
func (r reply) want(t *testing.T, status int, v any) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d; body %s", r.status, status, r.body)
	}
	if v != nil {
		if err := json.Unmarshal(r.body, v); err != nil {
			t.Fatalf("body %s: %v", r.body, err)
		}
	}
}

// wantError checks an error reply: status, JSON shape and code.
func (r reply) wantError(t *testing.T, status int, code string) {
	t.Helper()
	var e struct {
		Error struct{ Code, Message string }
	}
	r.want(t, status, &e)
	if e.Error.Code != code || e.Error.Message == "" {
		t.Fatalf("error %+v, want code %q and a message", e.Error, code)
	}
}

type nextReply struct {
	Name     string
	Value    int64
	First    int64
	Count    int64
	Strategy string
}

type seqReply struct {
	Name  string
	Value int64
}

// TestEndToEnd starts the real program against the backend and goes through every
// row of the API table over HTTP.
func TestEndToEnd(t *testing.T) {
	srv := startSeqd(t, "SEQD_TOKENS=other,"+clientToken, "SEQD_ADMIN_TOKEN="+adminToken)
	base := srv.URL()
	get := func(path string) reply { return do(t, base, call{path: path, token: clientToken}) }

	t.Run("oid", func(t *testing.T) {
		var r struct{ OID string }
		get("/oid").want(t, 200, &r)
		if _, err := objectid.Parse(r.OID); err != nil || strings.ToLower(r.OID) != r.OID {
			t.Errorf("oid %q: %v", r.OID, err)
		}
	})
	t.Run("oid count", func(t *testing.T) {
		var r struct{ OIDs []string }
		get("/oid?count=500").want(t, 200, &r)
		if len(r.OIDs) != 500 {
			t.Fatalf("%d ids, want 500", len(r.OIDs))
		}
		for i := 1; i < len(r.OIDs); i++ {
			if r.OIDs[i-1] >= r.OIDs[i] {
				t.Fatalf("ids %d and %d not increasing: %s, %s", i-1, i, r.OIDs[i-1], r.OIDs[i])
			}
		}
		get("/oid?count=10001").wantError(t, 400, "invalid_count")
	})
	t.Run("oid legacy", func(t *testing.T) {
		host, err := os.Hostname()
		if err != nil {
			t.Skip("no hostname:", err)
		}
		sum := md5.Sum([]byte(host))
		var r struct{ OIDs []string }
		get("/oid?layout=legacy&count=3").want(t, 200, &r)
		for _, s := range r.OIDs {
			id := objectid.MustParse(s)
			if m := id.Machine(); hex.EncodeToString(m[:]) != hex.EncodeToString(sum[:3]) {
				t.Errorf("legacy id %s: machine %x, want md5(hostname)[:3] = %x", s, m, sum[:3])
			}
			if int(id.Pid()) != srv.Pid()&0xffff {
				t.Errorf("legacy id %s: pid %d, want seqd's %d", s, id.Pid(), srv.Pid())
			}
		}
		var one struct{ OID string }
		get("/oid?layout=legacy").want(t, 200, &one)
		get("/oid?layout=bogus").wantError(t, 400, "invalid_layout")
	})
	t.Run("oid decode", func(t *testing.T) {
		var r struct {
			OID, Time, Process, Machine string
			Unix, Counter               int64
			Pid                         int
		}
		get("/oid/5A17B9D9AB102555B9C38874").want(t, 200, &r)
		if r.OID != "5a17b9d9ab102555b9c38874" || r.Unix != 1511504345 || r.Time != "2017-11-24T06:19:05Z" ||
			r.Process != "ab102555b9" || r.Counter != 0xc38874 || r.Machine != "ab1025" || r.Pid != 0x55b9 {
			t.Errorf("decoded %+v", r)
		}
		get("/oid/5a17b9d9ab102555b9c3887").wantError(t, 400, "invalid_id")
		get("/oid/5a17b9d9ab102555b9c3887g").wantError(t, 400, "invalid_id")
	})
	t.Run("oid at", func(t *testing.T) {
		var r struct{ Time, Min, Max string }
		get("/oid/at/2012-12-11T16:00:00.75Z").want(t, 200, &r)
		if r.Time != "2012-12-11T16:00:00Z" || r.Min != "50c758800000000000000000" || r.Max != "50c75880ffffffffffffffff" {
			t.Errorf("bounds %+v", r)
		}
		get("/oid/at/1355241600").want(t, 200, &r)
		if r.Min != "50c758800000000000000000" {
			t.Errorf("unix bounds %+v", r)
		}
		get("/oid/at/yesterday").wantError(t, 400, "invalid_time")
		get("/oid/at/4294967296").wantError(t, 400, "invalid_time")
	})

	t.Run("seq next", func(t *testing.T) {
		var r nextReply
		get("/seq/orders/next").want(t, 200, &r)
		if r != (nextReply{"orders", 1, 1, 1, "counter"}) {
			t.Errorf("first next: %+v", r)
		}
		do(t, base, call{method: "POST", path: "/seq/orders/next", token: clientToken}).want(t, 200, &r)
		if r.Value != 2 || r.First != 2 {
			t.Errorf("POST next: %+v", r)
		}
		get("/seq/orders/next?count=1000").want(t, 200, &r)
		if r.First != 3 || r.Value != 1002 || r.Count != 1000 {
			t.Errorf("count=1000: %+v", r)
		}
		get("/seq/orders/next?count=0").wantError(t, 400, "invalid_count")
		get("/seq/orders/next?count=1000001").wantError(t, 400, "invalid_count")
		get("/seq/-orders/next").wantError(t, 400, "invalid_name")
		get("/seq/orders/next?strategy=magic").wantError(t, 400, "invalid_strategy")
	})
	t.Run("seq optimistic", func(t *testing.T) {
		var r nextReply
		get("/seq/orders/next?strategy=optimistic").want(t, 200, &r)
		if r != (nextReply{"orders", 1, 1, 1, "optimistic"}) {
			t.Errorf("optimistic keeps its own state: %+v", r)
		}
		get("/seq/orders/next?strategy=optimistic&count=2").wantError(t, 400, "invalid_count")
		var cur seqReply
		get("/seq/orders?strategy=optimistic").want(t, 200, &cur)
		if cur.Value != 1 {
			t.Errorf("optimistic current %+v", cur)
		}
	})
	t.Run("seq current", func(t *testing.T) {
		var r seqReply
		get("/seq/orders").want(t, 200, &r)
		if r != (seqReply{"orders", 1002}) {
			t.Errorf("current %+v", r)
		}
		get("/seq/never-used").wantError(t, 404, "sequence_not_found")
	})
	t.Run("seq set", func(t *testing.T) {
		put := func(path, token, body string) reply {
			return do(t, base, call{method: "PUT", path: path, token: token, body: body})
		}
		put("/seq/invoices", "", `{"value":100}`).wantError(t, 401, "unauthorized")
		put("/seq/invoices", clientToken, `{"value":100}`).wantError(t, 403, "forbidden")
		var r seqReply
		put("/seq/invoices", adminToken, `{"value":100}`).want(t, 200, &r)
		if r != (seqReply{"invoices", 100}) {
			t.Errorf("set: %+v", r)
		}
		var n nextReply
		get("/seq/invoices/next").want(t, 200, &n)
		if n.Value != 101 {
			t.Errorf("next after set 100: %+v", n)
		}
		put("/seq/invoices", adminToken, `{"value":5}`).wantError(t, 409, "backwards")
		put("/seq/invoices?force=true", adminToken, `{"value":5}`).want(t, 200, &r)
		get("/seq/invoices/next").want(t, 200, &n)
		if n.Value != 6 {
			t.Errorf("next after forced set 5: %+v", n)
		}
		put("/seq/invoices", adminToken, `{"value":"07"}`).wantError(t, 400, "invalid_value")
		put("/seq/invoices", adminToken, `{"value":9007199254740993}`).wantError(t, 400, "invalid_value") // past 2^53-1: send a string
		put("/seq/invoices", adminToken, `{"valeu":7}`).wantError(t, 400, "invalid_body")
		do(t, base, call{method: "PUT", path: "/seq/invoices", token: adminToken, body: "value=7",
			contentType: "application/x-www-form-urlencoded"}).wantError(t, 415, "unsupported_media_type")
		put("/seq/invoices", adminToken, `{"value":`+strings.Repeat("1", 5000)+`}`).wantError(t, 413, "body_too_large")
	})
	t.Run("seq list", func(t *testing.T) {
		var r struct{ Sequences []seqReply }
		get("/seq").want(t, 200, &r)
		got := map[string]int64{}
		for _, s := range r.Sequences {
			got[s.Name] = s.Value
		}
		if got["orders"] != 1002 || got["invoices"] != 6 {
			t.Errorf("list %+v", r.Sequences)
		}
	})

	t.Run("auth", func(t *testing.T) {
		r := do(t, base, call{path: "/oid"})
		r.wantError(t, 401, "unauthorized")
		if !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("WWW-Authenticate %q", r.header.Get("WWW-Authenticate"))
		}
		do(t, base, call{path: "/seq/orders/next", token: "wrong"}).wantError(t, 401, "unauthorized")
		do(t, base, call{path: "/oid", token: adminToken}).want(t, 200, nil)
	})
	t.Run("errors", func(t *testing.T) {
		do(t, base, call{method: "DELETE", path: "/oid", token: clientToken}).wantError(t, 405, "method_not_allowed")
		do(t, base, call{path: "/nowhere"}).wantError(t, 404, "not_found")
		get("/oid?cuont=5").wantError(t, 400, "unknown_parameter")
	})
	t.Run("operations", func(t *testing.T) {
		do(t, base, call{path: "/healthz"}).want(t, 200, nil)
		do(t, base, call{path: "/readyz"}).want(t, 200, nil)
		m := do(t, base, call{path: "/metrics", token: adminToken}) // with client tokens in force, an admin's
		m.want(t, 200, nil)
		for _, name := range []string{"seqd_http_requests_total", "seqd_sequence_values_issued_total",
			"seqd_oids_issued_total", "seqd_coalesced_batch_callers", "seqd_duplicate_key_retries_total", "seqd_backend_errors_total"} {
			if !strings.Contains(string(m.body), name) {
				t.Errorf("/metrics lacks %s", name)
			}
		}
		var doc struct {
			OpenAPI string
			Paths   map[string]map[string]any
		}
		do(t, base, call{path: "/openapi.json"}).want(t, 200, &doc)
		if !strings.HasPrefix(doc.OpenAPI, "3.") || len(doc.Paths) < 9 {
			t.Errorf("openapi %q with %d paths", doc.OpenAPI, len(doc.Paths))
		}
	})

	t.Run("graceful stop", func(t *testing.T) {
		ctx := testContext(t)
		if err := srv.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		if err := srv.Wait(ctx); err != nil {
			t.Errorf("seqd exited with %v after SIGTERM, want 0\n%s", err, srv.Output())
		}
		if !strings.Contains(srv.Output(), `"msg":"stopped"`) {
			t.Errorf("no stopped log line:\n%s", srv.Output())
		}
	})
}

// Without an admin token, PUT is refused with 403 whatever the token.
func TestEndToEndAdminDisabled(t *testing.T) {
	srv := startSeqd(t)
	r := do(t, srv.URL(), call{method: "PUT", path: "/seq/x", body: `{"value":1}`})
	r.wantError(t, 403, "admin_disabled")
	do(t, srv.URL(), call{path: "/oid"}).want(t, 200, nil) // no client tokens: open
}

// Without a MongoDB URI seqd says what to do and exits non-zero.
func TestSeqdWithoutMongoDB(t *testing.T) {
	ctx := testContext(t)
	bin, err := proc.Build(ctx, "./cmd/seqd")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, bin)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if err == nil || !errors.As(err, &exit) {
		t.Fatalf("seqd without MONGODB_URI: err %v, want a non-zero exit\n%s", err, out)
	}
	for _, want := range []string{"MONGODB_URI", "make run"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("message %q does not name %s", out, want)
		}
	}
}
