//go:build integration

package integration

import (
	"context"
	"fmt"
	"net/http"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// metrics is one scrape of seqd's /metrics, by metric family name.
type metrics map[string]*dto.MetricFamily

// scrapeMetrics reads seqd's /metrics in the Prometheus text format.
func scrapeMetrics(ctx context.Context, hc *http.Client, base string) (metrics, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("/metrics: status %d", resp.StatusCode)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("/metrics: %w", err)
	}
	return families, nil
}

// sum adds up the series of the counter or gauge name whose labels include
// labels (name, value, name, value, …). found is false when no series matches.
func (m metrics) sum(name string, labels ...string) (total float64, found bool) {
	f := m[name]
	if f == nil {
		return 0, false
	}
series:
	for _, s := range f.GetMetric() {
		for i := 0; i+1 < len(labels); i += 2 {
			if !hasLabel(s, labels[i], labels[i+1]) {
				continue series
			}
		}
		found = true
		switch {
		case s.Counter != nil:
			total += s.Counter.GetValue()
		case s.Gauge != nil:
			total += s.Gauge.GetValue()
		case s.Untyped != nil:
			total += s.Untyped.GetValue()
		}
	}
	return total, found
}

func hasLabel(s *dto.Metric, name, value string) bool {
	for _, l := range s.GetLabel() {
		if l.GetName() == name {
			return l.GetValue() == value
		}
	}
	return false
}

// metric scrapes seqd's /metrics and sums the series of name that carry labels;
// it fails if there is none.
func metric(ctx context.Context, hc *http.Client, base, name string, labels ...string) (float64, error) {
	m, err := scrapeMetrics(ctx, hc, base)
	if err != nil {
		return 0, err
	}
	v, ok := m.sum(name, labels...)
	if !ok {
		return 0, fmt.Errorf("/metrics has no %s%q", name, labels)
	}
	return v, nil
}

// goroutines reads go_goroutines from seqd's /metrics. hc should not keep
// connections alive, so that the scrape leaves no connection goroutine behind.
func goroutines(ctx context.Context, hc *http.Client, base string) (int, error) {
	v, err := metric(ctx, hc, base, "go_goroutines")
	return int(v), err
}
