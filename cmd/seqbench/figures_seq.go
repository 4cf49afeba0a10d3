package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

func figureCoalescing(ctx context.Context, b *bench) (figureResult, error) {
	var res figureResult
	on, err := b.server(ctx, seqdCoalescing)
	if err != nil {
		return res, err
	}
	off, err := b.server(ctx, seqdNoCoalescing)
	if err != nil {
		return res, err
	}
	for _, c := range seqConcurrencies {
		base := []string{"-target", "seq", "-c", strconv.Itoa(c), "-d", b.cfg.duration.String()}
		onArgs := append([]string{"-name", fmt.Sprintf("fig4-c%d", c), "-expect-contiguous"}, base...)
		offArgs := append([]string{"-name", fmt.Sprintf("fig4-nocoalesce-c%d", c)}, base...)
		with, withWrites, err := b.loadCountingWrites(ctx, 4, on, onArgs...)
		if err != nil {
			return res, err
		}
		without, withoutWrites, err := b.loadCountingWrites(ctx, 4, off, offArgs...)
		if err != nil {
			return res, err
		}
		ratio := with.ValuesPerS / without.ValuesPerS
		r := row{
			figure: fmt.Sprintf("4. /seq/{name}/next values/s, c = %d", c),
			seqd: fmt.Sprintf("%s values/s (%s writes/s × %.1f callers), %s",
				formatCount(with.ValuesPerS), formatCount(withWrites.perSecond(with)), withWrites.callersPerWrite(), verification(with)),
			anchor: fmt.Sprintf("no coalescing %s values/s (%s writes/s), %s",
				formatCount(without.ValuesPerS), formatCount(withoutWrites.perSecond(without)), duplicatesNote(without)),
			ratio:  fmt.Sprintf("%.1f×", ratio),
			target: "—", met: "—",
		}
		if c == targetCoalesceC {
			r.target = fmt.Sprintf("≥ %.0f× and ≥ %s values/s", targetCoalesceRatio, formatCount(targetSeqValuesPerS))
			r.met = yesNo(ratio >= targetCoalesceRatio && with.ValuesPerS >= targetSeqValuesPerS && with.Passed)
			if r.met == "no" {
				r.met = fmt.Sprintf("no (%.1f× of %.0f×; %.0f%% of %s values/s)", ratio, targetCoalesceRatio,
					100*with.ValuesPerS/targetSeqValuesPerS, formatCount(targetSeqValuesPerS))
			}
		}
		if !with.Passed {
			r.met = "no: coalescing run FAILED verification: " + clip(strings.Join(with.Failures, "; "), 300)
		}
		res.rows = append(res.rows, r)
		if c == seqConcurrencies[0] {
			res.commands = append(res.commands,
				"seqload -addr SEQD "+shellJoin(onArgs)+"   # each c",
				"seqload -addr SEQD_NO_COALESCE "+shellJoin(offArgs)+"   # each c")
		}
	}
	res.notes = append(res.notes,
		"Both seqd processes use the same dev store. With coalescing every run must pass seqload -expect-contiguous: no duplicate, no gap.",
		"Writes/s and callers per write come from seqd's /metrics (seqd_coalesced_batch_callers, count and sum, before and after the run): values/s = writes/s × callers per write. A closed-loop client waits for the write in flight and then its own, so at concurrency c values/s cannot pass c / (1.5 × the write's round trip).",
		"Without coalescing, duplicates are a property of the dev store, not of seqd: FerretDB's findAndModify is not atomic across connections, so concurrent $inc on one document lose updates and hand out the same value twice (counters/doc.go, Guarantees). mongod applies findAndModify atomically. Values/s counts every value received, duplicates included.")
	return res, nil
}

// writeCounts is the change of seqd_coalesced_batch_callers over a run: count is
// the number of counter writes, sum the number of callers they served.
type writeCounts struct{ count, sum float64 }

func (w writeCounts) perSecond(s loadSummary) float64 {
	if s.ElapsedS <= 0 {
		return 0
	}
	return w.count / s.ElapsedS
}

func (w writeCounts) callersPerWrite() float64 {
	if w.count == 0 {
		return 0
	}
	return w.sum / w.count
}

// batchMetric is the histogram of callers per counter write, on seqd's /metrics.
const batchMetric = "seqd_coalesced_batch_callers"

func scrapeWrites(ctx context.Context, srv *server) (writeCounts, error) {
	var w writeCounts
	var err error
	base := "http://" + srv.addr
	if w.count, err = scrapeMetric(ctx, base, batchMetric+"_count", nil); err != nil {
		return w, err
	}
	w.sum, err = scrapeMetric(ctx, base, batchMetric+"_sum", nil)
	return w, err
}

// loadCountingWrites is load, and the counter writes seqd made during the run.
func (b *bench) loadCountingWrites(ctx context.Context, figure int, srv *server, args ...string) (loadSummary, writeCounts, error) {
	before, err := scrapeWrites(ctx, srv)
	if err != nil {
		return loadSummary{}, writeCounts{}, err
	}
	s, err := b.load(ctx, figure, srv, args...)
	if err != nil {
		return s, writeCounts{}, err
	}
	after, err := scrapeWrites(ctx, srv)
	return s, writeCounts{count: after.count - before.count, sum: after.sum - before.sum}, err
}

