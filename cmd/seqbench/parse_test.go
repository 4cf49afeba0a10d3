package main

import (
	"io"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

// benchOutput is `go test -run '^$' -bench . -benchmem ./objectid/` as it printed.
const benchOutput = `goos: linux
goarch: amd64
pkg: github.com/seqd/seqd/objectid
cpu: AMD EPYC
BenchmarkNew/serial-2          	28577422	        40.95 ns/op	       0 B/op	       0 allocs/op
BenchmarkNew/parallel-2        	53061763	        22.80 ns/op	       0 B/op	       0 allocs/op
BenchmarkDriverNewObjectID/serial-2         	19743498	        60.95 ns/op	       0 B/op	       0 allocs/op
BenchmarkDriverNewObjectID/parallel-2       	26288563	        39.22 ns/op	       0 B/op	       0 allocs/op
BenchmarkFill/10000-2                       	  211990	      6939 ns/op	         0.6939 ns/id	       0 B/op	       0 allocs/op
BenchmarkNoSuffix	     100	  12.5 ns/op
PASS
ok  	github.com/seqd/seqd/objectid	12.268s
`

func TestParseBenchOutput(t *testing.T) {
	got, err := parseBenchOutput(strings.NewReader(benchOutput))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 6 {
		t.Errorf("%d results, want 6: %v", len(got), got)
	}
	tests := []struct {
		name    string
		procs   int
		n       int64
		nsPerOp float64
		metric  string
		value   float64
	}{
		{"BenchmarkNew/serial", 2, 28577422, 40.95, "allocs/op", 0},
		{"BenchmarkDriverNewObjectID/parallel", 2, 26288563, 39.22, "B/op", 0},
		{"BenchmarkFill/10000", 2, 211990, 6939, "ns/id", 0.6939},
		{"BenchmarkNoSuffix", 1, 100, 12.5, "ns/op", 12.5},
	}
	for _, tt := range tests {
		r, ok := got[tt.name]
		if !ok {
			t.Errorf("%s: missing", tt.name)
			continue
		}
		if r.Procs != tt.procs || r.N != tt.n || r.NsPerOp != tt.nsPerOp || r.Metrics[tt.metric] != tt.value {
			t.Errorf("%s: got %+v, want procs %d, N %d, %v ns/op, %s %v", tt.name, r, tt.procs, tt.n, tt.nsPerOp, tt.metric, tt.value)
		}
	}
}

// With -count, each benchmark keeps its median run by ns/op.
func TestParseBenchOutputMedian(t *testing.T) {
	in := "BenchmarkNew/parallel-2 100 32.1 ns/op\n" +
		"BenchmarkNew/parallel-2 100 54.4 ns/op\n" +
		"BenchmarkNew/parallel-2 100 31.5 ns/op\n" +
		"BenchmarkNew/parallel-2 100 53.7 ns/op\n" +
		"BenchmarkNew/parallel-2 100 32.4 ns/op\n"
	got, err := parseBenchOutput(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if r := got["BenchmarkNew/parallel"]; r.NsPerOp != 32.4 {
		t.Errorf("median of 5 runs: %v ns/op, want 32.4", r.NsPerOp)
	}
}

func TestParseBenchOutputErrors(t *testing.T) {
	for _, in := range []string{
		"BenchmarkX-2 100 12.5 ns/op 3",        // a value without a unit
		"BenchmarkX-2 100 fast ns/op",          // not a number
		"BenchmarkX-2 100 12 B/op 1 allocs/op", // no ns/op
	} {
		if got, err := parseBenchOutput(strings.NewReader(in)); err == nil {
			t.Errorf("%q: no error, got %v", in, got)
		}
	}
	// Lines that are not results are skipped, not errors.
	got, err := parseBenchOutput(strings.NewReader("BenchmarkParent\n--- BENCH: x\nFAIL\n"))
	if err != nil || len(got) != 0 {
		t.Errorf("got %v, %v; want nothing", got, err)
	}
}

// seqloadJSON is a summary seqload -json printed, of a run without coalescing on the dev
// store, so with duplicates, and a failure list.
const seqloadJSON = `{"target":"seq","path":"/seq/t3/next","addrs":[{"addr":"http://127.0.0.1:18081","clients":64,"requests":2096,"failed":8,"values":2088}],"clients":64,"stopped":"duration","elapsed_s":3.2712075609999998,"requests":2096,"ok":2088,"failed":8,"values":2088,"requests_per_s":640.741977057322,"values_per_s":638.2963969922176,"latency_p50_ms":32.757606,"latency_p90_ms":152.764018,"latency_p99_ms":995.634041,"latency_max_ms":1827.441858,"errors":{"503":8},"error_samples":{"503":"http://127.0.0.1:18081: unavailable: backend unavailable"},"distinct":60,"duplicates":2028,"order_violations":0,"sequence":{"name":"t3","min":1,"max":60,"missing":0},"passed":false,"failures":["duplicates: 2028 values received more than once (10 listed)"]}`

func TestReadLoadSummary(t *testing.T) {
	s, err := readLoadSummary([]byte("\n" + seqloadJSON + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Target != "seq" || s.Clients != 64 || s.Requests != 2096 || s.OK != 2088 || s.Failed != 8 ||
		s.Values != 2088 || s.Distinct != 60 || s.Duplicates != 2028 || s.Passed ||
		s.Errors["503"] != 8 || math.Abs(s.ValuesPerS-638.296) > 0.001 || s.LatencyP99Ms != 995.634041 ||
		s.Sequence == nil || s.Sequence.Max != 60 || s.missing() != 0 || len(s.Failures) != 1 {
		t.Errorf("got %+v", s)
	}

	oid, err := readLoadSummary([]byte(`{"target":"oid","requests":5,"ok":5,"values":5,"passed":true,"failures":[]}`))
	if err != nil || oid.Sequence != nil || oid.missing() != 0 || !oid.Passed {
		t.Errorf("oid summary: %+v, %v", oid, err)
	}

	// Only the last object counts; anything printed before it is ignored.
	s, err = readLoadSummary([]byte("a stray line\n{\"target\":\"oid\",\"ok\":1}\n{\"target\":\"seq\",\"ok\":2}\n"))
	if err != nil || s.Target != "seq" || s.OK != 2 {
		t.Errorf("last object: %+v, %v", s, err)
	}

	for _, bad := range []string{"", "seqload: -c 0: want at least one client\n", `{"target":`, `{"requests":1}`} {
		if _, err := readLoadSummary([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// metricsText is a cut of seqd's /metrics.
const metricsText = `# HELP seqd_duplicate_key_retries_total Writes retried after a duplicate key error (E11000), by strategy.
# TYPE seqd_duplicate_key_retries_total counter
seqd_duplicate_key_retries_total{strategy="counter"} 0
seqd_duplicate_key_retries_total{strategy="optimistic"} 1234
# HELP seqd_coalesced_batch_callers Callers served by one counter write.
# TYPE seqd_coalesced_batch_callers histogram
seqd_coalesced_batch_callers_bucket{le="1"} 5
seqd_coalesced_batch_callers_bucket{le="+Inf"} 7
seqd_coalesced_batch_callers_sum 1.5e+06
seqd_http_requests_total{code="200",host="",method="GET",url="/seq/:name/next"} 42 1700000000000
odd_labels{path="a \"quoted\" \\ {b}, c=d",x="1"} NaN
go_goroutines 12
`

func TestMetricValue(t *testing.T) {
	tests := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"seqd_duplicate_key_retries_total", map[string]string{"strategy": "optimistic"}, 1234},
		{"seqd_duplicate_key_retries_total", map[string]string{"strategy": "counter"}, 0},
		{"seqd_coalesced_batch_callers_bucket", map[string]string{"le": "+Inf"}, 7},
		{"seqd_coalesced_batch_callers_sum", nil, 1.5e6},
		{"seqd_http_requests_total", map[string]string{"code": "200", "host": "", "method": "GET", "url": "/seq/:name/next"}, 42},
		{"go_goroutines", map[string]string{}, 12},
	}
	for _, tt := range tests {
		got, err := metricValue(metricsText, tt.name, tt.labels)
		if err != nil || got != tt.want {
			t.Errorf("%s%v: got %v, %v; want %v", tt.name, tt.labels, got, err, tt.want)
		}
	}
	odd, err := metricValue(metricsText, "odd_labels", map[string]string{"path": `a "quoted" \ {b}, c=d`, "x": "1"})
	if err != nil || !math.IsNaN(odd) {
		t.Errorf("escaped labels: got %v, %v", odd, err)
	}

	// Labels must match exactly: a subset or a superset is another series.
	for _, labels := range []map[string]string{
		nil,
		{"strategy": "Optimistic"},
		{"strategy": "optimistic", "extra": "x"},
	} {
		if v, err := metricValue(metricsText, "seqd_duplicate_key_retries_total", labels); err == nil {
			t.Errorf("labels %v: got %v, want an error", labels, v)
		}
	}
	if _, err := metricValue(metricsText, "seqd_missing_total", nil); err == nil {
		t.Error("missing metric: no error")
	}
	for _, bad := range []string{`m{a="1" 3`, `m{a=1} 3`, `m{a="1"}`, `m 1 2 3`, `m x`} {
		if _, err := metricValue(bad, "m", map[string]string{"a": "1"}); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestParseOnly(t *testing.T) {
	all, err := parseOnly("")
	if err != nil || len(all) != len(figures) {
		t.Errorf("empty: got %v, %v; want every figure", all, err)
	}
	got, err := parseOnly(" 4,2,4 ")
	if err != nil || !slices.Equal(got, []int{2, 4}) {
		t.Errorf("got %v, %v; want [2 4]", got, err)
	}
	for _, bad := range []string{"0", "8", "two", "1,,x"} {
		if got, err := parseOnly(bad); err == nil {
			t.Errorf("%q: got %v, want an error", bad, got)
		}
	}
}

func TestParseFlags(t *testing.T) {
	c, err := parseFlags([]string{"-d", "2s", "-only", "6", "-out", "x.md"}, io.Discard)
	if err != nil || c.duration != 2*time.Second || !slices.Equal(c.only, []int{6}) || c.out != "x.md" {
		t.Errorf("got %+v, %v", c, err)
	}
	for _, bad := range [][]string{{"-d", "0s"}, {"extra"}, {"-only", "9"}} {
		if _, err := parseFlags(bad, io.Discard); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestCPUModel(t *testing.T) {
	info := "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13 64-Core Processor\n\nprocessor\t: 1\nmodel name\t: other\n"
	if got := cpuModel(info); got != "AMD EPYC 7B13 64-Core Processor" {
		t.Errorf("got %q", got)
	}
	if got := cpuModel("processor : 0\n"); got != "" {
		t.Errorf("no model: got %q", got)
	}
}

func TestListeningAddr(t *testing.T) {
	if got := listeningAddr("starting\nlistening on 127.0.0.1:43983\n"); got != "127.0.0.1:43983" {
		t.Errorf("got %q", got)
	}
	if got := listeningAddr("listening on"); got != "" {
		t.Errorf("partial line: got %q", got)
	}
}

func TestPercentile(t *testing.T) {
	var lat []time.Duration
	for i := 1; i <= 200; i++ {
		lat = append(lat, time.Duration(i)*time.Millisecond)
	}
	for p, want := range map[float64]time.Duration{50: 100 * time.Millisecond, 99: 198 * time.Millisecond, 100: 200 * time.Millisecond} {
		if got := percentile(lat, p); got != want {
			t.Errorf("p%v: got %v, want %v", p, got, want)
		}
	}
	if got := percentile(nil, 50); got != 0 {
		t.Errorf("empty: got %v", got)
	}
}

func TestFormatting(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 999.6: "1,000", 1234567: "1,234,567", 15_000_000: "15.0M"} {
		if got := formatCount(v); got != want {
			t.Errorf("formatCount(%v) = %q, want %q", v, got, want)
		}
	}
	if got := shellJoin([]string{"test", "-run", "^$", "-bench", ".", "it's"}); got != `test -run '^$' -bench . 'it'\''s'` {
		t.Errorf("shellJoin: %s", got)
	}
	for _, tc := range []struct {
		r, target float64
		atLeast   bool
		want      string
	}{
		{0.997, 1, true, "0.997×"}, {1.004, 1, true, "1.00×"}, {0.93, 1, true, "0.93×"},
		{1.204, 1.2, false, "1.204×"}, {1.196, 1.2, false, "1.20×"}, {1.32, 1.2, false, "1.32×"},
	} {
		if got := formatRatio(tc.r, tc.target, tc.atLeast); got != tc.want {
			t.Errorf("formatRatio(%v, %v) = %s, want %s", tc.r, tc.target, got, tc.want)
		}
	}
	if got := cell("a|b\nc"); got != `a\|b c` {
		t.Errorf("cell: %q", got)
	}
}
