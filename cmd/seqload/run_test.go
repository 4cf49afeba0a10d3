package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runJSON runs seqload with -json and returns the summary it printed and its error.
func runJSON(t *testing.T, ctx context.Context, args ...string) (summary, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(ctx, append([]string{"-json", "-progress", "0"}, args...), &stdout, &stderr)
	var s summary
	if jerr := json.Unmarshal(stdout.Bytes(), &s); jerr != nil {
		t.Fatalf("summary is not JSON (%v): %q; stderr %q; run error %v", jerr, stdout.String(), stderr.String(), err)
	}
	if stderr.Len() > 0 {
		t.Errorf("stderr: %q", stderr.String())
	}
	return s, err
}

// checkCounts compares the summary's totals with what the fakes served.
func checkCounts(t *testing.T, s summary, fakes ...*fake) {
	t.Helper()
	var requests, values int
	for _, f := range fakes {
		r, v, _, _ := f.served()
		requests += r
		values += v
	}
	if s.Requests != int64(requests) || s.Values != int64(values) {
		t.Errorf("summary: %d requests, %d values; fakes served %d requests, %d values",
			s.Requests, s.Values, requests, values)
	}
	if s.OK+s.Failed != s.Requests {
		t.Errorf("ok %d + failed %d != requests %d", s.OK, s.Failed, s.Requests)
	}
}

func TestRunCorrect(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		uri     string
		perResp int
	}{
		{"oid", []string{"-target", "oid"}, "/oid", 1},
		{"oid count", []string{"-count", "7", "-layout", "legacy"}, "/oid?count=7&layout=legacy", 7},
		{"oid count 1", []string{"-count", "1"}, "/oid?count=1", 1},
		{"uuid", []string{"-target", "uuid"}, "/uuid", 1},
		{"uuid count", []string{"-target", "uuid", "-count", "7"}, "/uuid?count=7", 7},
		{"seq", []string{"-target", "seq", "-name", "orders", "-expect-contiguous"}, "/seq/orders/next", 1},
		{"seq count", []string{"-target", "seq", "-name", "a.b", "-count", "5", "-strategy", "optimistic", "-expect-contiguous"},
			"/seq/a.b/next?count=5&strategy=optimistic", 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, url := newFake(t, &fake{})
			s, err := runJSON(t, t.Context(), append(tt.args, "-addr", url, "-c", "4", "-n", "150")...)
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			checkCounts(t, s, f)
			_, _, _, uris := f.served()
			if len(uris) != 1 || uris[tt.uri] != 150 {
				t.Errorf("fake saw %v, want 150 × %s", uris, tt.uri)
			}
			want := int64(150 * tt.perResp)
			if !s.Passed || s.Requests != 150 || s.OK != 150 || s.Values != want || s.Distinct != want || s.Duplicates != 0 {
				t.Errorf("summary %+v, want 150 ok requests, %d distinct values", s, want)
			}
			if s.Stopped != stoppedRequests || s.LatencyMaxMs <= 0 || s.LatencyP50Ms > s.LatencyP99Ms {
				t.Errorf("stopped %q, latency p50 %v p99 %v max %v", s.Stopped, s.LatencyP50Ms, s.LatencyP99Ms, s.LatencyMaxMs)
			}
			if q := s.Sequence; q != nil && (q.Min != 1 || q.Max != want || q.Missing != 0) {
				t.Errorf("sequence %+v, want 1..%d with none missing", *q, want)
			}
		})
	}
}

func TestRunDuration(t *testing.T) {
	f, url := newFake(t, &fake{})
	s, err := runJSON(t, t.Context(), "-addr", url, "-c", "2", "-d", "150ms")
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	checkCounts(t, s, f)
	if s.Stopped != stoppedDuration || s.Requests == 0 || s.ElapsedS < 0.15 {
		t.Errorf("stopped %q after %vs with %d requests, want duration after 0.15s", s.Stopped, s.ElapsedS, s.Requests)
	}
}

