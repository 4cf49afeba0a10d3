package main

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/procfs"
)

// markdown renders the report: the figures table and notes, every seqload run with the
// CPU time each process used, and how the servers were started.
func (b *bench) markdown(started time.Time, figures []figureResult) string {
	var out strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&out, format+"\n", args...) }
	p("# seqd throughput benchmark\n")
	model := "unknown"
	if info, err := procfs.NewDefaultFS(); err == nil {
		if cpus, err := info.CPUInfo(); err == nil && len(cpus) > 0 {
			model = cpus[0].ModelName
		}
	}
	p("Measured %s by `%s` on %d CPUs (%s), %s, %s/%s.", started.UTC().Format("2006-01-02 15:04 MST"), b.cfg.command,
		runtime.NumCPU(), model, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	p("The load tool (seqload), the server and the dev store (FerretDB on SQLite) share these CPUs: every figure is for the whole system on one machine, not for seqd alone. Each load runs %s. The targets are in the README, next to these figures.\n", b.cfg.duration)
	p("| figure | seqd | anchor, same run | ratio |")
	p("|---|---|---|---|")
	for _, f := range figures {
		for _, row := range f.rows {
			p("| %s | %s | %s | %s |", cell(row[0]), cell(row[1]), cell(row[2]), cell(row[3]))
		}
	}
	p("")
	for _, f := range figures {
		for _, n := range f.notes {
			p("- Figure %d: %s", f.id, n)
		}
	}
	p("\n## Runs\n")
	p("Every seqload run: `seqload -addr SERVER -json -progress 0 -timeout 10s` and the arguments shown. CPU is the CPU time, in seconds, that seqload, the server and the store used during the run; server CPU/req is the server's over the requests answered, less sensitive to a busy machine than requests/s.\n")
	p("| fig | server | arguments | req/s | values/s | p50 | p99 | failed | duplicates | missing | checks | CPU s load / server / store | server CPU/req |")
	p("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range b.runs {
		checks, failed := map[bool]string{true: "pass", false: "fail"}[r.Passed], fmt.Sprint(r.Failed)
		if r.Failed > 0 {
			failed += fmt.Sprint(" ", r.Errors)
		}
		p("| %d | %s | `%s` | %s | %s | %s | %s | %s | %d | %d | %s | %.1f / %.1f / %.1f | %s |",
			r.figure, cell(r.server), r.args, formatCount(r.RequestsPerS), formatCount(r.ValuesPerS),
			formatMs(r.LatencyP50Ms), formatMs(r.LatencyP99Ms), failed, r.Duplicates, r.Missing(), checks,
			r.cpuLoad.Seconds(), r.cpuServer.Seconds(), r.cpuStore.Seconds(), formatMicros(r.serverCPUPerRequest()))
	}
	p("\n## Servers\n")
	for _, s := range b.servers {
		p("- %s: `%s`", s[0], s[1])
	}
	return out.String()
}

// cell makes s safe inside a Markdown table cell.
func cell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
}

func formatMs(ms float64) string {
	if ms < 1 {
		return fmt.Sprintf("%.0f µs", ms*1000)
	}
	return fmt.Sprintf("%.2f ms", ms)
}

func formatMicros(d time.Duration) string {
	return fmt.Sprintf("%.1f µs", float64(d)/float64(time.Microsecond))
}

// formatCount writes a rate or a count with thousands separators, or as millions.
func formatCount(v float64) string {
	if v >= 10_000_000 {
		return fmt.Sprintf("%.1fM", v/1e6)
	}
	s := strconv.FormatInt(int64(v+0.5), 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// clip shortens s to about n bytes for a message.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
