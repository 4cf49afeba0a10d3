package gobench

import (
	"strings"
	"testing"
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

func TestRead(t *testing.T) {
	got, err := Read(strings.NewReader(benchOutput))
	if err != nil {
		t.Fatal(err)
	}
	serial, procs, ok := got.Find("New/serial")
	if !ok || procs != "2" || serial["ns/op"] != 41.50 || serial["allocs/op"] != 0 {
		t.Errorf("New/serial: %v, %q, %v; want the median 41.50 ns/op of 3 runs on GOMAXPROCS 2", serial, procs, ok)
	}
	if fill, _, _ := got.Find("Fill/10000"); fill["ns/id"] != 0.6939 || fill["ns/op"] != 6939 {
		t.Errorf("Fill/10000: %v", fill)
	}
	if rt, procs, ok := got.Find("DriverRoundTrip"); !ok || procs != "" || rt["p99-ns"] != 2790000 {
		t.Errorf("DriverRoundTrip: %v, %q, %v", rt, procs, ok)
	}
	if _, _, ok := got.Find("New"); ok {
		t.Error("find matched a prefix of a name")
	}
	if _, procs, err := got.Get("New/serial"); procs != "2" || err != nil {
		t.Errorf("Get(New/serial): %q, %v", procs, err)
	}
	if _, _, err := got.Get("Old"); err == nil || !strings.Contains(err.Error(), "BenchmarkOld") {
		t.Errorf("Get of a benchmark not run: %v, want an error naming it", err)
	}
	if _, err := Read(strings.NewReader("BenchmarkX-2 100 12.5 ns/op 3\n")); err == nil {
		t.Error("a value without a unit: no error")
	}
}
