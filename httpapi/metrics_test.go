package httpapi_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/seqd/seqd/counters"
)

// sample is one sample of the Prometheus text format: a histogram's _count, _sum
// and each _bucket are samples of their own, as a query sees them.
type sample struct {
	name   string
	labels map[string]string
	value  float64
}

// scrape serves GET /metrics and parses it with expfmt.
func scrape(t testing.TB, s *server, header ...string) []sample {
	t.Helper()
	rec := s.get(t, "/metrics", header...)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /metrics: status %d", rec.Code)
	}
	if mt, _, _ := mime.ParseMediaType(rec.Header().Get("Content-Type")); mt != "text/plain" {
		t.Errorf("GET /metrics: Content-Type %q, want text/plain", rec.Header().Get("Content-Type"))
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatalf("parsing GET /metrics: %v", err)
	}
	var out []sample
	for name, f := range families {
		for _, m := range f.GetMetric() {
			labels := make(map[string]string)
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			add := func(name string, v float64, extra ...string) {
				ls := maps.Clone(labels)
				for i := 0; i+1 < len(extra); i += 2 {
					ls[extra[i]] = extra[i+1]
				}
				out = append(out, sample{name, ls, v})
			}
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				add(name, m.GetCounter().GetValue())
			case dto.MetricType_GAUGE:
				add(name, m.GetGauge().GetValue())
			case dto.MetricType_HISTOGRAM:
				h := m.GetHistogram()
				add(name+"_count", float64(h.GetSampleCount()))
				add(name+"_sum", h.GetSampleSum())
				for _, b := range h.GetBucket() {
					add(name+"_bucket", float64(b.GetCumulativeCount()), "le", strconv.FormatFloat(b.GetUpperBound(), 'g', -1, 64))
				}
			case dto.MetricType_SUMMARY:
				sm := m.GetSummary()
				add(name+"_count", float64(sm.GetSampleCount()))
				add(name+"_sum", sm.GetSampleSum())
				for _, q := range sm.GetQuantile() {
					add(name, q.GetValue(), "quantile", strconv.FormatFloat(q.GetQuantile(), 'g', -1, 64))
				}
			default:
				add(name, m.GetUntyped().GetValue())
			}
		}
	}
	return out
}

// value returns the sum of the samples named name whose labels include want.
func value(samples []sample, name string, want map[string]string) (float64, bool) {
	var sum float64
	found := false
	for _, s := range samples {
		if s.name != name {
			continue
		}
		match := true
		for k, v := range want {
			if s.labels[k] != v {
				match = false
			}
		}
		if match {
			sum += s.value
			found = true
		}
	}
	return sum, found
}

func wantValue(t testing.TB, samples []sample, name string, labels map[string]string, want float64) {
	t.Helper()
	got, ok := value(samples, name, labels)
	if !ok {
		t.Errorf("no sample %s%v", name, labels)
	} else if got != want {
		t.Errorf("%s%v = %v, want %v", name, labels, got, want)
	}
}

// TestMetricsBeforeTraffic checks that a fresh server already exposes seqd's
// metrics, at zero: dashboards and alerts need the series to exist.
func TestMetricsBeforeTraffic(t *testing.T) {
	samples := scrape(t, newServer(t))
	for _, tt := range []struct {
		name   string
		labels map[string]string
	}{
		{"seqd_oids_issued_total", map[string]string{"layout": "spec"}},
		{"seqd_oids_issued_total", map[string]string{"layout": "legacy"}},
		{"seqd_sequence_values_issued_total", map[string]string{"strategy": "counter"}},
		{"seqd_sequence_values_issued_total", map[string]string{"strategy": "optimistic"}},
		{"seqd_duplicate_key_retries_total", map[string]string{"strategy": "counter"}},
		{"seqd_duplicate_key_retries_total", map[string]string{"strategy": "optimistic"}},
		{"seqd_coalesced_batch_callers_count", nil},
		{"seqd_block_fetches_total", map[string]string{"result": "ok"}},
		{"seqd_block_fetches_total", map[string]string{"result": "error"}},
		{"seqd_block_values_reserved_total", nil},
		{"seqd_block_fetch_duration_seconds_count", nil},
		{"seqd_backend_errors_total", map[string]string{"code": "unavailable"}},
		{"seqd_backend_errors_total", map[string]string{"code": "contention"}},
		{"seqd_backend_errors_total", map[string]string{"code": "internal"}},
	} {
		wantValue(t, samples, tt.name, tt.labels, 0)
	}
}