func TestRunRequestBoundExact(t *testing.T) {
	// Failed requests count towards -n too.
	f, url := newFake(t, &fake{script: func(n int) behavior {
		if n%4 == 0 {
			return unavailable
		}
		return correct
	}})
	s, err := runJSON(t, t.Context(), "-addr", url, "-c", "8", "-n", "37", "-target", "seq")
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	checkCounts(t, s, f)
	if requests, _, _, _ := f.served(); requests != 37 || s.Requests != 37 || s.Failed != 9 {
		t.Errorf("fake served %d, summary %d requests %d failed; want 37 and 9", requests, s.Requests, s.Failed)
	}
}

// -ranges writes what the clients received, merged into ascending ranges: with a
// correct sequence, one range.
func TestRunRanges(t *testing.T) {
	_, url := newFake(t, &fake{})
	path := filepath.Join(t.TempDir(), "ranges")
	if _, err := runJSON(t, t.Context(), "-addr", url, "-c", "4", "-n", "50", "-count", "3", "-target", "seq", "-ranges", path); err != nil {
		t.Fatalf("run: %v", err)
	}
	if got, err := os.ReadFile(path); string(got) != "1 150\n" || err != nil {
		t.Errorf("-ranges file: %q, %v; want \"1 150\\n\"", got, err)
	}
}

// -mode puts the sequence in that mode before the load; a refused PUT fails the run
// before any load.
func TestRunMode(t *testing.T) {
	f, url := newFake(t, &fake{})
	s, err := runJSON(t, t.Context(), "-addr", url, "-c", "2", "-n", "10", "-target", "seq", "-mode", "cached", "-admin-token", "admin")
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if requests, _, _, _ := f.served(); len(f.modes) != 1 || f.modes[0] != "cached" || requests != 11 || s.Requests != 10 {
		t.Errorf("PUTs %q, %d requests in all, %d in the summary; want one cached and 10 more for the load", f.modes, requests, s.Requests)
	}
	var stdout bytes.Buffer
	err = run(t.Context(), []string{"-addr", url, "-n", "10", "-target", "seq", "-mode", "cached", "-admin-token", "wrong"}, &stdout, io.Discard)
	if requests, _, _, _ := f.served(); err == nil || !strings.Contains(err.Error(), "403") || stdout.Len() > 0 || requests != 12 {
		t.Errorf("run with a wrong admin token: %v, printed %q, %d requests; want a 403 error, no summary and no load", err, stdout.String(), requests)
	}
}

// With -client-cache the clients share one Go client, whose cache reserves blocks
// with a request each: 500 values in order and without a gap from a few requests.
func TestRunClientCache(t *testing.T) {
	f, url := newFake(t, &fake{})
	path := filepath.Join(t.TempDir(), "ranges")
	s, err := runJSON(t, t.Context(), "-addr", url, "-target", "seq", "-name", "orders", "-client-cache", "-c", "4", "-n", "500",
		"-expect-contiguous", "-ranges", path)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if !s.Passed || s.Requests != 500 || s.OK != 500 || s.Values != 500 || s.Sequence.Min != 1 || s.Sequence.Max != 500 {
		t.Errorf("summary %+v, want 500 calls and values 1..500", s)
	}
	if requests, values, _, uris := f.served(); requests > 10 || values < 500 {
		t.Errorf("the fake served %d requests (%v) and %d values, want a few blocks of at least 500 values in all", requests, uris, values)
	}
	if got, err := os.ReadFile(path); string(got) != "1 500\n" || err != nil {
		t.Errorf("-ranges file: %q, %v", got, err)
	}
}

