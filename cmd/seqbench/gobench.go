package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/seqd/seqd/internal/gobench"
	"github.com/seqd/seqd/internal/proc"
	"github.com/seqd/seqd/internal/stats"
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
	for _, mode := range []string{"serial", "parallel"} {
		var ours, driver, ratios, allocs []float64
		procs := ""
		for _, r := range rounds {
			o, p, err := r.Get("New/" + mode + "/objectid")
			if err != nil {
				return err
			}
			d, _, err := r.Get("New/" + mode + "/driver")
			if err != nil {
				return err
			}
			procs = p
			ours, driver, allocs = append(ours, o["ns/op"]), append(driver, d["ns/op"]), append(allocs, o["allocs/op"])
			ratios = append(ratios, d["ns/op"]/o["ns/op"])
		}
		res.row(fmt.Sprintf("1. objectid.New, %s (GOMAXPROCS %s)", mode, procs),
			fmt.Sprintf("%.4g ns/op, %g allocs/op", median(ours), median(allocs)),
			fmt.Sprintf("bson.NewObjectID %.4g ns/op", median(driver)),
			fmt.Sprintf("%.2f× (driver ns ÷ ours, median of the rounds)", median(ratios)))
	}
	var fill []float64
	for _, r := range rounds {
		if f, _, ok := r.Find("Fill/10000"); ok {
			fill = append(fill, f["ns/id"])
		}
	}
	if len(fill) > 0 {
		res.row("1. objectid.Fill, 10,000 ids", fmt.Sprintf("%.4g ns/id", median(fill)), "—", "—")
	}
	return nil
}

// median is the nearest-rank median of xs, which it sorts.
func median(xs []float64) float64 {
	slices.Sort(xs)
	return stats.Percentile(xs, 50)
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
