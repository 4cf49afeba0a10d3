package main

import (
	"fmt"
	"strings"
	"time"
)

// report is everything a run prints.
type report struct {
	machine  machine
	command  string // how seqbench was run
	duration time.Duration
	started  time.Time
	figures  []figureResult
	runs     []loadRun
	servers  []string // how each server was started
}

// markdown renders the report: the figures table, notes, every seqload run with the CPU
// time each process used, and the commands.
func (r *report) markdown() string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	m := r.machine
	p("# seqd throughput benchmark")
	p("")
	p("Measured %s by `%s` on %d CPUs (%s), %s, %s.",
		r.started.UTC().Format("2006-01-02 15:04 MST"), r.command, m.cpus, m.cpuModel, m.goVersion, m.os)
	p("The load tool (seqload), the server and the dev store (FerretDB on SQLite) share these %d CPUs: every figure is for the whole system on one machine, not for seqd alone. Each load runs %s.", m.cpus, r.duration)
	p("")
	p("| figure | seqd | anchor | ratio | target | met? |")
	p("|---|---|---|---|---|---|")
	for _, f := range r.figures {
		for _, row := range f.rows {
			p("| %s | %s | %s | %s | %s | %s |", cell(row.figure), cell(row.seqd), cell(row.anchor), cell(row.ratio), cell(row.target), cell(row.met))
		}
	}
	p("")
	for _, f := range r.figures {
		for _, n := range f.notes {
			p("- Figure %d: %s", f.id, n)
		}
	}

	if len(r.runs) > 0 {
		p("")
		p("## Runs")
		p("")
		p("Every seqload run, from its -json summary. CPU is the CPU time, in seconds, that each process used during the run: seqload, the server, the store, and everything else on the machine (other: the machine's busy time less those three; other users' work makes a run noisy). Server CPU/req is the server's CPU time over the requests answered: less sensitive to a busy machine than requests/s.")
		p("")
		p("| fig | server | path | c | req/s | values/s | p50 | p99 | failed | duplicates | missing | checks | CPU s load / server / store / other | server CPU/req |")
		p("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
		for _, run := range r.runs {
			s := run.summary
			checks := "pass"
			if !s.Passed {
				checks = "fail"
			}
			failed := fmt.Sprint(s.Failed)
			if s.Failed > 0 {
				failed += fmt.Sprintf(" %v", s.Errors)
			}
			other := "?"
			if run.cpuMachine > 0 {
				other = fmt.Sprintf("%.1f", max(0, (run.cpuMachine-run.cpuLoad-run.cpuServer-run.cpuStore).Seconds()))
			}
			perRequest := "?"
			if d := run.serverCPUPerRequest(); d > 0 {
				perRequest = formatMicros(d)
			}
			p("| %d | %s | `%s` | %d | %s | %s | %s | %s | %s | %d | %d | %s | %.1f / %.1f / %.1f / %s | %s |",
				run.figure, cell(run.server), s.Path, s.Clients, formatCount(s.RequestsPerS), formatCount(s.ValuesPerS),
				formatMs(s.LatencyP50Ms), formatMs(s.LatencyP99Ms), cell(failed), s.Duplicates, s.missing(), checks,
				run.cpuLoad.Seconds(), run.cpuServer.Seconds(), run.cpuStore.Seconds(), other, perRequest)
		}
	}

	p("")
	p("## Commands")
	p("")
	p("SEQD, SEQD_NO_COALESCE and BARE stand for the servers' addresses:")
	p("")
	for _, s := range r.servers {
		p("- %s", s)
	}
	for _, f := range r.figures {
		if len(f.commands) == 0 {
			continue
		}
		p("")
		p("Figure %d, %s:", f.id, f.title)
		p("")
		p("```")
		for _, c := range f.commands {
			p("%s", c)
		}
		p("```")
	}
	return b.String()
}

// cell makes s safe inside a Markdown table cell.
func cell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}

func formatMicros(d time.Duration) string {
	return fmt.Sprintf("%.1f µs", float64(d)/float64(time.Microsecond))
}
