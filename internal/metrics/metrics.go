// Package metrics reads a running seqd's /metrics with the Prometheus text parser,
// for the tools and tests that watch seqd from outside: seqbench's figures and the
// integration tests.
package metrics

import (
	"context"
	"fmt"
	"net/http"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Families is one scrape, by metric family name.
type Families map[string]*dto.MetricFamily

// Scrape reads base+"/metrics".
func Scrape(ctx context.Context, hc *http.Client, base string) (Families, error) {
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
		return nil, fmt.Errorf("%s/metrics: status %d", base, resp.StatusCode)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s/metrics: %w", base, err)
	}
	return families, nil
}

// Value scrapes base and returns the Sum of name's series with labels; it fails if
// there is none.
func Value(ctx context.Context, hc *http.Client, base, name string, labels ...string) (float64, error) {
	f, err := Scrape(ctx, hc, base)
	if err != nil {
		return 0, err
	}
	v, ok := f.Sum(name, labels...)
	if !ok {
		return 0, fmt.Errorf("%s/metrics has no %s%q", base, name, labels)
	}
	return v, nil
}

// Sum adds up the series of the counter, gauge or untyped metric name whose labels
// include labels (name, value, name, value, …). found is false when no series matches.
func (f Families) Sum(name string, labels ...string) (total float64, found bool) {
	for _, s := range f.series(name, labels) {
		found = true
		total += s.GetCounter().GetValue() + s.GetGauge().GetValue() + s.GetUntyped().GetValue()
	}
	return total, found
}

// Histogram adds up the observation counts and sums of the series of the histogram
// name whose labels include labels.
func (f Families) Histogram(name string, labels ...string) (count, sum float64, found bool) {
	for _, s := range f.series(name, labels) {
		found = true
		count += float64(s.GetHistogram().GetSampleCount())
		sum += s.GetHistogram().GetSampleSum()
	}
	return count, sum, found
}

func (f Families) series(name string, labels []string) []*dto.Metric {
	var out []*dto.Metric
series:
	for _, s := range f[name].GetMetric() {
		for i := 0; i+1 < len(labels); i += 2 {
			if !hasLabel(s, labels[i], labels[i+1]) {
				continue series
			}
		}
		out = append(out, s)
	}
	return out
}

func hasLabel(s *dto.Metric, name, value string) bool {
	for _, l := range s.GetLabel() {
		if l.GetName() == name {
			return l.GetValue() == value
		}
	}
	return false
}
