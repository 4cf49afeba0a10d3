package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/seqd/seqd/internal/gobench"
	"github.com/seqd/seqd/internal/proc"
)

// goBench runs go test benchmarks (package gobench), saying so in the log.
func (b *bench) goBench(ctx context.Context, env []string, args ...string) (gobench.Results, error) {
	b.logf("  %s go test -run '^$' %s", strings.Join(env, " "), proc.ShellJoin(args))
	return gobench.Run(ctx, env, args...)
}

// objectIDBench is one round of figure 1, run objectIDRounds times: -count would
// run each benchmark's repetitions back to back, where rounds put New and the
// driver's NewObjectID side by side every time. This VM's parallel runs switch
// between two speeds every few seconds, and a switch between the two sides would
// move one of them only.
var objectIDBench = []string{"-bench", "^Benchmark(New|Fill)$", "-benchmem", "-count", "1", "./objectid/"}

const objectIDRounds = 5

func figureObjectID(ctx context.Context, b *bench, res *figureResult) error {
	res.note("%d rounds of `go test -run '^$' %s`; each figure is the median of the rounds, and each ratio the median of the rounds' ratios.",
		objectIDRounds, proc.ShellJoin(objectIDBench))
	rounds := make([]gobench.Results, objectIDRounds)
	for i := range rounds {
		var err error
		if rounds[i], err = b.goBench(ctx, nil, objectIDBench...); err != nil {
			return err
		}
	}
	// median is the median of name's unit over the rounds, or of f over them.
	median := func(f func(r gobench.Results) (float64, error)) (float64, error) {
		var xs []float64
		for _, r := range rounds {
			x, err := f(r)
			if err != nil {
				return 0, err
			}
			xs = append(xs, x)
		}
		slices.Sort(xs)
		return xs[len(xs)/2], nil
	}
	get := func(name, unit string) func(gobench.Results) (float64, error) {
		return func(r gobench.Results) (float64, error) {
			m, _, err := r.Get(name)
			return m[unit], err
		}
	}
	for _, mode := range []string{"serial", "parallel"} {
		ours, driver := "New/"+mode+"/objectid", "New/"+mode+"/driver"
		_, procs, err := rounds[0].Get(ours)
		if err != nil {
			return err
		}
		oursNs, err := median(get(ours, "ns/op"))
		if err != nil {
			return err
		}
		driverNs, err := median(get(driver, "ns/op"))
		if err != nil {
			return err
		}
		allocs, _ := median(get(ours, "allocs/op"))
		ratio, err := median(func(r gobench.Results) (float64, error) {
			o, err := get(ours, "ns/op")(r)
			if err != nil {
				return 0, err
			}
			d, err := get(driver, "ns/op")(r)
			return d / o, err
		})
		if err != nil {
			return err
		}
		res.row(fmt.Sprintf("1. objectid.New, %s (GOMAXPROCS %s)", mode, procs),
			fmt.Sprintf("%.4g ns/op, %g allocs/op", oursNs, allocs),
			fmt.Sprintf("bson.NewObjectID %.4g ns/op", driverNs),
			fmt.Sprintf("%.2f× (driver ns ÷ ours, median of the rounds)", ratio))
	}
	if fill, err := median(get("Fill/10000", "ns/id")); err == nil {
		res.row("1. objectid.Fill, 10,000 ids", fmt.Sprintf("%.4g ns/id", fill), "—", "—")
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