func TestMetrics(t *testing.T) {
	s := newServer(t)
	s.get(t, "/oid")
	s.get(t, "/oid?count=7")
	s.get(t, "/oid?count=3&layout=legacy")
	s.get(t, "/oid?count=0") // refused: issues nothing
	s.get(t, "/seq/orders/next")
	s.get(t, "/seq/orders/next?count=10")
	s.get(t, "/seq/invoices/next")
	s.get(t, "/seq/orders/next?strategy=optimistic")
	s.get(t, "/seq/-bad/next")
	s.get(t, "/nope")
	s.get(t, "/nope/2")
	s.serve(t, newRequest(http.MethodDelete, "/oid", ""))
	s.counter.FailWith(fmt.Errorf("x: %w", counters.ErrUnavailable))
	s.get(t, "/seq/orders/next")
	s.get(t, "/seq/orders")
	s.counter.FailWith(fmt.Errorf("x: %w", counters.ErrContention))
	s.get(t, "/seq/orders/next")
	s.counter.FailWith(fmt.Errorf("x: boom"))
	s.get(t, "/seq")
	s.ping.setFail(func(context.Context) error { return fmt.Errorf("down") })
	s.get(t, "/readyz")
	// What the counters package reports through Config's Observer.
	s.metrics.Retry(counters.StrategyOptimistic)
	s.metrics.Retry(counters.StrategyOptimistic)
	s.metrics.Batch(3)
	s.metrics.Block(200, 2*time.Millisecond, nil)
	s.metrics.Block(400, 3*time.Millisecond, nil)
	s.metrics.Block(0, 500*time.Millisecond, errors.New("down"))

	samples := scrape(t, s)
	wantValue(t, samples, "seqd_oids_issued_total", map[string]string{"layout": "spec"}, 8)
	wantValue(t, samples, "seqd_oids_issued_total", map[string]string{"layout": "legacy"}, 3)
	wantValue(t, samples, "seqd_sequence_values_issued_total", map[string]string{"strategy": "counter"}, 12)
	wantValue(t, samples, "seqd_sequence_values_issued_total", map[string]string{"strategy": "optimistic"}, 1)
	wantValue(t, samples, "seqd_duplicate_key_retries_total", map[string]string{"strategy": "optimistic"}, 2)
	wantValue(t, samples, "seqd_duplicate_key_retries_total", map[string]string{"strategy": "counter"}, 0)
	wantValue(t, samples, "seqd_coalesced_batch_callers_count", nil, 1)
	wantValue(t, samples, "seqd_coalesced_batch_callers_sum", nil, 3)
	wantValue(t, samples, "seqd_block_fetches_total", map[string]string{"result": "ok"}, 2)
	wantValue(t, samples, "seqd_block_fetches_total", map[string]string{"result": "error"}, 1)
	wantValue(t, samples, "seqd_block_values_reserved_total", nil, 600)
	wantValue(t, samples, "seqd_block_fetch_duration_seconds_count", nil, 3)
	wantValue(t, samples, "seqd_backend_errors_total", map[string]string{"code": "unavailable"}, 3) // two sequencer calls and readyz
	wantValue(t, samples, "seqd_backend_errors_total", map[string]string{"code": "contention"}, 1)
	wantValue(t, samples, "seqd_backend_errors_total", map[string]string{"code": "internal"}, 1)

	const requests = "seqd_http_requests_total"
	route := func(method, url, code string) map[string]string {
		return map[string]string{"method": method, "url": url, "code": code}
	}
	wantValue(t, samples, requests, route("GET", "/oid", "200"), 3)
	wantValue(t, samples, requests, route("GET", "/oid", "400"), 1)
	wantValue(t, samples, requests, route("DELETE", "/oid", "405"), 1)
	wantValue(t, samples, requests, route("GET", "/seq/:name/next", "200"), 4)
	wantValue(t, samples, requests, route("GET", "/seq/:name/next", "400"), 1)
	wantValue(t, samples, requests, route("GET", "/seq/:name/next", "503"), 2)
	wantValue(t, samples, requests, route("GET", "/seq/:name", "503"), 1)
	wantValue(t, samples, requests, route("GET", "/seq", "500"), 1)
	wantValue(t, samples, requests, route("GET", "/readyz", "503"), 1)
	wantValue(t, samples, requests, map[string]string{"code": "404"}, 2)
	wantValue(t, samples, "seqd_http_request_duration_seconds_count", route("GET", "/seq/:name/next", "200"), 4)

	for _, smp := range samples {
		if u, ok := smp.labels["url"]; ok && u != "" && !strings.HasPrefix(u, "/") {
			t.Errorf("sample %s%v: url label is not a route", smp.name, smp.labels)
		}
		for _, raw := range []string{"orders", "invoices", "nope", "-bad"} {
			if strings.Contains(smp.labels["url"], raw) {
				t.Errorf("sample %s%v: url label holds the raw path", smp.name, smp.labels)
			}
		}
	}
}

