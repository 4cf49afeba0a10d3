package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchmath"

	"github.com/seqd/seqd/internal/proc"
)

// benchmarks are go test -bench results: each benchmark's runs summarised by name, as
// benchfmt gives it (without "Benchmark", with the -GOMAXPROCS suffix), and by unit as
// go test prints it ("ns/op").
type benchmarks map[string]map[string]benchmath.Summary

// goBench runs `go test -run ^$ -bench …` with args in the module root and env on top
// of seqbench's own environment.
func goBench(ctx context.Context, env []string, args ...string) (benchmarks, error) {
	root, err := proc.RepoRoot(ctx)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := proc.Command(ctx, "go", append([]string{"test", "-run", "^$"}, args...)...)
	cmd.Dir, cmd.Env = root, append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s: %w\n%s%s", "go "+shellJoin(cmd.Args[1:]), err, clip(stdout.String(), 2000), clip(stderr.String(), 2000))
	}
	return readBenchmarks(&stdout)
}

// readBenchmarks reads go test -bench output with golang.org/x/perf/benchfmt and
// summarises each benchmark's runs as benchstat does: the median and its 95%
// confidence interval.
func readBenchmarks(r io.Reader) (benchmarks, error) {
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
	out := benchmarks{}
	for name, units := range values {
		out[name] = map[string]benchmath.Summary{}
		for unit, vs := range units {
			out[name][unit] = benchmath.AssumeNothing.Summary(benchmath.NewSample(vs, &benchmath.DefaultThresholds), 0.95)
		}
	}
	return out, br.Err()
}

// find returns the benchmark called name (without the -GOMAXPROCS suffix) and that
// suffix.
func (bs benchmarks) find(name string) (map[string]benchmath.Summary, string, bool) {
	for full, r := range bs {
		if procs, ok := strings.CutPrefix(full, name+"-"); ok {
			return r, procs, true
		} else if full == name {
			return r, "", true
		}
	}
	return nil, "", false
}

// withCI writes a summary as benchstat does: the median ± the larger distance to the
// ends of its 95% confidence interval, which takes at least 6 runs.
func withCI(s benchmath.Summary, unit string) string {
	spread := 100 * max(s.Hi-s.Center, s.Center-s.Lo) / s.Center
	if math.IsInf(spread, 0) || math.IsNaN(spread) {
		return fmt.Sprintf("%.4g %s", s.Center, unit)
	}
	return fmt.Sprintf("%.4g %s ±%.0f%%", s.Center, unit, spread)
}

var objectIDBench = []string{"-bench", ".", "-benchmem", "-count", "5", "./objectid/"}

func figureObjectID(ctx context.Context, b *bench, res *figureResult) error {
	res.commands = []string{"go test -run '^$' " + shellJoin(objectIDBench)}
	b.logf("  %s", res.commands[0])
	results, err := goBench(ctx, nil, objectIDBench...)
	if err != nil {
		return err
	}
	for _, mode := range []string{"serial", "parallel"} {
		ours, procs, ok := results.find("New/" + mode)
		driver, _, ok2 := results.find("DriverNewObjectID/" + mode)
		if !ok || !ok2 {
			return fmt.Errorf("no BenchmarkNew/%s or BenchmarkDriverNewObjectID/%s in the output", mode, mode)
		}
		res.row(fmt.Sprintf("1. objectid.New, %s (GOMAXPROCS %s)", mode, procs),
			fmt.Sprintf("%s, %g allocs/op", withCI(ours["ns/op"], "ns/op"), ours["allocs/op"].Center),
			fmt.Sprintf("bson.NewObjectID %s, %g allocs/op", withCI(driver["ns/op"], "ns/op"), driver["allocs/op"].Center),
			fmt.Sprintf("%.2f× (driver ns ÷ ours)", driver["ns/op"].Center/ours["ns/op"].Center))
	}
	if fill, _, ok := results.find("Fill/10000"); ok {
		res.row("1. objectid.Fill, 10,000 ids", withCI(fill["ns/id"], "ns/id"), "—", "—")
	}
	return nil
}
