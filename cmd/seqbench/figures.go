package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/seqd/seqd/internal/gobench"
	"github.com/seqd/seqd/internal/proc"
)

// The loads' shapes. The machine has few cores, so concurrencies beyond a few dozen
// measure the scheduler more than seqd.
const (
	oidClients   = 32   // figure 2, both servers
	latencyCalls = 2000 // figure 6, each side
	leafIDsPerS  = 50_000
	leafAnchor   = "Leaf ≈ 50,000/s per node (published; 4 cores)" // Meituan's: quoted for scale
)

// A figure is one numbered item of the report; its number is its place in figures.
type figure struct {
	title string
	run   func(ctx context.Context, b *bench, res *figureResult) error
}

var figures = []figure{
	{"objectid.New vs the driver's bson.NewObjectID", figureObjectID},
	{"GET /oid requests/s vs a bare Echo handler", figureOID},
	{"GET /oid?count=1000 ObjectIds/s", figureBatch(3, "GET /oid?count=1000 ids/s", 4, "-target", "oid")},
	{"/seq/{name}/next: coalescing vs one findOneAndUpdate per request", figureCoalescing},
	{"/seq/{name}/next?count=1000 values/s", figureBatch(5, "/seq/{name}/next?count=1000 values/s", 16, "-target", "seq", "-name", "fig5", "-expect-contiguous")},
	{"c = 1 latency of /seq/{name}/next vs a raw driver round trip", figureLatency},
	{"optimistic strategy: values/s, retries, contention", figureOptimistic},
	{"cached /seq/{name}/next vs GET /oid and one findOneAndUpdate per request", figureCached},
	{"the Go client's local cache in one process", figureClientCache},
	{"the Go client's local cache in several processes: no value twice", figureClientProcesses},
	{"GET /seq pages among 100,000 sequences vs the driver's find; a walk through next", figureList},
	{"uuidv7.New vs google/uuid NewV7; GET /uuid vs GET /oid", figureUUID},
	{"strict /seq/{name}/next with 10,000 documents in counters vs a few", figureDocuments},
	{"snowflake.New vs bwmarrin/snowflake and sonyflake; GET /snowflake vs GET /oid", figureSnowflake},
}

// figureResult is what a figure found: its table rows, and notes that explain them,
// with the commands other than seqload that measured them (the runs table has
// seqload's).
type figureResult struct {
	id    int
	rows  [][4]string // figure, seqd, anchor, ratio
	notes []string
}

func (r *figureResult) row(figure, seqd, anchor, ratio string) {
	r.rows = append(r.rows, [4]string{figure, seqd, anchor, ratio})
}

func (r *figureResult) note(format string, args ...any) {
	r.notes = append(r.notes, fmt.Sprintf(format, args...))
}

// runFigures sets up and runs the chosen figures. A figure that fails is reported as
// such and the others still run; the error joins every failure.
func (b *bench) runFigures(ctx context.Context) ([]figureResult, error) {
	if err := b.setup(ctx); err != nil {
		return nil, err
	}
	var results []figureResult
	var errs []error
	for i, f := range figures {
		id := i + 1
		if !b.cfg.only[id] {
			continue
		}
		b.logf("figure %d: %s", id, f.title)
		res := figureResult{id: id}
		if err := f.run(ctx, b, &res); err != nil {
			errs = append(errs, fmt.Errorf("figure %d: %w", id, err))
			res.row(fmt.Sprintf("%d. %s", id, f.title), "error: "+clip(err.Error(), 300), "", "")
		}
		results = append(results, res)
		if ctx.Err() != nil { // interrupted: the figure's error says so
			break
		}
	}
	return results, errors.Join(errs...)
}

// failures is a run's failed checks, for a message.
func failures(r loadRun) string { return clip(strings.Join(r.Failures, "; "), 300) }

// verified says whether a run's values passed seqload's checks: no duplicate, in order,
// and for a sequence, no gap.
func verified(r loadRun) string {
	if r.Passed && r.Duplicates == 0 && r.Missing() == 0 {
		return fmt.Sprintf("verified: %s distinct values", formatCount(float64(r.Distinct)))
	}
	return fmt.Sprintf("NOT verified: %d duplicates, %d missing, %d failed", r.Duplicates, r.Missing(), r.Failed)
}

