//go:build integration

package integration

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/seqd/seqd/internal/history"
	"github.com/seqd/seqd/internal/metrics"
	"github.com/seqd/seqd/internal/proc"
	"github.com/seqd/seqd/internal/stats"
)

// Fault tests: the real seqd under load while something breaks. seqd is killed,
// its backend dies, clients give up half-way, seqd is told to stop. What must hold
// throughout: no value is handed out twice, a failure is quick and well-formed,
// nothing is left behind.
//
// These tests run one seqd at a time: the second starts only after the first has
// exited, so every value after the restart must be above every value before it.
// What a server reports without a process dying (failover errors, write-concern
// errors, dropped or slow connections) is in failpoint_test.go, injected with
// MongoDB's failCommand failpoint; several seqd on one store are in
// instances_test.go.

// faultClients is how many HTTP clients load seqd in the fault tests.
const faultClients = 16

// SIGKILL seqd in the middle of a load on one name, then start it again on the
// same database. Requests cut off by the kill may leave gaps, never duplicates, and
// the new process hands out only values above everything the old one handed out.
func TestFaultSeqdKilledUnderLoad(t *testing.T) {
	ctx := testContext(t)
	db := be.Database(t).Name()
	hc := loadClient(t, faultClients)
	const name = "killed"
	fail := &failures{t: t}

	first := startSeqdAt(t, seqdURI(), db)
	var before ledger
	var killing atomic.Bool
	var cut, refused atomic.Int64
	failed, allFailed := everyClient(faultClients)
	l := startLoad(ctx, t, hc, first.URL(), name, faultClients, func(c nextCall) {
		switch {
		case c.status == http.StatusOK:
			op, err := c.op(name)
			if err != nil {
				fail.errorf("before the kill: %v", err)
				return
			}
			before.add(op)
			return
		case !killing.Load():
			fail.errorf("before the kill: %v", c)
		case errors.Is(c.err, syscall.ECONNREFUSED):
			refused.Add(1)
		case c.connectionError():
			cut.Add(1)
		default:
			fail.errorf("during the kill: %v, want an answer or a connection error", c)
		}
		failed(c)
	})
	waitFor(t, ctx, before.more(300), "300 answers before the kill")
	killing.Store(true)
	first.Kill()
	waitFor(t, ctx, allFailed, "every client to see the kill")
	l.stop()

	b, a := restartAndCheck(t, ctx, hc, db, name, fail, before.snapshot(), "the kill")
	nb, vb, _, lastBefore := span(b)
	na, va, firstAfter, lastAfter := span(a)
	t.Logf("SIGKILL under load: before, %d answers (%d values, up to %d); the kill cut off %d requests in flight and %d more were refused before the clients stopped; after the restart, %d answers (%d values, %d…%d)",
		nb, vb, lastBefore, cut.Load(), refused.Load(), na, va, firstAfter, lastAfter)
}

