package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/seqd/seqd/internal/loadreport"
	"github.com/seqd/seqd/internal/stats"
	"github.com/seqd/seqd/objectid"
	"github.com/seqd/seqd/snowflake"
	"github.com/seqd/seqd/uuidv7"
)

// summary is the report of a run, printed as text or, with -json, as one JSON object
// (package loadreport: the JSON is an interface that seqbench and scripts read).
type summary struct {
	loadreport.Summary
	// Promise says what the sequence check held the values to (seq only):
	// strict's, cached's or both, and where the mode was read (promise.go).
	Promise string `json:"promise,omitempty"`

	// For the text form.
	elapsed time.Duration
	latency struct{ p50, p90, p99, max time.Duration }
}

// summarize counts and verifies what the workers received. It sorts their ids in place.
func summarize(cfg config, out outcome) summary {
	s := summary{Summary: loadreport.Summary{
		Target:       cfg.target,
		Path:         cfg.path(),
		Clients:      cfg.clients,
		Stopped:      out.stopped,
		ElapsedS:     out.elapsed.Seconds(),
		Errors:       map[string]int64{},
		ErrorSamples: map[string]string{},
		Failures:     []string{},
	}, elapsed: out.elapsed}
	byAddr := map[string]*loadreport.Addr{}
	for _, a := range cfg.addrs {
		s.Addrs = append(s.Addrs, loadreport.Addr{Addr: a})
	}
	for i := range s.Addrs {
		byAddr[s.Addrs[i].Addr] = &s.Addrs[i]
	}

	var latencies []time.Duration
	var oids []stream[objectid.ID]
	var uuids []stream[uuidv7.UUID]
	var snowflakes []stream[snowflake.ID]
	var seqs []stream[seqOp]
	for _, w := range out.workers {
		failed := w.requests - w.ok
		values := int64(len(w.oids)) + int64(len(w.uuids)) + int64(len(w.snowflakes)) + int64(len(w.seqs))*int64(cfg.perResponse())
		s.Requests += w.requests
		s.OK += w.ok
		s.Failed += failed
		a := byAddr[w.addr]
		a.Clients++
		a.Requests += w.requests
		a.Failed += failed
		a.Values += values
		for kind, n := range w.errors {
			s.Errors[kind] += n
		}
		for kind, msg := range w.samples {
			if _, ok := s.ErrorSamples[kind]; !ok {
				s.ErrorSamples[kind] = msg
			}
		}
		latencies = append(latencies, w.latencies...)
		oids = append(oids, stream[objectid.ID]{w.client, w.addr, w.oids})
		uuids = append(uuids, stream[uuidv7.UUID]{w.client, w.addr, w.uuids})
		snowflakes = append(snowflakes, stream[snowflake.ID]{w.client, w.addr, w.snowflakes})
		seqs = append(seqs, stream[seqOp]{w.client, w.addr, w.seqs})
	}

	slices.Sort(latencies)
	s.latency.p50 = stats.Percentile(latencies, 50)
	s.latency.p90 = stats.Percentile(latencies, 90)
	s.latency.p99 = stats.Percentile(latencies, 99)
	s.latency.max = stats.Percentile(latencies, 100)
	s.LatencyP50Ms, s.LatencyP90Ms = millis(s.latency.p50), millis(s.latency.p90)
	s.LatencyP99Ms, s.LatencyMaxMs = millis(s.latency.p99), millis(s.latency.max)

	var v verdict
	switch cfg.target {
	case targetOID:
		v = verifyObjectIDs(oids)
	case targetUUID:
		v = verifyUUIDs(uuids)
	case targetSnowflake:
		v = verifyIDs(snowflakes, "snowflake", cmp.Compare[snowflake.ID], snowflake.ID.String)
	default:
		j := judge(cfg, out.modes)
		s.Promise = j.promise
		v = verifySequence(out.began, seqs, cfg.expectContiguous, s.Failed, j)
		s.Sequence = &loadreport.Sequence{Name: cfg.name, Strategy: cfg.strategy,
			Min: v.sequence.Min, Max: v.sequence.Max, Missing: uint64(v.sequence.Gaps)}
	}
	s.Values, s.Distinct, s.Duplicates, s.OrderErrors = v.values, v.distinct, v.duplicates, v.orderViolations
	if secs := out.elapsed.Seconds(); secs > 0 {
		s.RequestsPerS = float64(s.Requests) / secs
		s.ValuesPerS = float64(s.Values) / secs
	}

	s.Failures = append(s.Failures, v.failures...)
	if n := s.Errors[kindInvalid]; n > 0 {
		s.Failures = append(s.Failures, fmt.Sprintf("%d invalid responses, first: %s", n, s.ErrorSamples[kindInvalid]))
	}
	if s.OK == 0 {
		s.Failures = append(s.Failures, fmt.Sprintf("no request succeeded (%d sent)", s.Requests))
	}
	if cfg.maxErrors >= 0 && s.Failed > cfg.maxErrors {
		s.Failures = append(s.Failures, fmt.Sprintf("%d requests failed, more than -max-errors %d", s.Failed, cfg.maxErrors))
	}
	s.Passed = len(s.Failures) == 0
	return s
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func (s *summary) writeJSON(w io.Writer) error {
	return json.NewEncoder(w).Encode(s)
}

func (s *summary) writeText(w io.Writer) error {
	var b strings.Builder
	line := func(label, format string, args ...any) {
		fmt.Fprintf(&b, "%-11s %s\n", label, fmt.Sprintf(format, args...))
	}
	line("target", "GET %s", s.Path)
	for _, a := range s.Addrs {
		line("address", "%s: %d clients, %d requests, %d failed, %d values", a.Addr, a.Clients, a.Requests, a.Failed, a.Values)
	}
	line("stopped", "%s, after %s", s.Stopped, s.elapsed.Round(time.Millisecond))
	line("requests", "%d (%d ok, %d failed)", s.Requests, s.OK, s.Failed)
	line("values", "%d", s.Values)
	line("throughput", "%.1f requests/s, %.1f values/s", s.RequestsPerS, s.ValuesPerS)
	if s.OK > 0 {
		l := s.latency
		line("latency", "p50 %s, p90 %s, p99 %s, max %s", roundLatency(l.p50), roundLatency(l.p90), roundLatency(l.p99), roundLatency(l.max))
	}
	for _, kind := range slices.Sorted(maps.Keys(s.Errors)) {
		line("errors", "%s: %d (first: %s)", kind, s.Errors[kind], s.ErrorSamples[kind])
	}
	line("unique", "%d distinct, %d duplicates", s.Distinct, s.Duplicates)
	if s.Promise != "" {
		line("promise", "%s", s.Promise)
	}
	line("order", "%d violations", s.OrderErrors)
	if q := s.Sequence; q != nil && s.Distinct > 0 {
		line("sequence", "%s: %d..%d, %d missing", q.Name, q.Min, q.Max, q.Missing)
	}
	for _, f := range s.Failures {
		line("FAIL", "%s", f)
	}
	if s.Passed {
		line("result", "PASS")
	} else {
		line("result", "FAIL")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func roundLatency(d time.Duration) time.Duration {
	if d >= time.Millisecond {
		return d.Round(10 * time.Microsecond)
	}
	return d.Round(time.Microsecond)
}
