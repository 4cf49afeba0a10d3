package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
)

// Two instances of a cached sequence, as two seqd hand it out: a from a block
// of its own (1, 2, …), b from another (1,000,001, …). a's first request is
// held until b's second arrives, so that a's next request is sent after b's
// first answer was read and gets a smaller value: out of real-time order across
// instances, which cached mode does not promise. Each instance's answers
// increase. The run in miniature: it passes.
func TestRunTwoCachedInstances(t *testing.T) {
	s := &sharedSeq{mode: "cached"}
	bSecond := make(chan struct{})
	var aNext, bNext int64 = 1, 1_000_001
	s.answer = func(ctx context.Context, addr string, n int, count int64) int64 {
		if addr == "a" {
			if n == 1 {
				s.wait(ctx, bSecond)
			}
			aNext += count
			return aNext - count
		}
		if n == 2 {
			close(bSecond)
		}
		bNext += count
		return bNext - count
	}
	urlA, urlB := s.serve(t, "a"), s.serve(t, "b")
	sum, err := runJSON(t, t.Context(), "-addr", urlA+","+urlB, "-c", "4", "-n", "60", "-target", "seq", "-name", "orders",
		"-mode-poll", "1ms")
	if err != nil || !sum.Passed || sum.OrderErrors != 0 || sum.Values != 60 {
		t.Fatalf("run: %v; passed %v, %d order violations, %d values; want a pass with 60 values", err, sum.Passed, sum.OrderErrors, sum.Values)
	}
	if want := "cached (read "; !strings.HasPrefix(sum.Promise, want) || !strings.HasSuffix(sum.Promise, promiseCached) {
		t.Errorf("promise %q, want %s…: %s", sum.Promise, want, promiseCached)
	}
}

// One cached instance answers out of order: a's third answer is below its
// second, and the one client of a sent that request after reading the
// second. Caught, and blamed on a.
func TestRunCachedInstanceOutOfOrder(t *testing.T) {
	ctx, interrupt := context.WithCancel(t.Context())
	defer interrupt()
	s := &sharedSeq{mode: "cached"}
	var aNext, bNext int64 = 10, 1_000_001
	s.answer = func(ctx context.Context, addr string, n int, count int64) int64 {
		if addr == "a" {
			if n == 3 {
				interrupt()
				return 5
			}
			aNext += count
			return aNext - count
		}
		bNext += count
		return bNext - count
	}
	urlA, urlB := s.serve(t, "a"), s.serve(t, "b")
	sum, err := runJSON(t, ctx, "-addr", urlA+","+urlB, "-c", "2", "-d", "1m", "-target", "seq")
	want := "order: 1 requests to " + urlA + " received a value not above one received from it"
	if err == nil || !strings.Contains(err.Error(), want) || sum.Passed || sum.OrderErrors != 1 || sum.Duplicates != 0 {
		t.Fatalf("run: %v; passed %v, %d order violations, %d duplicates; want a failure: %s…", err, sum.Passed, sum.OrderErrors, sum.Duplicates, want)
	}
}

// Two cached instances hand out one value twice (their blocks overlap): caught.
func TestRunCachedDuplicateAcrossInstances(t *testing.T) {
	ctx, interrupt := context.WithCancel(t.Context())
	defer interrupt()
	s := &sharedSeq{mode: "cached"}
	aFirst := make(chan struct{})
	var aNext, bNext int64 = 1, 1_000_001
	s.answer = func(ctx context.Context, addr string, n int, count int64) int64 {
		if addr == "a" {
			if n == 1 {
				close(aFirst)
			}
			aNext += count
			return aNext - count
		}
		if n == 3 {
			s.wait(ctx, aFirst)
			interrupt()
			return 1 // a's first value
		}
		bNext += count
		return bNext - count
	}
	urlA, urlB := s.serve(t, "a"), s.serve(t, "b")
	sum, err := runJSON(t, ctx, "-addr", urlA+","+urlB, "-c", "2", "-d", "1m", "-target", "seq")
	if err == nil || !strings.Contains(err.Error(), "duplicate 1: ") || sum.Passed || sum.Duplicates != 1 {
		t.Fatalf("run: %v; passed %v, %d duplicates; want a failure with duplicate 1", err, sum.Passed, sum.Duplicates)
	}
}