// Kill the backend in the middle of a load: every request fails fast with a
// well-formed 503 (a hang guard: each within the request deadline plus a second),
// /readyz says not ready, and once the backend is back on the same address and
// data, the same seqd serves again without handing out a value twice.
func TestFaultBackendDownUnderLoad(t *testing.T) {
	ctx := testContext(t)
	bin, err := proc.Build(ctx, "./cmd/devstore")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	store, err := proc.StartDevStore(ctx, bin, dir, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Stop(context.Background()) }) // the store running at the end
	const timeout = 500 * time.Millisecond
	srv := startSeqdAt(t, store.URI()+"?directConnection=true", "faults", "SEQD_TIMEOUT="+timeout.String())
	base := srv.URL()
	hc := loadClient(t, faultClients)
	const name = "backend-down"
	fail := &failures{t: t}

	// Answers by phase, as the test saw it when the answer came.
	const (
		up = iota
		down
		recovered
	)
	var phase atomic.Int32
	var recoveredAt atomic.Int64 // UnixNano
	var values [3]ledger
	var mu sync.Mutex
	var latencies []time.Duration // of the 503s
	unavailable := make(chan struct{})
	const enough503 = 32
	l := startLoad(ctx, t, hc, base, name, faultClients, func(c nextCall) {
		p := phase.Load()
		switch {
		case c.status == http.StatusOK:
			op, err := c.op(name)
			if err != nil {
				fail.errorf("%v", err)
				return
			}
			values[p].add(op)
		case c.err != nil:
			fail.errorf("no answer (a hang, or seqd died): %v", c)
		case p == up:
			fail.errorf("with the backend up: %v", c)
		default:
			if err := checkUnavailable(c.status, c.header, c.body); err != nil {
				fail.errorf("%v: %v", c, err)
				return
			}
			if c.latency > timeout+time.Second {
				fail.errorf("503 after %v, want it within the %v deadline plus 1s: %v", c.latency, timeout, c)
			}
			if at := recoveredAt.Load(); at != 0 && c.start.UnixNano() > at {
				fail.errorf("503 for a request sent after /readyz said ready: %v", c)
			}
			mu.Lock()
			defer mu.Unlock()
			if latencies = append(latencies, c.latency); len(latencies) == enough503 {
				close(unavailable)
			}
		}
	})
	waitFor(t, ctx, values[up].more(200), "200 answers with the backend up")

	phase.Store(down)
	killedAt := time.Now()
	store.Kill()
	waitFor(t, ctx, unavailable, fmt.Sprintf("%d 503s with the backend down", enough503))
	var readyz reply
	pollUntil(t, ctx, "/readyz to say 503", func() (bool, error) {
		start := time.Now()
		readyz = do(t, base, call{path: "/readyz"})
		if d := time.Since(start); d > timeout+time.Second {
			t.Errorf("/readyz took %v with the backend down, want at most %v", d, timeout+time.Second)
		}
		return readyz.status == http.StatusServiceUnavailable, nil
	})
	if err := checkUnavailable(readyz.status, readyz.header, readyz.body); err != nil {
		t.Errorf("/readyz with the backend down: %v", err)
	}

	downFor := time.Since(killedAt)
	restarted, err := proc.StartDevStore(ctx, bin, dir, store.Addr())
	if err != nil {
		t.Fatal(err)
	}
	store = restarted
	restartedAt := time.Now()
	pollUntil(t, ctx, "/readyz to say 200 after the backend is back", func() (bool, error) {
		return do(t, base, call{path: "/readyz"}).status == http.StatusOK, nil
	})
	readyAfter := time.Since(restartedAt)
	recoveredAt.Store(time.Now().UnixNano())
	phase.Store(recovered)
	waitFor(t, ctx, values[recovered].more(200), "200 answers after the backend is back")
	l.stop()

	var all []history.Op
	for i := range values {
		all = append(all, values[i].snapshot()...)
	}
	checkHistory(t, all)

	mu.Lock()
	defer mu.Unlock()
	slices.Sort(latencies)
	n0, v0, _, last0 := span(values[up].snapshot())
	n2, v2, first2, _ := span(values[recovered].snapshot())
	t.Logf("backend killed under load (SEQD_TIMEOUT=%v): %d answers (%d values, up to %d) before; "+
		"%d × 503 while down for %v, latency min %v median %v p99 %v max %v; "+
		"/readyz 200 %v after the restart; then %d answers (%d values, from %d: above the last before the kill: %v)",
		timeout, n0, v0, last0, len(latencies), downFor.Round(time.Millisecond),
		stats.Percentile(latencies, 0).Round(time.Millisecond), stats.Percentile(latencies, 50).Round(time.Millisecond),
		stats.Percentile(latencies, 99).Round(time.Millisecond), stats.Percentile(latencies, 100).Round(time.Millisecond),
		readyAfter.Round(time.Millisecond), n2, v2, first2, first2 > last0)
}

