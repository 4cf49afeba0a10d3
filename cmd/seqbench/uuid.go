package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/seqd/seqd/internal/proc"
)

var uuidBench = []string{"-bench", "^Benchmark(New|GoogleNewV7)$", "-benchmem", "-count", "5", "./uuidv7/"}

// figureUUID is the UUIDv7 figure: uuidv7.New against google/uuid's NewV7, serial and
// parallel (go test, medians), then GET /uuid against GET /oid (versusOID).
func figureUUID(ctx context.Context, b *bench, res *figureResult) error {
	res.note("`go test -run '^$' %s`, medians (golang.org/x/perf/benchmath, as benchstat).", proc.ShellJoin(uuidBench))
	results, err := b.goBench(ctx, nil, uuidBench...)
	if err != nil {
		return err
	}
	for _, mode := range []string{"serial", "parallel"} {
		ours, procs, ok := results.Find("New/" + mode)
		google, _, ok2 := results.Find("GoogleNewV7/" + mode)
		if !ok || !ok2 {
			return fmt.Errorf("no BenchmarkNew/%s or BenchmarkGoogleNewV7/%s in the output", mode, mode)
		}
		res.row(fmt.Sprintf("%d. uuidv7.New, %s (GOMAXPROCS %s)", res.id, mode, procs),
			fmt.Sprintf("%.4g ns/op, %g allocs/op", ours["ns/op"], ours["allocs/op"]),
			fmt.Sprintf("google/uuid NewV7 %.4g ns/op, %g allocs/op", google["ns/op"], google["allocs/op"]),
			fmt.Sprintf("%.2f× (google ns ÷ ours)", google["ns/op"]/ours["ns/op"]))
	}

	return versusOID(ctx, b, res, "uuid")
}

// versusOID is GET /{target} against GET /oid on the same seqd, c = 32, ABBA as
// figure 2, every id of both checked by seqload (none twice, each client's
// increasing).
func versusOID(ctx context.Context, b *bench, res *figureResult, target string) error {
	var runs [4]loadRun
	for i, t := range []string{target, "oid", "oid", target} {
		var err error
		if runs[i], err = b.load(ctx, res.id, b.seqd, "-target", t, "-c", strconv.Itoa(oidClients), "-d", b.cfg.duration.String()); err != nil {
			return err
		}
	}
	ours, oid := [2]loadRun{runs[0], runs[3]}, [2]loadRun{runs[1], runs[2]}
	mean := func(r [2]loadRun) float64 { return (r[0].RequestsPerS + r[1].RequestsPerS) / 2 }
	cpu := func(r [2]loadRun) string {
		return formatMicros((r[0].serverCPUPerRequest() + r[1].serverCPUPerRequest()) / 2)
	}
	res.row(fmt.Sprintf("%d. GET /%s requests/s, c = %d (means of the runs %s, oid, oid, %s)", res.id, target, oidClients, target, target),
		fmt.Sprintf("%s req/s (p50 %s, p99 %s; %s server CPU/req), %s", formatCount(mean(ours)),
			formatMs(ours[0].LatencyP50Ms), formatMs(ours[0].LatencyP99Ms), cpu(ours), verified(ours[0])),
		fmt.Sprintf("GET /oid, same seqd: %s req/s (%s server CPU/req)", formatCount(mean(oid)), cpu(oid)),
		fmt.Sprintf("%.3f× /oid", mean(ours)/mean(oid)))
	for _, r := range runs {
		if !r.Passed {
			return fmt.Errorf("seqload's checks failed: %s", failures(r))
		}
	}
	return nil
}
