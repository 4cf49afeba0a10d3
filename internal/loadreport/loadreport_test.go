package loadreport

import "testing"

// out is a summary seqload -json printed, of a run without coalescing on the dev store.
const out = `{"target":"seq","path":"/seq/t3/next","addrs":[{"addr":"http://127.0.0.1:18081","clients":64,"requests":2096,"failed":8,"values":2088}],"clients":64,"stopped":"duration","elapsed_s":3.27,"requests":2096,"ok":2088,"failed":8,"values":2088,"requests_per_s":640.7,"values_per_s":638.3,"latency_p50_ms":32.75,"latency_p90_ms":152.7,"latency_p99_ms":995.6,"latency_max_ms":1827.4,"errors":{"503":8},"error_samples":{"503":"unavailable"},"distinct":60,"duplicates":2028,"order_violations":0,"sequence":{"name":"t3","min":1,"max":60,"missing":3},"passed":false,"failures":["duplicates: 2028 values received more than once (10 listed)"]}`

func TestRead(t *testing.T) {
	s, err := Read([]byte("a stray line\n" + out + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Requests != 2096 || s.Failed != 8 || s.Errors["503"] != 8 || s.Duplicates != 2028 || s.Missing() != 3 ||
		s.Passed || len(s.Failures) != 1 || s.LatencyP99Ms != 995.6 || s.ValuesPerS != 638.3 || s.Addrs[0].Clients != 64 {
		t.Errorf("got %+v", s)
	}
	oid, err := Read([]byte(`{"target":"oid","requests":5,"ok":5,"values":5,"passed":true,"failures":[]}`))
	if err != nil || oid.Missing() != 0 || !oid.Passed {
		t.Errorf("oid summary: %+v, %v", oid, err)
	}
	for _, bad := range []string{"", "seqload: -c 0: want at least one client\n", `{"target":`, `{"requests":1}`} {
		if _, err := Read([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
