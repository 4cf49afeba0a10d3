package metrics

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// A registry shaped like seqd's, served over HTTP and read back.
func TestScrape(t *testing.T) {
	reg := prometheus.NewRegistry()
	retries := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "seqd_duplicate_key_retries_total"}, []string{"strategy"})
	retries.WithLabelValues("optimistic").Add(1234)
	retries.WithLabelValues("counter").Add(2)
	batch := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "seqd_coalesced_batch_callers", Buckets: []float64{1, 8}})
	for _, callers := range []float64{1, 3, 8} {
		batch.Observe(callers)
	}
	goroutines := prometheus.NewGauge(prometheus.GaugeOpts{Name: "go_goroutines"})
	goroutines.Set(12)
	reg.MustRegister(retries, batch, goroutines)
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()
	ctx := context.Background()

	f, err := Scrape(ctx, srv.Client(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name   string
		labels []string
		want   float64
		found  bool
	}{
		{"seqd_duplicate_key_retries_total", []string{"strategy", "optimistic"}, 1234, true},
		{"seqd_duplicate_key_retries_total", nil, 1236, true},
		{"seqd_duplicate_key_retries_total", []string{"strategy", "Optimistic"}, 0, false},
		{"go_goroutines", nil, 12, true},
		{"seqd_missing_total", nil, 0, false},
	} {
		if got, found := f.Sum(tt.name, tt.labels...); got != tt.want || found != tt.found {
			t.Errorf("Sum(%s, %q) = %v, %v; want %v, %v", tt.name, tt.labels, got, found, tt.want, tt.found)
		}
	}
	if count, sum, ok := f.Histogram("seqd_coalesced_batch_callers"); count != 3 || sum != 12 || !ok {
		t.Errorf("Histogram = %v, %v, %v; want 3 observations summing to 12", count, sum, ok)
	}
	if v, err := Value(ctx, srv.Client(), srv.URL, "go_goroutines"); v != 12 || err != nil {
		t.Errorf("Value = %v, %v", v, err)
	}
	if _, err := Value(ctx, srv.Client(), srv.URL, "seqd_missing_total"); err == nil {
		t.Error("Value of a missing metric: no error")
	}
	none := httptest.NewServer(http.NotFoundHandler())
	defer none.Close()
	if _, err := Scrape(ctx, none.Client(), none.URL); err == nil {
		t.Error("Scrape of a 404: no error")
	}
}