// Clients that give up mid-request leave nothing behind in seqd: with its backend
// slowed down, many requests are abandoned right after they are sent or while seqd
// waits for the backend, and raw connections are closed with their requests half
// written; then seqd's goroutine count must come back to where it was. A leak
// makes this test time out waiting.
func TestFaultAbandonedRequestsLeaveNoGoroutines(t *testing.T) {
	ctx := testContext(t)
	u, err := url.Parse(seqdURI())
	if err != nil || u.Scheme != "mongodb" || u.Host == "" || strings.Contains(u.Host, ",") {
		t.Skipf("the slow proxy needs a mongodb:// URI with one host, not %s", be.Kind)
	}
	proxy := startSlowProxy(t, u.Host)
	u.Host = proxy.Addr()
	q := u.Query()
	q.Set("directConnection", "true")
	u.RawQuery = q.Encode()
	srv := startSeqdAt(t, u.String(), be.Database(t).Name(), "SEQD_ADMIN_TOKEN="+adminToken)
	base := srv.URL()
	hc := loadClient(t, 64)
	scraper := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
	names := []string{"leak-a", "leak-b", "leak-c", "leak-d"}

	// Warm up, so that what seqd starts once (the driver's pool, the first
	// documents) is in the baseline.
	for i := range 20 {
		if c := callNext(ctx, hc, base, names[i%len(names)]); c.status != http.StatusOK {
			t.Fatalf("warming up: %v", c)
		}
	}
	hc.CloseIdleConnections()
	baseline := -1
	tick := time.NewTicker(20 * time.Millisecond)
	for range 5 {
		n, err := goroutines(ctx, scraper, base)
		if err != nil {
			t.Fatal(err)
		}
		if baseline < 0 || n < baseline {
			baseline = n
		}
		<-tick.C
	}
	tick.Stop()

	// Requests abandoned right after they are sent, or at some point while seqd waits
	// for the slowed backend.
	// seqd answers 499 (logged, counted) to a client that left before its answer.
	cutInBackend := []string{"code", "499", "method", "POST", "url", "/seq/:name/next"}
	if _, err := metrics.Value(ctx, scraper, base, "seqd_http_requests_total", cutInBackend...); err == nil {
		t.Fatalf("seqd_http_requests_total%q before any request was abandoned", cutInBackend)
	}
	proxy.SetDelay(100 * time.Millisecond)
	const abandoned = 300
	var answered, cutOff atomic.Int64
	var wg sync.WaitGroup
	for i := range abandoned {
		wg.Go(func() {
			rctx, cancel := context.WithCancel(ctx)
			defer cancel()
			if i%2 == 0 {
				rctx = httptrace.WithClientTrace(rctx, &httptrace.ClientTrace{
					WroteRequest: func(httptrace.WroteRequestInfo) { cancel() },
				})
			} else {
				timer := time.AfterFunc(time.Duration(i%25)*10*time.Millisecond, cancel)
				defer timer.Stop()
			}
			path := fmt.Sprintf("%s/seq/%s/next", base, names[i%len(names)])
			switch i % 3 {
			case 1:
				path += "?count=1000"
			case 2:
				path += "?strategy=optimistic"
			}
			req, err := http.NewRequestWithContext(rctx, http.MethodPost, path, nil)
			if err != nil {
				t.Error(err)
				return
			}
			resp, err := hc.Do(req)
			if err != nil {
				cutOff.Add(1)
				return
			}
			resp.Body.Close()
			answered.Add(1)
		})
	}
	wg.Wait()
	// A request whose client leaves while seqd waits for the backend ends with a
	// cancelled context, which seqd answers 499. Some must have.
	cut, err := metrics.Value(ctx, scraper, base, "seqd_http_requests_total", cutInBackend...)
	if err != nil {
		t.Fatal(err)
	}
	inBackend := int(cut)
	if cutOff.Load() < abandoned/2 || inBackend == 0 {
		t.Fatalf("%d of %d requests abandoned before their answer, %d of them while seqd waited for the backend; the test does not test what it says",
			cutOff.Load(), abandoned, inBackend)
	}

	// Connections that hold half a request, then close.
	const held = 100
	partial := []string{
		"",
		"GET /seq/leak-a/ne",
		"GET /seq/leak-a/next HTTP/1.1\r\nHost: localhost\r\n",
		"PUT /seq/leak-b HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer " + adminToken +
			"\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"value\":",
		"POST /seq/leak-c/next HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\n\r\n", // the answer is never read
	}
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	var dialer net.Dialer
	for i := range held {
		c, err := dialer.DialContext(ctx, "tcp", srv.Addr())
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		if _, err := c.Write([]byte(partial[i%len(partial)])); err != nil {
			t.Fatal(err)
		}
	}
	// Each open connection holds a goroutine in seqd: the count must show them, or
	// the final check proves nothing. seqd drops connections without a complete
	// header after 5s (ReadHeaderTimeout), so look sooner.
	peak := 0
	hctx, cancel := context.WithTimeout(ctx, 4*time.Second)
	pollUntil(t, hctx, fmt.Sprintf("go_goroutines to count the %d open connections", held), func() (bool, error) {
		n, err := goroutines(hctx, scraper, base)
		peak = max(peak, n)
		return err == nil && n >= baseline+held, err
	})
	cancel()
	for _, c := range conns {
		c.Close()
	}
	conns = nil

	// Everything abandoned; nothing of it may remain.
	hc.CloseIdleConnections()
	const margin = 3 // transient goroutines: a driver heartbeat, a closing connection
	start := time.Now()
	final := 0
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	pollUntil(t, rctx, fmt.Sprintf("go_goroutines to come back to %d+%d (a leak)", baseline, margin), func() (bool, error) {
		n, err := goroutines(rctx, scraper, base)
		final = n
		return err == nil && n <= baseline+margin, err
	})
	t.Logf("abandoned requests: go_goroutines %d before; %d requests abandoned (%d cut off, %d of them while seqd waited for the backend; %d answered first) and %d half-written connections; peak %d; back to %d within %v",
		baseline, abandoned, cutOff.Load(), inBackend, answered.Load(), held, peak, final, time.Since(start).Round(time.Millisecond))
}

