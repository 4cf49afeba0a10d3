// Package gobench runs Go benchmarks of this repository with go test and reads their
// results as benchstat does: the median of each benchmark's runs, by unit. seqbench
// sets its figures next to them.
package gobench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchmath"

	"github.com/seqd/seqd/internal/proc"
)

// Results are go test -bench results: each benchmark's median by name, as benchfmt
// gives it (without "Benchmark", with the -GOMAXPROCS suffix), and by unit as go test
// prints it ("ns/op").
type Results map[string]map[string]float64

// Timeout bounds one Run when ctx has no earlier deadline.
const Timeout = 5 * time.Minute

// Run runs `go test -run ^$` with args (-bench and the packages) in the module root,
// with env (KEY=value) on top of this process's environment, and reads its output.
func Run(ctx context.Context, env []string, args ...string) (Results, error) {
	root, err := proc.RepoRoot(ctx)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	cmd := proc.Command(ctx, "go", append([]string{"test", "-run", "^$"}, args...)...)
	cmd.Dir, cmd.Env = root, append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("gobench: go %s: %w\n%s%s", proc.ShellJoin(cmd.Args[1:]), err, tail(stdout.String()), tail(stderr.String()))
	}
	return Read(&stdout)
}

// Read reads go test -bench output with golang.org/x/perf/benchfmt and takes the
// median of each benchmark's runs as benchstat does, with benchmath.
func Read(r io.Reader) (Results, error) {
	values := map[string]map[string][]float64{}
	br := benchfmt.NewReader(r, "go test")
	for br.Scan() {
		switch rec := br.Result().(type) {
		case *benchfmt.SyntaxError:
			return nil, rec
		case *benchfmt.Result:
			name := rec.Name.String()
			if values[name] == nil {
				values[name] = map[string][]float64{}
			}
			for _, v := range rec.Values {
				if v.OrigUnit != "" { // benchfmt tidies ns/op into sec/op
					v.Unit, v.Value = v.OrigUnit, v.OrigValue
				}
				values[name][v.Unit] = append(values[name][v.Unit], v.Value)
			}
		}
	}
	out := Results{}
	for name, units := range values {
		out[name] = map[string]float64{}
		for unit, vs := range units {
			out[name][unit] = benchmath.AssumeNothing.Summary(benchmath.NewSample(vs, &benchmath.DefaultThresholds), 0.95).Center
		}
	}
	return out, br.Err()
}

// Find returns the benchmark called name (without the -GOMAXPROCS suffix) and that
// suffix.
func (bs Results) Find(name string) (map[string]float64, string, bool) {
	for full, r := range bs {
		if base, procs, _ := strings.Cut(full, "-"); base == name { // names here have no other "-"
			return r, procs, true
		}
	}
	return nil, "", false
}

// Get is Find for a benchmark that must be there: an error says it is not.
func (bs Results) Get(name string) (map[string]float64, string, error) {
	r, procs, ok := bs.Find(name)
	if !ok {
		return nil, "", fmt.Errorf("gobench: no Benchmark%s in the output", name)
	}
	return r, procs, nil
}

// tail is the end of a command's output, enough for an error message.
func tail(s string) string {
	if len(s) > 2000 {
		return "…" + s[len(s)-2000:]
	}
	return s
}
