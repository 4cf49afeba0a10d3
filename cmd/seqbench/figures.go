package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/seqd/seqd/internal/metrics"
)

// The loads' shapes. The machine has few cores, so concurrencies beyond a few dozen
// measure the scheduler more than seqd.
const (
	oidClients      = 32 // figure 2, both servers
	oidBatchClients = 4  // figure 3: each response is 1000 ids, the load tool's parsing dominates
	seqBatchClients = 16 // figure 5
	latencyCalls    = 2000
	// Meituan Leaf's published rate per node: not measured here, quoted for scale.
	leafIDsPerS = 50_000
	leafAnchor  = "Leaf ≈ 50,000/s per node (published; 4 cores)"
)

var (
	seqConcurrencies        = []int{1, 16, 64, 256} // figure 4
	optimisticConcurrencies = []int{1, 16, 64}      // figure 7
)

// A figure is one numbered item of the report; its number is its place in figures.
type figure struct {
	title string
	run   func(ctx context.Context, b *bench, res *figureResult) error
}

var figures = []figure{
	{"objectid.New vs the driver's bson.NewObjectID", figureObjectID},
	{"GET /oid requests/s vs a bare Echo handler", figureOID},
	{"GET /oid?count=1000 ObjectIds/s", figureOIDBatch},
	{"/seq/{name}/next: coalescing vs one findOneAndUpdate per request", figureCoalescing},
	{"/seq/{name}/next?count=1000 values/s", figureSeqBatch},
	{"c = 1 latency of /seq/{name}/next vs a raw driver round trip", figureLatency},
	{"optimistic strategy: values/s, retries, contention", figureOptimistic},
}

// figureResult is what a figure found: its table rows, the commands other than seqload
// that measured it (the runs table has seqload's), and notes that explain the rows.
type figureResult struct {
	id              int
	title           string
	rows            [][4]string // figure, seqd, anchor, ratio
	commands, notes []string
}

func (r *figureResult) row(figure, seqd, anchor, ratio string) {
	r.rows = append(r.rows, [4]string{figure, seqd, anchor, ratio})
}

func (r *figureResult) note(format string, args ...any) {
	r.notes = append(r.notes, fmt.Sprintf(format, args...))
}

// runFigures sets up and runs the chosen figures. A figure that fails is reported as
// such and the others still run; the error joins every failure.
func (b *bench) runFigures(ctx context.Context) (*report, error) {
	rep := &report{command: b.cfg.command, duration: b.cfg.duration, started: time.Now(), servers: map[string]string{}}
	if err := b.setup(ctx); err != nil {
		return rep, err
	}
	var errs []error
	for i, f := range figures {
		id := i + 1
		if !b.cfg.only[id] {
			continue
		}
		b.logf("figure %d: %s", id, f.title)
		res := figureResult{id: id, title: f.title}
		if err := f.run(ctx, b, &res); err != nil {
			errs = append(errs, fmt.Errorf("figure %d: %w", id, err))
			res.row(fmt.Sprintf("%d. %s", id, f.title), "error: "+clip(err.Error(), 300), "", "")
		}
		rep.figures = append(rep.figures, res)
		if ctx.Err() != nil { // interrupted: the figure's error says so
			break
		}
	}
	rep.runs = b.runs
	for _, s := range b.servers {
		rep.servers[s.name] = s.command
	}
	rep.servers["dev store"] = "devstore -listen 127.0.0.1:0 -dir " + b.store.Dir()
	return rep, errors.Join(errs...)
}

// failures is a run's failed checks, for a message.
func failures(r loadRun) string { return clip(strings.Join(r.Failures, "; "), 300) }

// verified says whether a sequence run handed out a gapless run without duplicates.
func verified(r loadRun) string {
	if r.Passed && r.Duplicates == 0 && r.Sequence.Missing == 0 {
		return fmt.Sprintf("verified: %s values, 0 duplicates, 0 gaps", formatCount(float64(r.Distinct)))
	}
	return fmt.Sprintf("NOT verified: %d duplicates, %d missing, %d failed", r.Duplicates, r.Sequence.Missing, r.Failed)
}