// TestMetricsBoundedLabels checks that what a client chooses freely (the Host
// header, the method) cannot add series.
func TestMetricsBoundedLabels(t *testing.T) {
	s := newServer(t)
	count := func() int { return len(scrape(t, s)) }
	for i := range 3 { // settle the series the requests below create
		req := newRequest(http.MethodGet, "/oid", "")
		req.Host = fmt.Sprintf("h%d.example", i)
		s.serve(t, req)
		s.serve(t, newRequest(fmt.Sprintf("BREW%d", i), "/oid", ""))
		s.serve(t, newRequest(fmt.Sprintf("BREW%d", i), "/nope", ""))
	}
	s.get(t, "/metrics")
	before := count()
	for i := range 20 {
		req := newRequest(http.MethodGet, "/oid", "")
		req.Host = fmt.Sprintf("host%d.example", i)
		s.serve(t, req)
		s.serve(t, newRequest(fmt.Sprintf("M%d", i), "/oid", ""))
		s.serve(t, newRequest(fmt.Sprintf("M%d", i), "/nope/"+strconv.Itoa(i), ""))
	}
	samples := scrape(t, s)
	if after := len(samples); after != before {
		t.Errorf("arbitrary hosts and methods grew the metrics from %d to %d samples", before, after)
	}
	for _, smp := range samples {
		for v := range maps.Values(smp.labels) {
			if strings.Contains(v, "example") || strings.HasPrefix(v, "M1") {
				t.Errorf("sample %s%v carries a client-chosen label", smp.name, smp.labels)
			}
		}
	}
}

// What the mode refresh reports through counters.LeaseObserver: rounds by
// result, their duration, the leases confirmed, and leases that ran out; every
// series there, at zero, before the first round.
func TestMetricsLeases(t *testing.T) {
	s := newServer(t)
	before := scrape(t, s)
	for _, name := range []string{"seqd_lease_names_confirmed_total", "seqd_leases_expired_total", "seqd_lease_refresh_duration_seconds_count"} {
		wantValue(t, before, name, nil, 0)
	}
	wantValue(t, before, "seqd_lease_refreshes_total", map[string]string{"result": "ok"}, 0)
	wantValue(t, before, "seqd_lease_refreshes_total", map[string]string{"result": "error"}, 0)

	s.metrics.Refresh(1000, 1000, 2*time.Millisecond, nil)
	s.metrics.Refresh(1000, 998, 3*time.Millisecond, nil)
	s.metrics.Refresh(1000, 0, time.Second, errors.New("NotAReplicaSet"))
	s.metrics.LeaseExpired()
	samples := scrape(t, s)
	wantValue(t, samples, "seqd_lease_refreshes_total", map[string]string{"result": "ok"}, 2)
	wantValue(t, samples, "seqd_lease_refreshes_total", map[string]string{"result": "error"}, 1)
	wantValue(t, samples, "seqd_lease_refresh_duration_seconds_count", nil, 3)
	wantValue(t, samples, "seqd_lease_names_confirmed_total", nil, 1998)
	wantValue(t, samples, "seqd_leases_expired_total", nil, 1)
}