// switchToStrict serves a sequence that starts cached, as TestRunTwoCachedInstances,
// and is switched to strict while the load runs: once b's fourth request comes,
// readings show it draining, two readings later strict, and from then on both
// instances answer from one counter above every value handed out before. The
// first request to a after that waits until a second reading has shown strict;
// the request a sends next lies in a strict window, and the run is interrupted
// then. a's answers in strict mode take aStrict's values.
func switchToStrict(t *testing.T, aStrict func(s *switching) int64) (summary, error) {
	ctx, interrupt := context.WithCancel(t.Context())
	defer interrupt()
	w := &switching{aNext: 1, bNext: 1_000_001, strictNext: 10_000_001, bSecond: make(chan struct{}), strictSeen: make(chan struct{})}
	s := &sharedSeq{mode: "cached"}
	s.onGet = func(_ context.Context, n int) {
		switch {
		case s.mode == "draining" && n >= w.drainFrom+2:
			s.mode, w.strictFrom = "strict", n
		case s.mode == "strict" && n == w.strictFrom+1:
			close(w.strictSeen) // reading strictFrom was read before this one was sent
		}
	}
	s.answer = func(ctx context.Context, addr string, n int, count int64) int64 {
		switch {
		case addr == "b" && n == 2:
			close(w.bSecond)
		case addr == "b" && n == 4:
			s.mode, w.drainFrom = "draining", s.gets
		case addr == "a" && n == 1:
			s.wait(ctx, w.bSecond)
		}
		if s.mode != "strict" {
			if addr == "a" {
				return w.take(&w.aNext, count)
			}
			return w.take(&w.bNext, count)
		}
		if addr != "a" {
			return w.take(&w.strictNext, count)
		}
		w.aStrict++
		switch w.aStrict {
		case 1:
			s.wait(ctx, w.strictSeen)
		case 2:
			interrupt()
		}
		return aStrict(w)
	}
	urlA, urlB := s.serve(t, "a"), s.serve(t, "b")
	return runJSON(t, ctx, "-addr", urlA+","+urlB, "-c", "2", "-d", "1m", "-target", "seq", "-mode-poll", "1ms")
}

// switching is switchToStrict's state, guarded by its sharedSeq's lock.
type switching struct {
	aNext, bNext, strictNext int64 // the next value of a's block, b's block, and the strict counter
	drainFrom, strictFrom    int   // the readings at which the mode became draining, then strict
	aStrict                  int   // requests to a answered in strict mode
	bSecond, strictSeen      chan struct{}
}

func (w *switching) take(next *int64, count int64) int64 {
	*next += count
	return *next - count
}

// A switch to strict while the load runs, served as seqd serves it: the answers
// before it are judged per instance (they are out of order across instances),
// those in strict mode against every earlier answer. It passes.
func TestRunSwitchToStrict(t *testing.T) {
	sum, err := switchToStrict(t, func(w *switching) int64 { return w.take(&w.strictNext, 1) })
	if err != nil || !sum.Passed || sum.OrderErrors != 0 {
		t.Fatalf("run: %v; passed %v, %d order violations; want a pass", err, sum.Passed, sum.OrderErrors)
	}
	if !strings.HasPrefix(sum.Promise, "switched, cached ") || !strings.HasSuffix(sum.Promise, promiseSwitched) {
		t.Errorf("promise %q, want switched, cached …: %s", sum.Promise, promiseSwitched)
	}
}

// The same switch, but a keeps serving its block after the switch: its answers
// in strict mode are above a's earlier ones, yet below b's answers from before
// the switch. Only strict's promise forbids that, and it is caught.
func TestRunSwitchToStrictBroken(t *testing.T) {
	sum, err := switchToStrict(t, func(w *switching) int64 { return w.take(&w.aNext, 1) })
	want := "requests answered while the sequence was strict received a value not above one received by a request answered before they were sent"
	if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "requests to ") ||
		sum.Passed || sum.OrderErrors < 1 {
		t.Fatalf("run: %v; passed %v, %d order violations; want strict's alone broken: …%s", err, sum.Passed, sum.OrderErrors, want)
	}
}

