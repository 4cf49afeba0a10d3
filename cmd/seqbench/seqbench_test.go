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
	if !ok || procs != "2" || serial["ns/op"] != 41.50 || serial["allocs/op"] != 0 {
		t.Errorf("New/serial: %v, %q, %v; want the median 41.50 ns/op of 3 runs on GOMAXPROCS 2", serial, procs, ok)
	}
	if fill, _, _ := got.find("Fill/10000"); fill["ns/id"] != 0.6939 || fill["ns/op"] != 6939 {
		t.Errorf("Fill/10000: %v", fill)
	}
	if rt, procs, ok := got.find("DriverRoundTrip"); !ok || procs != "" || rt["p99-ns"] != 2790000 {
		t.Errorf("DriverRoundTrip: %v, %q, %v", rt, procs, ok)
	}
	if _, _, ok := got.find("New"); ok {
		t.Error("find matched a prefix of a name")
	}
	if _, err := readBenchmarks(strings.NewReader("BenchmarkX-2 100 12.5 ns/op 3\n")); err == nil {
		t.Error("a value without a unit: no error")
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