func figureOID(ctx context.Context, b *bench, res *figureResult) error {
	// ABBA: seqd, bare, bare, seqd, so that a drift in the machine's speed hits both alike.
	var runs [4]loadRun
	for i, srv := range []*server{b.seqd, b.bare, b.bare, b.seqd} {
		var err error
		if runs[i], err = b.load(ctx, 2, srv, "-target", "oid", "-c", strconv.Itoa(oidClients), "-d", b.cfg.duration.String()); err != nil {
			return err
		}
	}
	ours, theirs := [2]loadRun{runs[0], runs[3]}, [2]loadRun{runs[1], runs[2]}
	if !ours[0].Passed || !ours[1].Passed {
		return fmt.Errorf("seqd's ids failed seqload's checks: %s %s", failures(ours[0]), failures(ours[1]))
	}
	describe := func(r [2]loadRun) string {
		return fmt.Sprintf("%s req/s (p50 %s, p99 %s; %s server CPU/req)", formatCount((r[0].RequestsPerS+r[1].RequestsPerS)/2),
			formatMs(r[0].LatencyP50Ms), formatMs(r[0].LatencyP99Ms), formatMicros((r[0].serverCPUPerRequest()+r[1].serverCPUPerRequest())/2))
	}
	anchor := "bare Echo " + describe(theirs)
	if !theirs[0].Passed { // the driver's 24-bit counter starts at random and wraps within a second
		anchor += fmt.Sprintf("; its ids fail seqload's checks: %d order violations, %d duplicates", theirs[0].OrderErrors, theirs[0].Duplicates)
	}
	res.row(fmt.Sprintf("2. GET /oid requests/s, c = %d (means of the runs seqd, bare, bare, seqd)", oidClients), describe(ours), anchor,
		fmt.Sprintf("%.3f×", (ours[0].RequestsPerS+ours[1].RequestsPerS)/(theirs[0].RequestsPerS+theirs[1].RequestsPerS)))
	return nil
}

// figureBatch is figures 3 and 5: batches of 1000 from seqd, next to Leaf's rate.
func figureBatch(figure int, what string, clients int, args ...string) func(context.Context, *bench, *figureResult) error {
	return func(ctx context.Context, b *bench, res *figureResult) error {
		c := strconv.Itoa(clients)
		r, err := b.load(ctx, figure, b.seqd, append(args, "-count", "1000", "-c", c, "-d", b.cfg.duration.String())...)
		if err != nil {
			return err
		}
		res.row(fmt.Sprintf("%d. %s, c = %s", figure, what, c),
			fmt.Sprintf("%s values/s (%s req/s), %s", formatCount(r.ValuesPerS), formatCount(r.RequestsPerS), verified(r)),
			leafAnchor, fmt.Sprintf("%.0f× Leaf", r.ValuesPerS/leafIDsPerS))
		if !r.Passed {
			return fmt.Errorf("seqload checks failed: %s", failures(r))
		}
		return nil
	}
}

func figureCoalescing(ctx context.Context, b *bench, res *figureResult) error {
	res.note("Writes and callers per write: the run's increase of seqd_coalesced_batch_callers_count and _sum on seqd's /metrics.")
	for _, c := range []int{1, 16, 64, 256} {
		args := []string{"-target", "seq", "-c", strconv.Itoa(c), "-d", b.cfg.duration.String()}
		with, err := b.load(ctx, 4, b.seqd, append(args, "-name", fmt.Sprintf("fig4-c%d", c), "-expect-contiguous")...)
		if err != nil {
			return err
		}
		without, err := b.load(ctx, 4, b.off, append(args, "-name", fmt.Sprintf("fig4-nocoalesce-c%d", c))...)
		if err != nil {
			return err
		}
		res.row(fmt.Sprintf("4. /seq/{name}/next values/s, c = %d", c),
			fmt.Sprintf("%s values/s (%s writes/s × %.1f callers), %s", formatCount(with.ValuesPerS),
				formatCount(with.counted.writes/with.ElapsedS), with.counted.callers/max(with.counted.writes, 1), verified(with)),
			fmt.Sprintf("no coalescing %s values/s (%s writes/s), %d duplicates, %d failed",
				formatCount(without.ValuesPerS), formatCount(without.counted.writes/without.ElapsedS), without.Duplicates, without.Failed),
			fmt.Sprintf("%.1f×", with.ValuesPerS/without.ValuesPerS))
		if !with.Passed {
			return fmt.Errorf("c = %d: the coalescing run failed verification: %s", c, failures(with))
		}
	}
	return nil
}