func TestRunDuplicate(t *testing.T) {
	_, url := newFake(t, &fake{script: func(n int) behavior {
		if n == 5 {
			return repeat
		}
		return correct
	}})
	s, err := runJSON(t, t.Context(), "-addr", url, "-c", "3", "-n", "40", "-target", "seq", "-name", "orders")
	if err == nil || !strings.Contains(err.Error(), "duplicate 4: client ") {
		t.Fatalf("run: %v, want duplicate value 4", err)
	}
	if s.Passed || s.Duplicates != 1 || s.Distinct != 39 {
		t.Errorf("summary: passed %v, %d duplicates, %d distinct; want 1 and 39", s.Passed, s.Duplicates, s.Distinct)
	}
}

func TestRunGap(t *testing.T) {
	gapAt5 := func(n int) behavior {
		if n == 5 {
			return skip
		}
		return correct
	}
	t.Run("expected contiguous", func(t *testing.T) {
		_, url := newFake(t, &fake{script: gapAt5})
		s, err := runJSON(t, t.Context(), "-addr", url, "-c", "2", "-n", "20", "-count", "3", "-target", "seq", "-expect-contiguous")
		if err == nil || !strings.Contains(err.Error(), "contiguity: 1 values missing between 1 and 61") ||
			!strings.Contains(err.Error(), "gap 13: nobody got it") {
			t.Fatalf("run: %v, want value 13 missing", err)
		}
		if s.Sequence == nil || s.Sequence.Missing != 1 || s.Duplicates != 0 {
			t.Errorf("summary: %+v", s)
		}
	})
	t.Run("not expected", func(t *testing.T) {
		_, url := newFake(t, &fake{script: gapAt5})
		s, err := runJSON(t, t.Context(), "-addr", url, "-c", "2", "-n", "20", "-count", "3", "-target", "seq")
		if err != nil {
			t.Fatalf("run: %v", err)
		}
		if s.Sequence == nil || s.Sequence.Missing != 1 {
			t.Errorf("summary reports %+v, want 1 missing", s.Sequence)
		}
	})
}

func TestRunOrderViolation(t *testing.T) {
	tests := []struct {
		name string
		b    behavior
		args []string
	}{
		// One client, so that the backwards answer cannot be some client's first.
		{"across responses", backwards, []string{"-c", "1"}},
		{"within a response", swapped, []string{"-c", "3", "-count", "4"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, url := newFake(t, &fake{script: func(n int) behavior {
				if n == 6 {
					return tt.b
				}
				return correct
			}})
			s, err := runJSON(t, t.Context(), append(tt.args, "-addr", url, "-n", "30")...)
			if err == nil || !strings.Contains(err.Error(), "order: client ") {
				t.Fatalf("run: %v, want an order failure", err)
			}
			if s.OrderErrors != 1 || s.Duplicates != 0 {
				t.Errorf("summary: %d order violations, %d duplicates; want 1 and 0", s.OrderErrors, s.Duplicates)
			}
		})
	}
}

func TestRunMultiAddress(t *testing.T) {
	// b's ids all sort below a's: each client's ids increase, the merged ids do not.
	a, urlA := newFake(t, &fake{prefix: [4]byte{2}})
	b, urlB := newFake(t, &fake{prefix: [4]byte{1}})
	s, err := runJSON(t, t.Context(), "-addr", urlA+","+urlB, "-c", "4", "-n", "200", "-count", "3")
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	checkCounts(t, s, a, b)
	for i, f := range []*fake{a, b} {
		requests, values, _, _ := f.served()
		got := s.Addrs[i]
		if requests == 0 || got.Clients != 2 || got.Requests != int64(requests) || got.Values != int64(values) {
			t.Errorf("address %d: summary %+v, fake served %d requests, %d values", i, got, requests, values)
		}
	}
}

