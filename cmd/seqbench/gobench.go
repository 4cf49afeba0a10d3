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

// objectIDBench is one round of figure 1, run objectIDRounds times (benchRounds).
var objectIDBench = []string{"-bench", "^Benchmark(New|Fill)$", "-benchmem", "-count", "1", "./objectid/"}

const objectIDRounds = 5

func figureObjectID(ctx context.Context, b *bench, res *figureResult) error {
	res.note("%d rounds of `go test -run '^$' %s`; each figure is the median of the rounds, and each ratio the median of the rounds' ratios.",
		objectIDRounds, proc.ShellJoin(objectIDBench))
	rounds, err := b.goBenchRounds(ctx, objectIDRounds, objectIDBench...)
	if err != nil {
		return err
	}
	for _, mode := range []string{"serial", "parallel"} {
		ours, err := rounds.side("New/"+mode+"/objectid", "New/"+mode+"/driver")
		if err != nil {
			return err
		}
		res.row(fmt.Sprintf("1. objectid.New, %s (GOMAXPROCS %s)", mode, ours.procs),
			fmt.Sprintf("%.4g ns/op, %g allocs/op", ours.ns, ours.allocs),
			fmt.Sprintf("bson.NewObjectID %.4g ns/op", ours.rivals[0].ns),
			fmt.Sprintf("%.2f× (driver ns ÷ ours, median of the rounds)", ours.rivals[0].ratio))
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

// benchRounds are the results of one go test command run several times: -count
// would run each benchmark's repetitions back to back, where rounds put ours and
// its rivals side by side every time. This VM's parallel runs switch between two
// speeds every few seconds, and a switch between the two sides would move one of
// them only.
type benchRounds []gobench.Results

// goBenchRounds runs go test benchmarks n times (goBench).
func (b *bench) goBenchRounds(ctx context.Context, n int, args ...string) (benchRounds, error) {
	rounds := make(benchRounds, n)
	for i := range rounds {
		var err error
		if rounds[i], err = b.goBench(ctx, nil, args...); err != nil {
			return nil, err
		}
	}
	return rounds, nil
}

// sideBySide is a benchmark's medians over the rounds, and each rival's.
type sideBySide struct {
	ns, allocs float64
	procs      string // GOMAXPROCS, from the benchmark's name
	rivals     []rival
}

// rival is a rival benchmark's median ns/op and allocs/op over the rounds, and
// the median of the rounds' ratios of its ns/op to ours: above 1, ours is faster.
type rival struct{ ns, allocs, ratio float64 }

// side is the benchmark named ours beside the ones named rivals, over the rounds.
func (rs benchRounds) side(ours string, rivals ...string) (sideBySide, error) {
	var s sideBySide
	var ns, allocs []float64
	theirs := make([][3][]float64, len(rivals)) // ns, allocs, ratios
	for _, r := range rs {
		o, procs, err := r.Get(ours)
		if err != nil {
			return s, err
		}
		s.procs = procs
		ns, allocs = append(ns, o["ns/op"]), append(allocs, o["allocs/op"])
		for i, name := range rivals {
			t, _, err := r.Get(name)
			if err != nil {
				return s, err
			}
			theirs[i][0] = append(theirs[i][0], t["ns/op"])
			theirs[i][1] = append(theirs[i][1], t["allocs/op"])
			theirs[i][2] = append(theirs[i][2], t["ns/op"]/o["ns/op"])
		}
	}
	s.ns, s.allocs = median(ns), median(allocs)
	for _, t := range theirs {
		s.rivals = append(s.rivals, rival{ns: median(t[0]), allocs: median(t[1]), ratio: median(t[2])})
	}
	return s, nil
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
