package main

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

// benchmarks are go test -bench results: each benchmark's median by name, as benchfmt
// gives it (without "Benchmark", with the -GOMAXPROCS suffix), and by unit as go test
// prints it ("ns/op").
type benchmarks map[string]map[string]float64

// goBench runs `go test -run ^$ -bench …` with args in the module root and env on top
// of seqbench's own environment.
func (b *bench) goBench(ctx context.Context, env []string, args ...string) (benchmarks, error) {
	b.logf("  %s go test -run '^$' %s", strings.Join(env, " "), shellJoin(args))
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

// readBenchmarks reads go test -bench output with golang.org/x/perf/benchfmt and takes
// the median of each benchmark's runs as benchstat does, with benchmath.
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
		out[name] = map[string]float64{}
		for unit, vs := range units {
			out[name][unit] = benchmath.AssumeNothing.Summary(benchmath.NewSample(vs, &benchmath.DefaultThresholds), 0.95).Center
		}
	}
	return out, br.Err()
}

// find returns the benchmark called name (without the -GOMAXPROCS suffix) and that
// suffix.
func (bs benchmarks) find(name string) (map[string]float64, string, bool) {
	for full, r := range bs {
		if base, procs, _ := strings.Cut(full, "-"); base == name { // names here have no other "-"
			return r, procs, true
		}
	}
	return nil, "", false
}

var objectIDBench = []string{"-bench", ".", "-benchmem", "-count", "5", "./objectid/"}

func figureObjectID(ctx context.Context, b *bench, res *figureResult) error {
	res.note("`go test -run '^$' %s`, medians (golang.org/x/perf/benchmath, as benchstat).", shellJoin(objectIDBench))
	results, err := b.goBench(ctx, nil, objectIDBench...)
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
			fmt.Sprintf("%.4g ns/op, %g allocs/op", ours["ns/op"], ours["allocs/op"]),
			fmt.Sprintf("bson.NewObjectID %.4g ns/op, %g allocs/op", driver["ns/op"], driver["allocs/op"]),
			fmt.Sprintf("%.2f× (driver ns ÷ ours)", driver["ns/op"]/ours["ns/op"]))
	}
	if fill, _, ok := results.find("Fill/10000"); ok {
		res.row("1. objectid.Fill, 10,000 ids", fmt.Sprintf("%.4g ns/id", fill["ns/id"]), "—", "—")
	}
	return nil
}