func TestRunMultiAddressDuplicate(t *testing.T) {
	// Two instances that generate the same ids: each is fine alone, together they collide.
	a, urlA := newFake(t, &fake{})
	b, urlB := newFake(t, &fake{})
	s, err := runJSON(t, t.Context(), "-addr", urlA, "-addr", urlB, "-c", "2", "-n", "20")
	if err == nil {
		t.Fatal("run succeeded, want duplicates")
	}
	msg := err.Error()
	if !strings.Contains(msg, "duplicate oid 000000000000000000100001: received 2 times, by client 0 ("+urlA+"), client 1 ("+urlB+")") {
		t.Errorf("run: %v, want the first id named with both addresses", err)
	}
	// Every id of the instance that served fewer requests came from the other one too.
	requestsA, _, _, _ := a.served()
	requestsB, _, _, _ := b.served()
	if want := int64(min(requestsA, requestsB)); s.Duplicates != want || s.OrderErrors != 0 {
		t.Errorf("summary: %d duplicates, %d order violations; want %d and 0", s.Duplicates, s.OrderErrors, want)
	}
}

func TestRunErrorsByStatus(t *testing.T) {
	f, url := newFake(t, &fake{script: func(n int) behavior {
		if n%3 == 0 {
			return unavailable
		}
		return correct
	}})
	s, err := runJSON(t, t.Context(), "-addr", url, "-c", "4", "-n", "60", "-target", "seq", "-count", "2", "-expect-contiguous")
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	checkCounts(t, s, f)
	_, _, statuses, _ := f.served()
	if statuses[503] != 20 || s.Errors["503"] != 20 || s.Failed != 20 || len(s.Errors) != 1 {
		t.Errorf("summary errors %v, fake statuses %v; want 20 × 503", s.Errors, statuses)
	}
	if !strings.Contains(s.ErrorSamples["503"], `"code":"unavailable","message":"backend unavailable"`) {
		t.Errorf("error sample %q", s.ErrorSamples["503"])
	}
}

func TestRunToken(t *testing.T) {
	t.Run("sent", func(t *testing.T) {
		f, url := newFake(t, &fake{token: "s3cret"})
		s, err := runJSON(t, t.Context(), "-addr", url, "-c", "2", "-n", "10", "-token", "s3cret")
		if err != nil {
			t.Fatalf("run: %v", err)
		}
		if _, _, statuses, _ := f.served(); len(statuses) != 0 || s.OK != 10 {
			t.Errorf("fake answered %v, summary %d ok", statuses, s.OK)
		}
	})
	t.Run("missing", func(t *testing.T) {
		_, url := newFake(t, &fake{token: "s3cret"})
		s, err := runJSON(t, t.Context(), "-addr", url, "-c", "2", "-n", "10")
		if err == nil || !strings.Contains(err.Error(), "no request succeeded (10 sent)") {
			t.Fatalf("run: %v, want every request failed", err)
		}
		if s.Errors["401"] != 10 {
			t.Errorf("errors %v, want 10 × 401", s.Errors)
		}
	})
}

func TestRunInvalidResponse(t *testing.T) {
	for _, target := range []string{targetOID, targetUUID, targetSeq} {
		t.Run(target, func(t *testing.T) {
			_, url := newFake(t, &fake{script: func(n int) behavior {
				if n == 3 {
					return malformed
				}
				return correct
			}})
			s, err := runJSON(t, t.Context(), "-addr", url, "-c", "2", "-n", "10", "-count", "2", "-target", target)
			if err == nil || !strings.Contains(err.Error(), "invalid") {
				t.Fatalf("run: %v, want an invalid response failure", err)
			}
			if s.Errors["invalid"] != 1 || s.Values != 18 {
				t.Errorf("summary: errors %v, %d values; want 1 invalid and 18 values", s.Errors, s.Values)
			}
		})
	}
}

func TestRunInterrupt(t *testing.T) {
	// The fake cancels run's context, as SIGINT would, once it has served 20 requests.
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	f, url := newFake(t, &fake{script: func(n int) behavior {
		if n == 20 {
			cancel()
		}
		return correct
	}})
	s, err := runJSON(t, ctx, "-addr", url, "-c", "3", "-d", "1m", "-target", "seq", "-expect-contiguous")
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	checkCounts(t, s, f)
	if s.Stopped != stoppedInterrupt || s.Requests < 20 || s.Sequence.Missing != 0 {
		t.Errorf("stopped %q after %d requests, %d missing; want interrupt after ≥ 20, none missing",
			s.Stopped, s.Requests, s.Sequence.Missing)
	}
}

