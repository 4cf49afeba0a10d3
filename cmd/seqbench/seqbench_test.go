package main

import (
	"io"
	"strings"
	"testing"
	"time"
)

// benchOutput is `go test -run '^$' -bench . -benchmem -count 3 ./objectid/` as it
// printed, cut short.
const benchOutput = `goos: linux
goarch: amd64
pkg: github.com/seqd/seqd/objectid
cpu: AMD EPYC
BenchmarkNew/serial-2          	28577422	        40.95 ns/op	       0 B/op	       0 allocs/op
BenchmarkNew/serial-2          	28577422	        41.50 ns/op	       0 B/op	       0 allocs/op
BenchmarkNew/serial-2          	28577422	        90.10 ns/op	       0 B/op	       0 allocs/op
BenchmarkDriverNewObjectID/serial-2         	19743498	        60.95 ns/op	       0 B/op	       0 allocs/op
BenchmarkFill/10000-2                       	  211990	      6939 ns/op	         0.6939 ns/id	       0 B/op	       0 allocs/op
BenchmarkDriverRoundTrip 	     1000	   1052311 ns/op	   1049000 p50-ns	   2790000 p99-ns
PASS
ok  	github.com/seqd/seqd/objectid	12.268s
`

func TestReadBenchmarks(t *testing.T) {
	got, err := readBenchmarks(strings.NewReader(benchOutput))
	if err != nil {
		t.Fatal(err)
	}
	serial, procs, ok := got.find("New/serial")
	if !ok || procs != "2" || serial["ns/op"].Center != 41.50 || serial["allocs/op"].Center != 0 {
		t.Errorf("New/serial: %v, %q, %v; want the median 41.50 ns/op of 3 runs on GOMAXPROCS 2", serial, procs, ok)
	}
	if got := withCI(serial["ns/op"], "ns/op"); got != "41.5 ns/op" {
		t.Errorf("3 runs: %q, want the median without an interval, which takes 6", got)
	}
	if fill, _, _ := got.find("Fill/10000"); fill["ns/id"].Center != 0.6939 || fill["ns/op"].Center != 6939 {
		t.Errorf("Fill/10000: %v", fill)
	}
	if rt, procs, ok := got.find("DriverRoundTrip"); !ok || procs != "" || rt["p99-ns"].Center != 2790000 {
		t.Errorf("DriverRoundTrip: %v, %q, %v", rt, procs, ok)
	}
	if _, _, ok := got.find("New"); ok {
		t.Error("find matched a prefix of a name")
	}
	if _, err := readBenchmarks(strings.NewReader("BenchmarkX-2 100 12.5 ns/op 3\n")); err == nil {
		t.Error("a value without a unit: no error")
	}
}

func TestReadLoadSummary(t *testing.T) {
	const out = `{"target":"seq","path":"/seq/t3/next","clients":64,"elapsed_s":3.27,"requests":2096,"ok":2088,"failed":8,"values":2088,"requests_per_s":640.7,"values_per_s":638.3,"latency_p50_ms":32.75,"latency_p99_ms":995.6,"errors":{"503":8},"distinct":60,"duplicates":2028,"order_violations":0,"sequence":{"name":"t3","min":1,"max":60,"missing":3},"passed":false,"failures":["duplicates: 2028 values received more than once (10 listed)"]}`
	var r loadRun
	if err := readLoadSummary([]byte("a stray line\n"+out+"\n"), &r); err != nil {
		t.Fatal(err)
	}
	if r.Requests != 2096 || r.Failed != 8 || r.Errors["503"] != 8 || r.Duplicates != 2028 || r.Sequence.Missing != 3 ||
		r.Passed || len(r.Failures) != 1 || r.LatencyP99Ms != 995.6 || r.ValuesPerS != 638.3 {
		t.Errorf("got %+v", r)
	}
	for _, bad := range []string{"", "seqload: -c 0: want at least one client\n", `{"target":`, `{"requests":1}`} {
		if err := readLoadSummary([]byte(bad), &loadRun{}); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestParseFlags(t *testing.T) {
	c, err := parseFlags([]string{"-d", "2s", "-only", " 6,2,6 ", "-out", "x.md"}, io.Discard)
	if err != nil || c.duration != 2*time.Second || len(c.only) != 2 || !c.only[2] || !c.only[6] || c.out != "x.md" {
		t.Errorf("got %+v, %v", c, err)
	}
	for _, bad := range [][]string{{"-d", "0s"}, {"extra"}, {"-only", "8"}, {"-only", "0"}, {"-only", "two"}} {
		if _, err := parseFlags(bad, io.Discard); err == nil {
			t.Errorf("%q: no error", bad)
		}
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
	if got := cell("a|b\nc"); got != `a\|b c` {
		t.Errorf("cell: %q", got)
	}
}