func figureLatency(ctx context.Context, b *bench, res *figureResult) error {
	// The driver's calls, half before the seqload runs and half after, so that a machine
	// that gets busier or quieter meanwhile moves both sides.
	driverArgs := []string{"-bench", "^BenchmarkDriverRoundTrip$", "-benchtime", strconv.Itoa(latencyCalls/2) + "x", "./counters/"}
	var driver [2]gobench.Results           // before, after
	driverRoundTrips := func(i int) error { // against the dev store
		var err error
		driver[i], err = b.goBench(ctx, []string{"MONGODB_URI=" + b.store.URI()}, driverArgs...)
		return err
	}
	if err := driverRoundTrips(0); err != nil {
		return err
	}
	n := strconv.Itoa(latencyCalls)
	with, err := b.load(ctx, 6, b.seqd, "-target", "seq", "-name", "fig6", "-expect-contiguous", "-c", "1", "-n", n)
	if err != nil {
		return err
	}
	without, err := b.load(ctx, 6, b.off, "-target", "seq", "-name", "fig6-nocoalesce", "-c", "1", "-n", n)
	if err != nil {
		return err
	}
	floor, err := b.load(ctx, 6, b.seqd, "-target", "oid", "-c", "1", "-n", n) // the HTTP floor
	if err != nil {
		return err
	}
	if err := driverRoundTrips(1); err != nil {
		return err
	}
	// The round trips' p50 and p99 in ms, by run (before, after) and filter.
	var p50s, p99s [2]map[string]float64
	for i, r := range driver {
		p50s[i], p99s[i] = map[string]float64{}, map[string]float64{}
		for _, filter := range []string{"seqd", "plain", "id"} {
			m, _, err := r.Get("DriverRoundTrip/" + filter)
			if err != nil {
				return err
			}
			p50s[i][filter], p99s[i][filter] = m["p50-ns"]/1e6, m["p99-ns"]/1e6
		}
	}
	mean := func(runs [2]map[string]float64, filter string) float64 {
		return (runs[0][filter] + runs[1][filter]) / 2
	}
	p50, p99, plain50, id50 := mean(p50s, "seqd"), mean(p99s, "seqd"), mean(p50s, "plain"), mean(p50s, "id")
	anchor, idAnchor := floor.LatencyP50Ms+p50, floor.LatencyP50Ms+id50
	res.row("6. /seq/{name}/next latency, c = 1, against seqd's own filter",
		fmt.Sprintf("p50 %s, p99 %s", formatMs(with.LatencyP50Ms), formatMs(with.LatencyP99Ms)),
		fmt.Sprintf("GET /oid p50 %s + driver findOneAndUpdate with seqd's filter p50 %s = %s (driver p99 %s)",
			formatMs(floor.LatencyP50Ms), formatMs(p50), formatMs(anchor), formatMs(p99)),
		fmt.Sprintf("%.3f× p50", with.LatencyP50Ms/anchor))
	res.row("6. … against a write by {_id}",
		fmt.Sprintf("p50 %s", formatMs(with.LatencyP50Ms)),
		fmt.Sprintf("GET /oid p50 %s + driver findOneAndUpdate {_id} $inc p50 %s = %s",
			formatMs(floor.LatencyP50Ms), formatMs(id50), formatMs(idAnchor)),
		fmt.Sprintf("%.3f× p50", with.LatencyP50Ms/idAnchor))
	res.note("The driver's round trips are `MONGODB_URI=STORE go test -run '^$' %s`, run before the seqload runs and after, p50 and p99 the means of the two: "+
		"with seqd's filter (the one every Counter write carries, counterFilter) p50 %s then %s, with a plain {_id, seq: {$lte}} filter p50 %s then %s, with {_id} alone p50 %s then %s, "+
		"so on this store seqd's filter costs %s a write, and against GET /oid + the plain write (%s) seqd's p50 is %.3f×. "+
		"Without coalescing (one findOneAndUpdate per request, on the request's goroutine, where a lone caller's coalesced write runs too) seqd's c = 1 latency is p50 %s, p99 %s (%.3f× the anchor).",
		proc.ShellJoin(driverArgs), formatMs(p50s[0]["seqd"]), formatMs(p50s[1]["seqd"]),
		formatMs(p50s[0]["plain"]), formatMs(p50s[1]["plain"]), formatMs(p50s[0]["id"]), formatMs(p50s[1]["id"]), formatMs(p50-plain50),
		formatMs(floor.LatencyP50Ms+plain50), with.LatencyP50Ms/(floor.LatencyP50Ms+plain50),
		formatMs(without.LatencyP50Ms), formatMs(without.LatencyP99Ms), without.LatencyP50Ms/anchor)
	return nil
}

func figureOptimistic(ctx context.Context, b *bench, res *figureResult) error {
	res.note(`Retries: the run's increase of seqd_duplicate_key_retries_total{strategy="optimistic"} on seqd's /metrics.`)
	for _, c := range []int{1, 16, 64} {
		r, err := b.load(ctx, 7, b.seqd, "-target", "seq", "-strategy", "optimistic", "-name", fmt.Sprintf("fig7-c%d", c),
			"-c", strconv.Itoa(c), "-d", b.cfg.duration.String())
		if err != nil {
			return err
		}
		cell := fmt.Sprintf("%s values/s; %.2f retries/value (%.0f retries); %d contention 503s", formatCount(r.ValuesPerS),
			r.counted.retries/float64(max(r.Values, 1)), r.counted.retries, r.Errors["503"])
		if other := r.Failed - r.Errors["503"]; other > 0 {
			cell += fmt.Sprintf("; %d other failures %v", other, r.Errors)
		}
		if !r.Passed {
			cell += "; seqload checks FAILED: " + failures(r)
		}
		res.row(fmt.Sprintf("7. optimistic strategy, c = %d", c), cell, "—", "—")
	}
	return nil
}
