package main

import (
	"fmt"
	"maps"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/procfs"
)

// report is everything a run prints.
type report struct {
	command  string // how seqbench was run
	duration time.Duration
	started  time.Time
	figures  []figureResult
	runs     []loadRun
	servers  map[string]string // how each server was started, by name
}

// machine describes what the figures were measured on.
func machine() string {
	model := "unknown CPU"
	if fs, err := procfs.NewDefaultFS(); err == nil {
		if info, err := fs.CPUInfo(); err == nil && len(info) > 0 {
			model = info[0].ModelName
		}
	}
	kernel, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	return fmt.Sprintf("%d CPUs (%s), %s, %s/%s %s", runtime.NumCPU(), model, runtime.Version(),
		runtime.GOOS, runtime.GOARCH, strings.TrimSpace(string(kernel)))
}

// markdown renders the report: the figures table, notes, every seqload run with the CPU
// time each process used, and the commands.
func (r *report) markdown() string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	p("# seqd throughput benchmark\n")
	p("Measured %s by `%s` on %s.", r.started.UTC().Format("2006-01-02 15:04 MST"), r.command, machine())
	p("The load tool (seqload), the server and the dev store (FerretDB on SQLite) share these CPUs: every figure is for the whole system on one machine, not for seqd alone. Each load runs %s. The targets are in the README, next to these figures.\n", r.duration)
	p("| figure | seqd | anchor, same run | ratio |")
	p("|---|---|---|---|")
	for _, f := range r.figures {
		for _, row := range f.rows {
			p("| %s | %s | %s | %s |", cell(row[0]), cell(row[1]), cell(row[2]), cell(row[3]))
		}
	}
	p("")
	for _, f := range r.figures {
		for _, n := range f.notes {
			p("- Figure %d: %s", f.id, n)
		}
	}
	if len(r.runs) > 0 {
		p("\n## Runs\n")
		p("Every seqload run, from its -json summary; each ran `seqload -addr SERVER -json -progress 0 -timeout 10s` and the arguments shown. CPU is the CPU time, in seconds, that seqload, the server and the store used during the run; server CPU/req is the server's over the requests answered, less sensitive to a busy machine than requests/s.\n")
		p("| fig | server | arguments | req/s | values/s | p50 | p99 | failed | duplicates | missing | checks | CPU s load / server / store | server CPU/req |")
		p("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
		for _, run := range r.runs {
			checks, failed := "pass", strconv.FormatInt(run.Failed, 10)
			if !run.Passed {
				checks = "fail"
			}
			if run.Failed > 0 {
				failed += fmt.Sprintf(" %v", run.Errors)
			}
			p("| %d | %s | `%s` | %s | %s | %s | %s | %s | %d | %d | %s | %.1f / %.1f / %.1f | %s |",
				run.figure, cell(run.server), run.args, formatCount(run.RequestsPerS), formatCount(run.ValuesPerS),
				formatMs(run.LatencyP50Ms), formatMs(run.LatencyP99Ms), cell(failed), run.Duplicates, run.Sequence.Missing, checks,
				run.cpuLoad.Seconds(), run.cpuServer.Seconds(), run.cpuStore.Seconds(), formatMicros(run.serverCPUPerRequest()))
		}
	}
	p("\n## Commands\n")
	p("SEQD, SEQD_NO_COALESCE and BARE stand for the servers' addresses:\n")
	for _, name := range slices.Sorted(maps.Keys(r.servers)) {
		p("- %s: `%s`", name, r.servers[name])
	}
	for _, f := range r.figures {
		if len(f.commands) > 0 {
			p("\nFigure %d, %s:\n\n```\n%s\n```", f.id, f.title, strings.Join(f.commands, "\n"))
		}
	}
	return b.String()
}

// cell makes s safe inside a Markdown table cell.
func cell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

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

// shellJoin writes args as a shell would need them, quoting what needs quoting.
func shellJoin(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$*?[]{}()<>|&;^#~") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}

// clip shortens s to about n bytes for a message.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
