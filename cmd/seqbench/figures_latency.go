package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"
)

func figureLatency(ctx context.Context, b *bench) (figureResult, error) {
	var res figureResult
	on, err := b.server(ctx, seqdCoalescing)
	if err != nil {
		return res, err
	}
	off, err := b.server(ctx, seqdNoCoalescing)
	if err != nil {
		return res, err
	}
	// Driver, seqd, driver: half of the driver's calls before the HTTP runs and half
	// after, so that a machine that gets busier or quieter meanwhile moves both sides.
	driverCalls := func() ([]time.Duration, error) {
		b.logf("fig 6: %d driver findOneAndUpdate round trips in-process", latencyCalls/2)
		lat, err := driverRoundTrips(ctx, b.storeURI, latencyWarmup, latencyCalls/2)
		if err != nil {
			return nil, fmt.Errorf("driver round trip: %w", err)
		}
		return lat, nil
	}
	before, err := driverCalls()
	if err != nil {
		return res, err
	}
	args := []string{"-target", "seq", "-name", "fig6", "-expect-contiguous", "-c", "1", "-n", strconv.Itoa(latencyCalls)}
	with, err := b.load(ctx, 6, on, args...)
	if err != nil {
		return res, err
	}
	offArgs := []string{"-target", "seq", "-name", "fig6-nocoalesce", "-c", "1", "-n", strconv.Itoa(latencyCalls)}
	without, err := b.load(ctx, 6, off, offArgs...)
	if err != nil {
		return res, err
	}
	// The HTTP floor: the same client and server, for a request with no backend work.
	floorArgs := []string{"-target", "oid", "-c", "1", "-n", strconv.Itoa(latencyCalls)}
	floor, err := b.load(ctx, 6, on, floorArgs...)
	if err != nil {
		return res, err
	}
	after, err := driverCalls()
	if err != nil {
		return res, err
	}
	lat := append(before, after...)
	slices.Sort(lat)
	driverP50, driverP99 := millis(percentile(lat, 50)), millis(percentile(lat, 99))
	b.logf("  → driver p50 %.3f ms, p99 %.3f ms (before the HTTP runs: p50 %.3f ms; after: %.3f ms)",
		driverP50, driverP99, millis(percentile(before, 50)), millis(percentile(after, 50)))
	for _, p := range []struct {
		name         string
		seqd, driver float64
	}{{"p50", with.LatencyP50Ms, driverP50}, {"p99", with.LatencyP99Ms, driverP99}} {
		ratio := p.seqd / p.driver
		res.rows = append(res.rows, row{
			figure: "6. /seq/{name}/next latency " + p.name + ", c = 1",
			seqd:   formatMs(p.seqd),
			anchor: "driver findOneAndUpdate " + formatMs(p.driver),
			ratio:  formatRatio(ratio, targetLatencyRatio, false),
			target: fmt.Sprintf("≤ %.1f×", targetLatencyRatio),
			met:    yesNo(ratio <= targetLatencyRatio),
		})
	}
	res.commands = append(res.commands,
		fmt.Sprintf("in-process: %d × coll.FindOneAndUpdate({_id, seq: {$lte: MaxInt64-1}}, {$inc: {seq: 1}}, upsert, returnDocument after) on %s.counters, write concern majority, each after %d untimed   # before the seqload runs, and again after", latencyCalls/2, driverDB, latencyWarmup),
		"seqload -addr SEQD "+shellJoin(args),
		"seqload -addr SEQD_NO_COALESCE "+shellJoin(offArgs),
		"seqload -addr SEQD "+shellJoin(floorArgs)+"   # the HTTP floor")
	res.notes = append(res.notes, fmt.Sprintf(
		"The driver's %d calls are split: p50 %s in the %d before the seqload runs, %s in the %d after; a spread between them is the machine's noise.",
		len(lat), formatMs(millis(percentile(before, 50))), len(before), formatMs(millis(percentile(after, 50))), len(after)))
	res.notes = append(res.notes, fmt.Sprintf(
		"The HTTP floor, GET /oid at c = 1 from the same client to the same seqd, is p50 %s: the driver's p50 plus the floor is %s (%.2f× the driver's alone), so %s of seqd's p50 is neither HTTP nor the backend.",
		formatMs(floor.LatencyP50Ms), formatMs(driverP50+floor.LatencyP50Ms), (driverP50+floor.LatencyP50Ms)/driverP50,
		formatMs(with.LatencyP50Ms-driverP50-floor.LatencyP50Ms)))
	res.notes = append(res.notes, fmt.Sprintf(
		"seqd's latency is seqload's: the HTTP round trip as a client sees it. Without coalescing (one findOneAndUpdate per request) seqd's c = 1 latency is p50 %s, p99 %s (%.2f× and %.2f× the driver's): the difference between the two seqd rows is the coalescer's hand-off.",
		formatMs(without.LatencyP50Ms), formatMs(without.LatencyP99Ms), without.LatencyP50Ms/driverP50, without.LatencyP99Ms/driverP99))
	return res, nil
}