// verification says whether a coalescing run handed out a gapless run without duplicates.
func verification(s loadSummary) string {
	if s.Passed && s.Duplicates == 0 && s.missing() == 0 {
		return fmt.Sprintf("verified: %s values, 0 duplicates, 0 gaps", formatCount(float64(s.Distinct)))
	}
	return fmt.Sprintf("NOT verified: %d duplicates, %d missing, %d failed", s.Duplicates, s.missing(), s.Failed)
}

func duplicatesNote(s loadSummary) string {
	note := fmt.Sprintf("%d duplicates (FerretDB)", s.Duplicates)
	if s.Failed > 0 {
		note += fmt.Sprintf(", %d failed", s.Failed)
	}
	return note
}

func figureSeqBatch(ctx context.Context, b *bench) (figureResult, error) {
	var res figureResult
	seqd, err := b.server(ctx, seqdCoalescing)
	if err != nil {
		return res, err
	}
	args := []string{"-target", "seq", "-name", "fig5", "-count", strconv.Itoa(seqBatch), "-expect-contiguous",
		"-c", strconv.Itoa(seqBatchClients), "-d", b.cfg.duration.String()}
	s, err := b.load(ctx, 5, seqd, args...)
	if err != nil {
		return res, err
	}
	met := "—"
	if !s.Passed {
		met = "no: verification FAILED: " + clip(strings.Join(s.Failures, "; "), 300)
	}
	res.rows = append(res.rows, row{
		figure: fmt.Sprintf("5. /seq/{name}/next?count=%d values/s, c = %d", seqBatch, seqBatchClients),
		seqd:   fmt.Sprintf("%s values/s (%s req/s), %s", formatCount(s.ValuesPerS), formatCount(s.RequestsPerS), verification(s)),
		anchor: leafAnchor,
		ratio:  fmt.Sprintf("%.0f× Leaf", s.ValuesPerS/leafIDsPerS),
		target: "—", met: met,
	})
	res.commands = append(res.commands, "seqload -addr SEQD "+shellJoin(args))
	return res, nil
}

func figureOptimistic(ctx context.Context, b *bench) (figureResult, error) {
	var res figureResult
	seqd, err := b.server(ctx, seqdCoalescing)
	if err != nil {
		return res, err
	}
	base := "http://" + seqd.addr
	labels := map[string]string{"strategy": optimisticRetryLabel}
	const metric = "seqd_duplicate_key_retries_total"
	for _, c := range optimisticConcurrencies {
		args := []string{"-target", "seq", "-strategy", "optimistic", "-name", fmt.Sprintf("fig7-c%d", c),
			"-c", strconv.Itoa(c), "-d", b.cfg.duration.String()}
		before, err := scrapeMetric(ctx, base, metric, labels)
		if err != nil {
			return res, err
		}
		s, err := b.load(ctx, 7, seqd, args...)
		if err != nil {
			return res, err
		}
		after, err := scrapeMetric(ctx, base, metric, labels)
		if err != nil {
			return res, err
		}
		retries := after - before
		perValue := 0.0
		if s.Values > 0 {
			perValue = retries / float64(s.Values)
		}
		contention := s.Errors["503"]
		seqdCell := fmt.Sprintf("%s values/s; %.2f retries/value (%.0f retries); %d contention 503s",
			formatCount(s.ValuesPerS), perValue, retries, contention)
		if other := s.Failed - contention; other > 0 {
			seqdCell += fmt.Sprintf("; %d other failures %v", other, s.Errors)
		}
		if s.Duplicates > 0 {
			seqdCell += fmt.Sprintf("; %d DUPLICATES", s.Duplicates)
		}
		r := row{
			figure: fmt.Sprintf("7. optimistic strategy, c = %d", c),
			seqd:   seqdCell,
			anchor: "—", ratio: "—", target: "—", met: "—",
		}
		if c == targetOptimisticC {
			r.target = fmt.Sprintf("0 × 503, ≥ %d values/s", targetOptimisticPerS)
			r.met = "no"
			if s.Failed == 0 && s.Duplicates == 0 && s.ValuesPerS >= targetOptimisticPerS {
				r.met = "yes"
			}
		}
		res.rows = append(res.rows, r)
		if c == optimisticConcurrencies[0] {
			res.commands = append(res.commands, "seqload -addr SEQD "+shellJoin(args)+"   # each c",
				"curl -s SEQD/metrics | grep '^"+metric+`{strategy="optimistic"}'   # before and after each run`)
		}
	}
	res.notes = append(res.notes, "Retries per value: the run's increase of "+metric+`{strategy="optimistic"}`+
		" divided by the values handed out. Callers of one seqd queue per name: each write reads max(_id) once and inserts the queued callers' values with one ordered insertMany, so duplicate keys, retries and 503 contention come only from other processes writing the same name.")
	return res, nil
}

// Formatting.
