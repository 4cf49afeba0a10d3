package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// loadSummary is the part of seqload's -json summary that seqbench reads. The field
// names are seqload's documented interface.
type loadSummary struct {
	Target       string            `json:"target"`
	Path         string            `json:"path"`
	Clients      int               `json:"clients"`
	Stopped      string            `json:"stopped"`
	ElapsedS     float64           `json:"elapsed_s"`
	Requests     int64             `json:"requests"`
	OK           int64             `json:"ok"`
	Failed       int64             `json:"failed"`
	Values       int64             `json:"values"`
	RequestsPerS float64           `json:"requests_per_s"`
	ValuesPerS   float64           `json:"values_per_s"`
	LatencyP50Ms float64           `json:"latency_p50_ms"`
	LatencyP90Ms float64           `json:"latency_p90_ms"`
	LatencyP99Ms float64           `json:"latency_p99_ms"`
	LatencyMaxMs float64           `json:"latency_max_ms"`
	Errors       map[string]int64  `json:"errors"`
	ErrorSamples map[string]string `json:"error_samples"`
	Distinct     int64             `json:"distinct"`
	Duplicates   int64             `json:"duplicates"`
	OrderErrors  int64             `json:"order_violations"`
	Sequence     *struct {
		Name    string `json:"name"`
		Min     int64  `json:"min"`
		Max     int64  `json:"max"`
		Missing uint64 `json:"missing"`
	} `json:"sequence"`
	Passed   bool     `json:"passed"`
	Failures []string `json:"failures"`
}

// missing is the number of sequence values never received between the smallest and
// the largest, 0 for ObjectIds.
func (s loadSummary) missing() uint64 {
	if s.Sequence == nil {
		return 0
	}
	return s.Sequence.Missing
}

// readLoadSummary reads seqload -json's standard output: one JSON object on one line.
// It takes the last line that is an object, so that stray lines before it do no harm.
func readLoadSummary(stdout []byte) (loadSummary, error) {
	var s loadSummary
	lines := strings.Split(strings.TrimSpace(string(stdout)), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		line := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(line, "{") {
			continue
		}
		if err := json.Unmarshal([]byte(line), &s); err != nil {
			return s, fmt.Errorf("seqload summary: %w", err)
		}
		if s.Target == "" {
			return s, errors.New(`seqload summary: no "target": not a seqload -json summary`)
		}
		return s, nil
	}
	return s, fmt.Errorf("seqload printed no JSON summary: %q", clip(string(stdout), 300))
}

// loadRun is one seqload run, for the runs table of the report.
type loadRun struct {
	figure  int
	server  string // the server's name, e.g. "seqd (coalescing)"
	command string // seqload's command line
	summary loadSummary
	// CPU time used during the run by seqload, the server and the store, and by every
	// process on the machine (0: unknown).
	cpuLoad, cpuServer, cpuStore, cpuMachine time.Duration
}

// seqloadArgs are the flags every run gets: the JSON summary, no progress lines, and a
// request timeout that a healthy run never reaches.
var seqloadArgs = []string{"-json", "-progress", "0", "-timeout", "10s"}

// load runs seqload against srv with args (which must bound the run with -d or -n),
// records the run for the report and returns its summary. seqload exits 1 when a check
// failed, duplicates for example; its summary says so, and what a failed check means is
// the figure's to judge. A run without a summary is an error.
func (b *bench) load(ctx context.Context, figure int, srv *server, args ...string) (loadSummary, error) {
	run, err := b.measure(ctx, figure, srv, args...)
	return run.summary, err
}

// measure is load, returning the whole record: the summary and the CPU times.
func (b *bench) measure(ctx context.Context, figure int, srv *server, args ...string) (loadRun, error) {
	run, err := b.seqload(ctx, srv, args)
	if err != nil {
		return run, err
	}
	run.figure = figure
	b.runs = append(b.runs, run)
	s := run.summary
	b.logf("  → %.0f requests/s, %.0f values/s, p50 %.3f ms, p99 %.3f ms, %d failed, %d duplicates",
		s.RequestsPerS, s.ValuesPerS, s.LatencyP50Ms, s.LatencyP99Ms, s.Failed, s.Duplicates)
	return run, nil
}

// serverCPUPerRequest is the server's CPU time per request of the run, 0 if unknown.
func (r loadRun) serverCPUPerRequest() time.Duration {
	if r.summary.Requests == 0 {
		return 0
	}
	return r.cpuServer / time.Duration(r.summary.Requests)
}

// seqload runs seqload against srv and measures the CPU time it, srv and the store used.
func (b *bench) seqload(ctx context.Context, srv *server, args []string) (loadRun, error) {
	args = append(append([]string{"-addr", srv.addr}, seqloadArgs...), args...)
	run := loadRun{server: srv.name, command: "seqload " + shellJoin(args)}
	b.logf("  %s", run.command)

	ctx, cancel := context.WithTimeout(ctx, b.cfg.duration+time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, b.bins.seqload, args...)
	cmd.SysProcAttr = sysProcAttr()
	// On SIGINT seqload stops its load and still prints its summary.
	cmd.Cancel = func() error { return interruptGroup(cmd) }
	cmd.WaitDelay = 15 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr

	serverCPU, storeCPU := srv.proc.cpu(), b.store.cpu()
	machineCPU, machineErr := machineBusyCPU()
	runErr := cmd.Run()
	run.cpuServer, run.cpuStore = srv.proc.cpu()-serverCPU, b.store.cpu()-storeCPU
	if after, err := machineBusyCPU(); err == nil && machineErr == nil {
		run.cpuMachine = after - machineCPU
	}
	if cmd.ProcessState != nil {
		run.cpuLoad = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	if ctx.Err() != nil {
		return run, fmt.Errorf("seqload: %w", context.Cause(ctx))
	}
	if srvErr := srv.proc.exited(); srvErr != nil {
		return run, srvErr
	}
	var err error
	if run.summary, err = readLoadSummary(stdout.Bytes()); err != nil {
		return run, fmt.Errorf("%s: %w (exit: %v; stderr: %s)", run.command, err, runErr, clip(stderr.String(), 500))
	}
	return run, nil
}

// clip shortens s to about n bytes for a message.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
