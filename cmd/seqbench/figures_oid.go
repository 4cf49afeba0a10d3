package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

func figureObjectID(ctx context.Context, b *bench) (figureResult, error) {
	res := figureResult{commands: []string{"go " + shellJoin(objectIDBenchArgs)}}
	b.logf("fig 1: go %s", shellJoin(objectIDBenchArgs))
	results, err := b.goBench(ctx, objectIDBenchArgs)
	if err != nil {
		return res, err
	}
	for _, mode := range []string{"serial", "parallel"} {
		ours, ok1 := results["BenchmarkNew/"+mode]
		driver, ok2 := results["BenchmarkDriverNewObjectID/"+mode]
		if !ok1 || !ok2 {
			return res, fmt.Errorf("no BenchmarkNew/%s or BenchmarkDriverNewObjectID/%s in the output", mode, mode)
		}
		res.rows = append(res.rows, row{
			figure: fmt.Sprintf("1. objectid.New, %s (GOMAXPROCS %d)", mode, ours.Procs),
			seqd:   fmt.Sprintf("%.1f ns/op, %s allocs/op", ours.NsPerOp, formatAllocs(ours)),
			anchor: fmt.Sprintf("bson.NewObjectID %.1f ns/op, %s allocs/op", driver.NsPerOp, formatAllocs(driver)),
			ratio:  fmt.Sprintf("%.2f× (driver ns ÷ ours)", driver.NsPerOp/ours.NsPerOp),
			target: "—", met: "—",
		})
	}
	if fill, ok := results["BenchmarkFill/10000"]; ok {
		res.notes = append(res.notes, fmt.Sprintf("objectid.Fill of 10000 ids: %.2f ns/id.", fill.Metrics["ns/id"]))
	}
	return res, nil
}

func formatAllocs(r benchResult) string {
	if v, ok := r.Metrics["allocs/op"]; ok {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return "?"
}

func figureOID(ctx context.Context, b *bench) (figureResult, error) {
	var res figureResult
	seqd, err := b.server(ctx, seqdCoalescing)
	if err != nil {
		return res, err
	}
	bare, err := b.server(ctx, bareEcho)
	if err != nil {
		return res, err
	}
	// ABBA: seqd, bare, bare, seqd, so that a drift in the machine's speed hits both alike.
	args := []string{"-target", "oid", "-c", strconv.Itoa(oidClients), "-d", b.cfg.duration.String()}
	var ours, theirs []loadRun
	for _, srv := range []*server{seqd, bare, bare, seqd} {
		run, err := b.measure(ctx, 2, srv, args...)
		if err != nil {
			return res, err
		}
		// seqd's ids must pass seqload's checks. The driver's may not: its 24-bit
		// counter starts at a random value and wraps within the second, so a client can
		// see an id below the one before it. That is the anchor's property, recorded.
		if s := run.summary; !s.Passed && srv == seqd {
			return res, fmt.Errorf("%s: seqload checks failed: %s", srv.name, strings.Join(s.Failures, "; "))
		}
		if srv == seqd {
			ours = append(ours, run)
		} else {
			theirs = append(theirs, run)
		}
	}
	o, t := meanRPS(ours), meanRPS(theirs)
	ratio := o / t
	var anchorChecks string
	for _, r := range theirs {
		if s := r.summary; !s.Passed {
			anchorChecks += fmt.Sprintf("; %d order violations, %d duplicates", s.OrderErrors, s.Duplicates)
			res.notes = append(res.notes, "The bare handler's ids failed seqload's checks: "+clip(strings.Join(s.Failures, "; "), 300)+
				". bson.NewObjectID's 24-bit counter starts at a random value and wraps within a second, so ids from one process stop increasing (and past 2^24 ids in a second, repeat); objectid.New carries into the timestamp instead.")
		}
	}
	res.rows = append(res.rows, row{
		figure: fmt.Sprintf("2. GET /oid requests/s, c = %d", oidClients),
		seqd: fmt.Sprintf("%s req/s (p50 %s, p99 %s; %s server CPU/req)", formatCount(o),
			formatMs(ours[0].summary.LatencyP50Ms), formatMs(ours[0].summary.LatencyP99Ms), formatMicros(meanCPUPerRequest(ours))),
		anchor: fmt.Sprintf("bare Echo %s req/s (p50 %s, p99 %s; %s server CPU/req%s)", formatCount(t),
			formatMs(theirs[0].summary.LatencyP50Ms), formatMs(theirs[0].summary.LatencyP99Ms), formatMicros(meanCPUPerRequest(theirs)), anchorChecks),
		ratio:  formatRatio(ratio, targetOIDRatio, true),
		target: fmt.Sprintf("≥ %.1f×", targetOIDRatio),
		met:    yesNo(ratio >= targetOIDRatio),
	})
	res.commands = append(res.commands, "seqload -addr SEQD "+shellJoin(args)+"   # twice, seqd first and last",
		"seqload -addr BARE "+shellJoin(args)+"   # twice, in between")
	res.notes = append(res.notes, fmt.Sprintf("Means of two %s runs per server, in the order seqd, bare, bare, seqd (seqd %s and %s req/s; bare %s and %s req/s). Server CPU/req is the server process's CPU time over the requests it answered; on a busy machine it moves less than requests/s.",
		b.cfg.duration, formatCount(ours[0].summary.RequestsPerS), formatCount(ours[1].summary.RequestsPerS),
		formatCount(theirs[0].summary.RequestsPerS), formatCount(theirs[1].summary.RequestsPerS)))
	return res, nil
}

func meanRPS(runs []loadRun) float64 {
	var sum float64
	for _, r := range runs {
		sum += r.summary.RequestsPerS
	}
	return sum / float64(len(runs))
}

func meanCPUPerRequest(runs []loadRun) time.Duration {
	var sum time.Duration
	for _, r := range runs {
		sum += r.serverCPUPerRequest()
	}
	return sum / time.Duration(len(runs))
}

func figureOIDBatch(ctx context.Context, b *bench) (figureResult, error) {
	var res figureResult
	seqd, err := b.server(ctx, seqdCoalescing)
	if err != nil {
		return res, err
	}
	args := []string{"-target", "oid", "-count", strconv.Itoa(oidBatch), "-c", strconv.Itoa(oidBatchClients), "-d", b.cfg.duration.String()}
	s, err := b.load(ctx, 3, seqd, args...)
	if err != nil {
		return res, err
	}
	if !s.Passed {
		return res, fmt.Errorf("seqload checks failed: %s", strings.Join(s.Failures, "; "))
	}
	res.rows = append(res.rows, row{
		figure: fmt.Sprintf("3. GET /oid?count=%d ids/s, c = %d", oidBatch, oidBatchClients),
		seqd:   fmt.Sprintf("%s ids/s (%s req/s)", formatCount(s.ValuesPerS), formatCount(s.RequestsPerS)),
		anchor: leafAnchor,
		ratio:  fmt.Sprintf("%.0f× Leaf", s.ValuesPerS/leafIDsPerS),
		target: "≥ " + formatCount(targetOIDBatchPerS) + " ids/s",
		met:    yesNoBy(s.ValuesPerS, targetOIDBatchPerS),
	})
	res.commands = append(res.commands, "seqload -addr SEQD "+shellJoin(args))
	res.notes = append(res.notes, "Every id received is parsed and checked for uniqueness and order by seqload, in the same 2 CPUs: see the CPU seconds in the runs table for who is the bottleneck.")
	return res, nil
}
