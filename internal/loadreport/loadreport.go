// Package loadreport is the summary of a load run that seqload -json prints and
// seqbench reads: one definition of that interface. The JSON field names are stable:
// scripts read them too.
package loadreport

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// A Summary is the report of one seqload run.
type Summary struct {
	Target       string            `json:"target"` // "oid" or "seq"
	Path         string            `json:"path"`   // path and query of every request
	Addrs        []Addr            `json:"addrs"`
	Clients      int               `json:"clients"`
	Stopped      string            `json:"stopped"` // "duration", "requests", "interrupt" or "max-errors"
	ElapsedS     float64           `json:"elapsed_s"`
	Requests     int64             `json:"requests"` // answered or failed; ok + failed
	OK           int64             `json:"ok"`
	Failed       int64             `json:"failed"`
	Values       int64             `json:"values"` // ObjectIds or sequence values received
	RequestsPerS float64           `json:"requests_per_s"`
	ValuesPerS   float64           `json:"values_per_s"`
	LatencyP50Ms float64           `json:"latency_p50_ms"` // of successful requests
	LatencyP90Ms float64           `json:"latency_p90_ms"`
	LatencyP99Ms float64           `json:"latency_p99_ms"`
	LatencyMaxMs float64           `json:"latency_max_ms"`
	Errors       map[string]int64  `json:"errors"`        // failed requests by HTTP status, "timeout", "transport" or "invalid"
	ErrorSamples map[string]string `json:"error_samples"` // the first message of each kind
	Distinct     int64             `json:"distinct"`
	Duplicates   int64             `json:"duplicates"`       // values received beyond their first copy
	OrderErrors  int64             `json:"order_violations"` // oid: ids not above the previous id of their client; seq: requests out of real-time order
	Sequence     *Sequence         `json:"sequence,omitempty"`
	Passed       bool              `json:"passed"`
	Failures     []string          `json:"failures"`
}

// Addr is the share of one address in a run with several.
type Addr struct {
	Addr     string `json:"addr"`
	Clients  int    `json:"clients"`
	Requests int64  `json:"requests"`
	Failed   int64  `json:"failed"`
	Values   int64  `json:"values"`
}

// Sequence is what a run on /seq/{name}/next received, as one range.
type Sequence struct {
	Name     string `json:"name"`
	Strategy string `json:"strategy,omitempty"` // as requested; empty when the server chose
	Min      int64  `json:"min"`
	Max      int64  `json:"max"`
	Missing  uint64 `json:"missing"` // values between min and max never received
}

// Missing is the number of sequence values never received between the smallest and
// the largest; 0 for ObjectIds.
func (s Summary) Missing() uint64 {
	if s.Sequence == nil {
		return 0
	}
	return s.Sequence.Missing
}

// Read reads seqload -json's standard output: its last line, one JSON object.
func Read(stdout []byte) (Summary, error) {
	var s Summary
	lines := strings.Split(strings.TrimSpace(string(stdout)), "\n")
	line := strings.TrimSpace(lines[len(lines)-1])
	if !strings.HasPrefix(line, "{") {
		return s, fmt.Errorf("loadreport: no JSON summary in %q", clip(string(stdout), 300))
	}
	if err := json.Unmarshal([]byte(line), &s); err != nil {
		return s, fmt.Errorf("loadreport: %w", err)
	}
	if s.Target == "" {
		return s, errors.New(`loadreport: no "target": not a seqload -json summary`)
	}
	return s, nil
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