func TestRunMaxErrors(t *testing.T) {
	_, url := newFake(t, &fake{script: func(int) behavior { return unavailable }})
	s, err := runJSON(t, t.Context(), "-addr", url, "-c", "2", "-n", "100000", "-max-errors", "5")
	if err == nil || !strings.Contains(err.Error(), "more than -max-errors 5") {
		t.Fatalf("run: %v, want a -max-errors failure", err)
	}
	// The sixth failure stops the load; the other client may have one request in flight.
	if s.Stopped != stoppedMaxErrors || s.Requests < 6 || s.Requests > 7 {
		t.Errorf("stopped %q after %d requests, want max-errors after 6 or 7", s.Stopped, s.Requests)
	}
}

func TestRunUnreachable(t *testing.T) {
	srv := httptest.NewServer(nil)
	url := srv.URL
	srv.Close()
	s, err := runJSON(t, t.Context(), "-addr", url, "-c", "1", "-n", "3")
	if err == nil || s.Errors["transport"] != 3 {
		t.Fatalf("run: %v, errors %v; want 3 transport errors", err, s.Errors)
	}
}

func TestRunTextSummary(t *testing.T) {
	_, url := newFake(t, &fake{})
	var stdout, stderr bytes.Buffer
	if err := run(t.Context(), []string{"-addr", url, "-c", "2", "-n", "10", "-target", "seq", "-count", "10"}, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v", err)
	}
	for _, want := range []string{
		"target      GET /seq/seqload/next?count=10\n",
		"requests    10 (10 ok, 0 failed)\n",
		"values      100\n",
		"unique      100 distinct, 0 duplicates\n",
		"promise     strict (read 2 times from " + url + "): no value twice; real-time order across all clients and addresses\n",
		"order       0 violations\n",
		"sequence    seqload: 1..100, 0 missing\n",
		"result      PASS\n",
	} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, stdout.String())
		}
	}
}

func TestRunUsage(t *testing.T) {
	for _, args := range [][]string{
		{"-target", "blob"},
		{"-count", "0"},
		{"-d", "0"},
		{"-n", "-1"},
		{"-c", "1", "-addr", "a:1,b:1"},
		{"-addr", "ftp://x"},
		{"-addr", "a:1,http://a:1/"},
		{"-name", "x"},
		{"-ranges", "x"},
		{"-mode", "cached", "-admin-token", "t"},
		{"-client-cache"},
		{"-target", "seq", "-client-cache", "-addr", "a:1,b:2", "-c", "2"},
		{"-target", "seq", "-client-cache", "-strategy", "optimistic"},
		{"-target", "seq", "-mode", "cached"},
		{"-target", "seq", "-mode", "fast", "-admin-token", "t"},
		{"-target", "seq", "-layout", "legacy"},
		{"-target", "uuid", "-layout", "legacy"},
		{"-target", "uuid", "-name", "x"},
		{"-target", "uuid", "-expect-contiguous"},
		{"-target", "seq", "-strategy", "fast"},
		{"-target", "seq", "-name", ""},
		{"-target", "seq", "-mode-poll", "-1s"},
		{"-mode-poll", "1s"},
		{"extra"},
		{"-nosuchflag"},
	} {
		var stdout, stderr bytes.Buffer
		err := run(t.Context(), args, &stdout, &stderr)
		if !errors.As(err, new(usageError)) {
			t.Errorf("run %q: %v, want a usage error", args, err)
		}
		if stdout.Len() > 0 {
			t.Errorf("run %q printed %q", args, stdout.String())
		}
	}
}
