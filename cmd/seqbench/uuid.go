package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/seqd/seqd/internal/proc"
)

var uuidBench = []string{"-bench", "^Benchmark(New|GoogleNewV7)$", "-benchmem", "-count", "5", "./uuidv7/"}

// figureUUID is the UUIDv7 figure: uuidv7.New against google/uuid's NewV7, serial and
// parallel (go test, medians), then GET /uuid against GET /oid on the same seqd, c = 32,
// ABBA as figure 2, every id of both checked by seqload (none twice, each client's
// increasing).
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

	var runs [4]loadRun
	for i, target := range []string{"uuid", "oid", "oid", "uuid"} {
		if runs[i], err = b.load(ctx, res.id, b.seqd, "-target", target, "-c", strconv.Itoa(oidClients), "-d", b.cfg.duration.String()); err != nil {
			return err
		}
	}
	uuid, oid := [2]loadRun{runs[0], runs[3]}, [2]loadRun{runs[1], runs[2]}
	mean := func(r [2]loadRun) float64 { return (r[0].RequestsPerS + r[1].RequestsPerS) / 2 }
	cpu := func(r [2]loadRun) string {
		return formatMicros((r[0].serverCPUPerRequest() + r[1].serverCPUPerRequest()) / 2)
	}
	res.row(fmt.Sprintf("%d. GET /uuid requests/s, c = %d (means of the runs uuid, oid, oid, uuid)", res.id, oidClients),
		fmt.Sprintf("%s req/s (p50 %s, p99 %s; %s server CPU/req), %s", formatCount(mean(uuid)),
			formatMs(uuid[0].LatencyP50Ms), formatMs(uuid[0].LatencyP99Ms), cpu(uuid), verified(uuid[0])),
		fmt.Sprintf("GET /oid, same seqd: %s req/s (%s server CPU/req)", formatCount(mean(oid)), cpu(oid)),
		fmt.Sprintf("%.3f× /oid", mean(uuid)/mean(oid)))
	for _, r := range runs {
		if !r.Passed {
			return fmt.Errorf("seqload's checks failed: %s", failures(r))
		}
	}
	return nil
}