func figureOID(ctx context.Context, b *bench, res *figureResult) error {
	seqd, err := b.server(ctx, seqdCoalescing)
	if err != nil {
		return err
	}
	bare, err := b.server(ctx, bareEcho)
	if err != nil {
		return err
	}
	// ABBA: seqd, bare, bare, seqd, so that a drift in the machine's speed hits both alike.
	var runs [4]loadRun
	for i, srv := range []*server{seqd, bare, bare, seqd} {
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

func figureOIDBatch(ctx context.Context, b *bench, res *figureResult) error {
	seqd, err := b.server(ctx, seqdCoalescing)
	if err != nil {
		return err
	}
	r, err := b.load(ctx, 3, seqd, "-target", "oid", "-count", "1000", "-c", strconv.Itoa(oidBatchClients), "-d", b.cfg.duration.String())
	if err != nil {
		return err
	}
	if !r.Passed {
		return fmt.Errorf("seqload checks failed: %s", failures(r))
	}
	res.row(fmt.Sprintf("3. GET /oid?count=1000 ids/s, c = %d", oidBatchClients),
		fmt.Sprintf("%s ids/s (%s req/s), every id verified", formatCount(r.ValuesPerS), formatCount(r.RequestsPerS)),
		leafAnchor, fmt.Sprintf("%.0f× Leaf", r.ValuesPerS/leafIDsPerS))
	return nil
}

// batchCallers is seqd's histogram of callers served by one counter write.
const batchCallers = "seqd_coalesced_batch_callers"

func figureCoalescing(ctx context.Context, b *bench, res *figureResult) error {
	on, err := b.server(ctx, seqdCoalescing)
	if err != nil {
		return err
	}
	off, err := b.server(ctx, seqdNoCoalescing)
	if err != nil {
		return err
	}
	res.commands = []string{"curl -s SEQD/metrics | grep '^" + batchCallers + "_\\(count\\|sum\\)'   # before and after each run"}
	for _, c := range seqConcurrencies {
		args := []string{"-target", "seq", "-c", strconv.Itoa(c), "-d", b.cfg.duration.String()}
		with, writes, callers, err := b.loadCountingWrites(ctx, on, append(args, "-name", fmt.Sprintf("fig4-c%d", c), "-expect-contiguous"))
		if err != nil {
			return err
		}
		without, writesOff, _, err := b.loadCountingWrites(ctx, off, append(args, "-name", fmt.Sprintf("fig4-nocoalesce-c%d", c)))
		if err != nil {
			return err
		}
		res.row(fmt.Sprintf("4. /seq/{name}/next values/s, c = %d", c),
			fmt.Sprintf("%s values/s (%s writes/s × %.1f callers), %s", formatCount(with.ValuesPerS),
				formatCount(writes/with.ElapsedS), callers/max(writes, 1), verified(with)),
			fmt.Sprintf("no coalescing %s values/s (%s writes/s), %d duplicates (FerretDB), %d failed",
				formatCount(without.ValuesPerS), formatCount(writesOff/without.ElapsedS), without.Duplicates, without.Failed),
			fmt.Sprintf("%.1f×", with.ValuesPerS/without.ValuesPerS))
		if !with.Passed {
			return fmt.Errorf("c = %d: the coalescing run failed verification: %s", c, failures(with))
		}
	}
	return nil
}

// loadCountingWrites is a load on srv, with the counter writes seqd made during it and
// the callers they served: the change of its batchCallers histogram.
func (b *bench) loadCountingWrites(ctx context.Context, srv *server, args []string) (run loadRun, writes, callers float64, err error) {
	scrape := func(sign float64) error {
		f, err := metrics.Scrape(ctx, http.DefaultClient, srv.url)
		count, sum, ok := f.Histogram(batchCallers)
		if err == nil && !ok {
			err = fmt.Errorf("%s: no %s on /metrics", srv.name, batchCallers)
		}
		writes, callers = writes+sign*count, callers+sign*sum
		return err
	}
	if err = scrape(-1); err == nil {
		if run, err = b.load(ctx, 4, srv, args...); err == nil {
			err = scrape(+1)
		}
	}
	return run, writes, callers, err
}

func figureSeqBatch(ctx context.Context, b *bench, res *figureResult) error {
	seqd, err := b.server(ctx, seqdCoalescing)
	if err != nil {
		return err
	}
	r, err := b.load(ctx, 5, seqd, "-target", "seq", "-name", "fig5", "-count", "1000", "-expect-contiguous",
		"-c", strconv.Itoa(seqBatchClients), "-d", b.cfg.duration.String())
	if err != nil {
		return err
	}
	res.row(fmt.Sprintf("5. /seq/{name}/next?count=1000 values/s, c = %d", seqBatchClients),
		fmt.Sprintf("%s values/s (%s req/s), %s", formatCount(r.ValuesPerS), formatCount(r.RequestsPerS), verified(r)),
		leafAnchor, fmt.Sprintf("%.0f× Leaf", r.ValuesPerS/leafIDsPerS))
	if !r.Passed {
		return fmt.Errorf("verification failed: %s", failures(r))
	}
	return nil
}

func figureLatency(ctx context.Context, b *bench, res *figureResult) error {
	on, err := b.server(ctx, seqdCoalescing)
	if err != nil {
		return err
	}
	off, err := b.server(ctx, seqdNoCoalescing)
	if err != nil {
		return err
	}
	// The driver's calls, half before the seqload runs and half after, so that a machine
	// that gets busier or quieter meanwhile moves both sides.
	driverArgs := []string{"-bench", "^BenchmarkDriverRoundTrip$", "-benchtime", strconv.Itoa(latencyCalls/2) + "x", "./cmd/seqbench/"}
	res.commands = []string{"MONGODB_URI=STORE go test -run '^$' " + shellJoin(driverArgs) + "   # before the seqload runs, and again after"}
	before, err := b.driverRoundTrips(ctx, driverArgs)
	if err != nil {
		return err
	}
	n := strconv.Itoa(latencyCalls)
	with, err := b.load(ctx, 6, on, "-target", "seq", "-name", "fig6", "-expect-contiguous", "-c", "1", "-n", n)
	if err != nil {
		return err
	}
	without, err := b.load(ctx, 6, off, "-target", "seq", "-name", "fig6-nocoalesce", "-c", "1", "-n", n)
	if err != nil {
		return err
	}
	floor, err := b.load(ctx, 6, on, "-target", "oid", "-c", "1", "-n", n) // the HTTP floor
	if err != nil {
		return err
	}
	after, err := b.driverRoundTrips(ctx, driverArgs)
	if err != nil {
		return err
	}
	driver := [2]map[string]float64{before, after}
	p50, p99 := (driver[0]["p50-ns"]+driver[1]["p50-ns"])/2e6, (driver[0]["p99-ns"]+driver[1]["p99-ns"])/2e6
	res.row("6. /seq/{name}/next latency, c = 1",
		fmt.Sprintf("p50 %s, p99 %s", formatMs(with.LatencyP50Ms), formatMs(with.LatencyP99Ms)),
		fmt.Sprintf("driver findOneAndUpdate p50 %s, p99 %s", formatMs(p50), formatMs(p99)),
		fmt.Sprintf("%.3f×, %.3f×", with.LatencyP50Ms/p50, with.LatencyP99Ms/p99))
	res.note("The driver's p50 and p99 are the means of %d calls before the seqload runs (p50 %s) and %d after (p50 %s); a spread between them is the machine's noise.",
		latencyCalls/2, formatMs(driver[0]["p50-ns"]/1e6), latencyCalls/2, formatMs(driver[1]["p50-ns"]/1e6))
	res.note("The HTTP floor, GET /oid at c = 1 from the same client to the same seqd, is p50 %s: the driver's p50 plus the floor is %s (%.2f× the driver's alone), so %s of seqd's p50 is neither HTTP nor the backend.",
		formatMs(floor.LatencyP50Ms), formatMs(p50+floor.LatencyP50Ms), (p50+floor.LatencyP50Ms)/p50, formatMs(with.LatencyP50Ms-p50-floor.LatencyP50Ms))
	res.note("Without coalescing (one findOneAndUpdate per request) seqd's c = 1 latency is p50 %s, p99 %s (%.2f× and %.2f× the driver's): the difference between the two seqd figures is the coalescer's hand-off.",
		formatMs(without.LatencyP50Ms), formatMs(without.LatencyP99Ms), without.LatencyP50Ms/p50, without.LatencyP99Ms/p99)
	return nil
}

// driverRoundTrips runs BenchmarkDriverRoundTrip against the dev store and returns
// its metrics by unit.
func (b *bench) driverRoundTrips(ctx context.Context, args []string) (map[string]float64, error) {
	b.logf("  go test -run '^$' %s", shellJoin(args))
	results, err := goBench(ctx, []string{"MONGODB_URI=" + b.store.URI()}, args...)
	if err != nil {
		return nil, err
	}
	r, _, ok := results.find("DriverRoundTrip")
	if !ok {
		return nil, errors.New("no BenchmarkDriverRoundTrip in the output")
	}
	out := map[string]float64{}
	for unit, s := range r {
		out[unit] = s.Center
	}
	return out, nil
}

// optimisticRetries counts writes retried after a duplicate key error, by strategy.
const optimisticRetries = "seqd_duplicate_key_retries_total"

func figureOptimistic(ctx context.Context, b *bench, res *figureResult) error {
	seqd, err := b.server(ctx, seqdCoalescing)
	if err != nil {
		return err
	}
	retries := func() (float64, error) {
		return metrics.Value(ctx, http.DefaultClient, seqd.url, optimisticRetries, "strategy", "optimistic")
	}
	res.commands = []string{"curl -s SEQD/metrics | grep '^" + optimisticRetries + `{strategy="optimistic"}'   # before and after each run`}
	for _, c := range optimisticConcurrencies {
		before, err := retries()
		if err != nil {
			return err
		}
		r, err := b.load(ctx, 7, seqd, "-target", "seq", "-strategy", "optimistic", "-name", fmt.Sprintf("fig7-c%d", c),
			"-c", strconv.Itoa(c), "-d", b.cfg.duration.String())
		if err != nil {
			return err
		}
		after, err := retries()
		if err != nil {
			return err
		}
		cell := fmt.Sprintf("%s values/s; %.2f retries/value (%.0f retries); %d contention 503s", formatCount(r.ValuesPerS),
			(after-before)/float64(max(r.Values, 1)), after-before, r.Errors["503"])
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
