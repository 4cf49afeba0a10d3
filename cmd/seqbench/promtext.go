package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// metricValue returns the value of the sample of metric name whose labels are exactly
// labels (nil or empty: a sample without labels), from Prometheus text exposition.
func metricValue(text, name string, labels map[string]string) (float64, error) {
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		s, err := parseSample(line)
		if err != nil {
			return 0, err
		}
		if s.name == name && maps.Equal(s.labels, labels) {
			return s.value, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("metrics: no sample %s%s", name, formatLabels(labels))
}

type sample struct {
	name   string
	labels map[string]string
	value  float64
}

// parseSample reads `name{label="value",…} value [timestamp]`.
func parseSample(line string) (sample, error) {
	s := sample{labels: map[string]string{}}
	i := strings.IndexAny(line, "{ \t")
	if i <= 0 {
		return s, fmt.Errorf("metrics: malformed sample %q", line)
	}
	s.name, line = line[:i], line[i:]
	if line[0] == '{' {
		var err error
		if line, err = parseLabels(line[1:], s.labels); err != nil {
			return s, fmt.Errorf("metrics: %q: %w", s.name, err)
		}
	}
	fields := strings.Fields(line)
	if len(fields) == 0 || len(fields) > 2 {
		return s, fmt.Errorf("metrics: sample %q: want a value and an optional timestamp", s.name)
	}
	v, err := strconv.ParseFloat(fields[0], 64) // also reads NaN, +Inf, -Inf
	if err != nil {
		return s, fmt.Errorf("metrics: sample %q: %w", s.name, err)
	}
	s.value = v
	return s, nil
}

// parseLabels reads `label="value",…}` into labels and returns what follows the '}'.
// Values may hold the escapes \\, \" and \n.
func parseLabels(in string, labels map[string]string) (rest string, err error) {
	for {
		in = strings.TrimLeft(in, " \t")
		if strings.HasPrefix(in, "}") {
			return in[1:], nil
		}
		eq := strings.IndexByte(in, '=')
		if eq <= 0 || len(in) < eq+2 || in[eq+1] != '"' {
			return "", fmt.Errorf("malformed labels at %q", clip(in, 40))
		}
		key := strings.TrimSpace(in[:eq])
		in = in[eq+2:]
		var value strings.Builder
		closed := false
		for len(in) > 0 && !closed {
			c := in[0]
			in = in[1:]
			switch {
			case c == '"':
				closed = true
			case c == '\\' && len(in) > 0:
				switch in[0] {
				case 'n':
					value.WriteByte('\n')
				default:
					value.WriteByte(in[0])
				}
				in = in[1:]
			default:
				value.WriteByte(c)
			}
		}
		if !closed {
			return "", fmt.Errorf("label %s: unterminated value", key)
		}
		labels[key] = value.String()
		in = strings.TrimLeft(in, " \t")
		in = strings.TrimPrefix(in, ",")
	}
}

func formatLabels(labels map[string]string) string {
	if len(labels) == 0 {
		return ""
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		parts = append(parts, k+"="+strconv.Quote(labels[k]))
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// scrapeMetric fetches base+"/metrics" and returns one sample's value.
func scrapeMetric(ctx context.Context, base, name string, labels map[string]string) (float64, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET %s/metrics: %s", base, resp.Status)
	}
	return metricValue(string(body), name, labels)
}