// SIGTERM seqd while clients hammer it: every request either gets a valid answer,
// whose values are never handed out again, or fails cleanly (refused, reset, or a
// 503 with the error body); seqd exits 0 within its shutdown timeout. A second
// seqd on the same database carries on above the first one's values.
func TestFaultShutdownUnderLoad(t *testing.T) {
	ctx := testContext(t)
	db := be.Database(t).Name()
	hc := loadClient(t, faultClients)
	const name = "shutdown"
	const grace = 5 * time.Second
	fail := &failures{t: t}

	first := startSeqdAt(t, seqdURI(), db, "SEQD_SHUTDOWN_TIMEOUT="+grace.String())
	var before ledger
	var stopping atomic.Bool
	var answeredStopping, unavailable, connErrors atomic.Int64
	failed, allFailed := everyClient(faultClients)
	l := startLoad(ctx, t, hc, first.URL(), name, faultClients, func(c nextCall) {
		switch {
		case c.status == http.StatusOK:
			op, err := c.op(name)
			if err != nil {
				fail.errorf("%v", err)
				return
			}
			before.add(op)
			if stopping.Load() {
				answeredStopping.Add(1)
			}
		case !stopping.Load():
			fail.errorf("before SIGTERM: %v", c)
		case c.status == http.StatusServiceUnavailable:
			if err := checkUnavailable(c.status, c.header, c.body); err != nil {
				fail.errorf("during shutdown: %v: %v", c, err)
			}
			unavailable.Add(1)
		case c.connectionError():
			connErrors.Add(1)
			failed(c)
		default:
			fail.errorf("during shutdown: %v, want an answer, a 503 or a connection error", c)
		}
	})
	waitFor(t, ctx, before.more(300), "300 answers before SIGTERM")
	stopping.Store(true)
	signalled := time.Now()
	if err := first.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, grace+5*time.Second)
	err := first.Wait(wctx)
	exited, timedOut := time.Since(signalled), wctx.Err() != nil
	cancel()
	switch {
	case timedOut:
		t.Fatalf("seqd still running %v after SIGTERM (SEQD_SHUTDOWN_TIMEOUT=%v)\n%s", exited, grace, first.Output())
	case err != nil:
		t.Errorf("seqd exited with %v after SIGTERM, want 0\n%s", err, first.Output())
	case exited > grace:
		t.Errorf("seqd took %v to exit after SIGTERM, more than SEQD_SHUTDOWN_TIMEOUT=%v", exited, grace)
	}
	waitFor(t, ctx, allFailed, "every client to find seqd gone")
	l.stop()

	b, a := restartAndCheck(t, ctx, hc, db, name, fail, before.snapshot(), "SIGTERM")
	nb, vb, _, lastBefore := span(b)
	na, va, firstAfter, _ := span(a)
	t.Logf("SIGTERM under load: seqd exited 0 after %v; %d answers (%d values, up to %d), %d of them after SIGTERM; during shutdown %d × 503 and %d connection errors; after the restart %d answers (%d values, from %d)",
		exited.Round(time.Millisecond), nb, vb, lastBefore, answeredStopping.Load(), unavailable.Load(), connErrors.Load(), na, va, firstAfter)
}