// judge turns readings into strict windows: each run of two or more strict
// readings is one, from the first's answer to the last's sending; a draining,
// cached or unanswered reading ends a run.
func TestJudgeWindows(t *testing.T) {
	cfg := config{target: targetSeq, addrs: []string{"http://a"}}
	ms := time.Millisecond
	reading := func(at int, mode string) modeReading {
		r := modeReading{sent: time.Duration(at) * ms, read: time.Duration(at)*ms + ms/2, mode: mode}
		if mode == "" {
			r.err = "GET http://a/seq/x: 503"
		}
		return r
	}
	readings := []modeReading{
		reading(0, modeCached), reading(10, modeStrict), reading(20, modeStrict), reading(30, modeStrict),
		reading(40, ""), reading(50, modeStrict), reading(60, modeDraining), reading(70, modeStrict), reading(80, modeStrict),
	}
	j := judge(cfg, readings)
	want := []window{{10*ms + ms/2, 30 * ms}, {70*ms + ms/2, 80 * ms}}
	if j.global || !slices.Equal(j.windows, want) {
		t.Fatalf("windows %v, global %v; want %v", j.windows, j.global, want)
	}
	for _, tc := range []struct {
		start, end time.Duration
		strict     bool
	}{
		{11 * ms, 29 * ms, true},
		{10 * ms, 29 * ms, false}, // sent before the reading that showed strict was read
		{11 * ms, 31 * ms, false}, // answered after the reading that ended the run was sent
		{41 * ms, 49 * ms, false},
		{71 * ms, 80 * ms, true},
		{81 * ms, 82 * ms, false},
	} {
		if got := j.strict(tc.start, tc.end); got != tc.strict {
			t.Errorf("request %v..%v: strict %v, want %v", tc.start, tc.end, got, tc.strict)
		}
	}
	if want := "switched, unknown 1, cached 1, draining 1, strict 6 (read 9 times from http://a, 1 times without an answer (GET http://a/seq/x: 503)): "; !strings.HasPrefix(j.promise, want) {
		t.Errorf("promise %q, want %s…", j.promise, want)
	}

	// -mode stands in for readings without an answer.
	cfg.mode = modeStrict
	if j := judge(cfg, []modeReading{reading(0, ""), reading(10, "")}); !j.global || !strings.Contains(j.promise, "taken as -mode strict") {
		t.Errorf("every reading unanswered, -mode strict: %+v; want strict's promise, saying so", j)
	}
	cfg.mode = ""
	if j := judge(cfg, []modeReading{reading(0, ""), reading(10, "")}); j.global || len(j.windows) > 0 || !strings.HasPrefix(j.promise, "unknown (") {
		t.Errorf("every reading unanswered: %+v; want cached's promise, saying the mode is unknown", j)
	}
}

// readMode reads each answer of GET /seq/{name} as the mode the check needs.
func TestReadMode(t *testing.T) {
	for _, tc := range []struct {
		status int
		body   string
		mode   string // "" with an error
	}{
		{200, `{"name":"x","value":3,"mode":"strict"}`, modeStrict},
		{200, `{"name":"x","value":3,"mode":"cached","min_block":10,"max_block":100}`, modeCached},
		{200, `{"name":"x","value":3,"mode":"strict","strict_from":"2026-11-26T19:00:00.000Z"}`, modeDraining},
		{404, `{"error":{"code":"sequence_not_found","message":"sequence not found"}}`, modeStrict},
		{404, `{"error":{"code":"not_found","message":"no such route"}}`, ""},
		{503, `{"error":{"code":"unavailable","message":"backend unavailable"}}`, ""},
		{200, `{"name":"x","value":3,"mode":"fast"}`, ""},
		{200, `not json`, ""},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodGet || r.URL.Path != "/seq/x" || r.Header.Get("Authorization") != "Bearer tok" {
				t.Errorf("got %s %s with %q", r.Method, r.URL, r.Header.Get("Authorization"))
			}
			w.WriteHeader(tc.status)
			io.WriteString(w, tc.body)
		}))
		l := &load{cfg: config{addrs: []string{srv.URL}, name: "x", token: "tok", timeout: time.Second}, client: srv.Client(), began: time.Now()}
		r := l.readMode(t.Context())
		srv.Close()
		if r.mode != tc.mode || (r.mode == "") != (r.err != "") || r.read < r.sent {
			t.Errorf("%d %s: %+v; want mode %q, and an error only without one", tc.status, tc.body, r, tc.mode)
		}
	}
}
