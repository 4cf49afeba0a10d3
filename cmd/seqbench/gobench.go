package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/seqd/seqd/internal/gobench"
	"github.com/seqd/seqd/internal/proc"
)

// goBench runs go test benchmarks (package gobench), saying so in the log.
func (b *bench) goBench(ctx context.Context, env []string, args ...string) (gobench.Results, error) {
	b.logf("  %s go test -run '^$' %s", strings.Join(env, " "), proc.ShellJoin(args))
	return gobench.Run(ctx, env, args...)
}

var objectIDBench = []string{"-bench", ".", "-benchmem", "-count", "5", "./objectid/"}

func figureObjectID(ctx context.Context, b *bench, res *figureResult) error {
	res.note("`go test -run '^$' %s`, medians (golang.org/x/perf/benchmath, as benchstat).", proc.ShellJoin(objectIDBench))
	results, err := b.goBench(ctx, nil, objectIDBench...)
	if err != nil {
		return err
	}
	for _, mode := range []string{"serial", "parallel"} {
		ours, procs, ok := results.Find("New/" + mode + "/objectid")
		driver, _, ok2 := results.Find("New/" + mode + "/driver")
		if !ok || !ok2 {
			return fmt.Errorf("no BenchmarkNew/%s/objectid or BenchmarkNew/%s/driver in the output", mode, mode)
		}
		res.row(fmt.Sprintf("1. objectid.New, %s (GOMAXPROCS %s)", mode, procs),
			fmt.Sprintf("%.4g ns/op, %g allocs/op", ours["ns/op"], ours["allocs/op"]),
			fmt.Sprintf("bson.NewObjectID %.4g ns/op, %g allocs/op", driver["ns/op"], driver["allocs/op"]),
			fmt.Sprintf("%.2f× (driver ns ÷ ours)", driver["ns/op"]/ours["ns/op"]))
	}
	if fill, _, ok := results.Find("Fill/10000"); ok {
		res.row("1. objectid.Fill, 10,000 ids", fmt.Sprintf("%.4g ns/id", fill["ns/id"]), "—", "—")
	}
	return nil
}

var clientBench = []string{"-bench", "^BenchmarkCachedNextParallel$", "-benchmem", "-count", "5", "./client/"}

// figureClientCache is figure 9: the Go client's local cache in one process.
func figureClientCache(ctx context.Context, b *bench, res *figureResult) error {
	res.note("`go test -run '^$' %s`, median.", proc.ShellJoin(clientBench))
	results, err := b.goBench(ctx, nil, clientBench...)
	if err != nil {
		return err
	}
	r, procs, err := results.Get("CachedNextParallel")
	if err != nil {
		return err
	}
	res.row(fmt.Sprintf("9. Go client's local cache, Next, b.RunParallel (GOMAXPROCS %s)", procs),
		fmt.Sprintf("%s values/s (%.3g ns/op, %g allocs/op)", formatCount(1e9/r["ns/op"]), r["ns/op"], r["allocs/op"]), "—", "—")
	return nil
}
