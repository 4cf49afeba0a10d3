package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/seqd/seqd/internal/history"
)

const adminToken = "seqbench-admin" // seqd's, for seqload -mode

// cachedPairs is how many pairs of runs, a cached one and a GET /oid one, figure 8
// alternates; its ratio is the median of the pairs'.
const cachedPairs = 4

// figureCached is figure 8: a cached sequence, served from memory, next to GET /oid on the
// same seqd, and to a findOneAndUpdate per request (strict, no coalescing). The cached and
// /oid runs alternate in cachedPairs pairs, each pair in the other order from the one
// before (cached, oid, oid, cached, …), so that a machine that speeds up or slows down
// moves both sides; the ratio is the median of the pairs' ratios.
func figureCached(ctx context.Context, b *bench, res *figureResult) error {
	cached := []string{"-target", "seq", "-name", "fig8", "-mode", "cached", "-admin-token", adminToken}
	oid := []string{"-target", "oid"}
	load := func(srv *server, args []string) (loadRun, error) {
		return b.load(ctx, 8, srv, append(args, "-c", "64", "-d", b.cfg.duration.String())...)
	}
	var cachedRuns, oidRuns []loadRun
	var ratios []float64
	for i := range cachedPairs {
		var pair [2]loadRun // cached, oid
		order := []int{0, 1}
		if i%2 == 1 {
			order = []int{1, 0}
		}
		for _, j := range order {
			var err error
			if pair[j], err = load(b.seqd, [][]string{cached, oid}[j]); err != nil {
				return err
			}
		}
		cachedRuns, oidRuns = append(cachedRuns, pair[0]), append(oidRuns, pair[1])
		ratios = append(ratios, pair[0].RequestsPerS/pair[1].RequestsPerS)
	}
	strict, err := load(b.off, []string{"-target", "seq", "-name", "fig8-strict"})
	if err != nil {
		return err
	}
	perS := func(runs []loadRun) float64 {
		xs := make([]float64, len(runs))
		for i, r := range runs {
			xs[i] = r.RequestsPerS
		}
		return median(xs)
	}
	cpu := func(runs []loadRun) time.Duration {
		var cpu time.Duration
		for _, r := range runs {
			cpu += r.serverCPUPerRequest()
		}
		return cpu / time.Duration(len(runs))
	}
	c := perS(cachedRuns)
	ratioText := make([]string, len(ratios))
	for i, r := range ratios {
		ratioText[i] = fmt.Sprintf("%.2f", r)
	}
	res.row(fmt.Sprintf("8. cached /seq/{name}/next, c = 64 (%d pairs cached + oid, alternated; medians)", cachedPairs),
		fmt.Sprintf("%s req/s (p99 %s, %s server CPU/req), %s", formatCount(c), formatMs(cachedRuns[0].LatencyP99Ms), formatMicros(cpu(cachedRuns)), verified(cachedRuns[0])),
		fmt.Sprintf("GET /oid, same seqd: %s req/s (%s server CPU/req); strict, one findOneAndUpdate per request: %s req/s", formatCount(perS(oidRuns)), formatMicros(cpu(oidRuns)), formatCount(strict.RequestsPerS)),
		fmt.Sprintf("%.2f× /oid (median of the pairs: %s), %.0f× strict", median(ratios), strings.Join(ratioText, ", "), c/strict.RequestsPerS))
	for _, r := range cachedRuns {
		if !r.Passed {
			return fmt.Errorf("a cached run failed verification: %s", failures(r))
		}
	}
	return nil
}

// figureClientProcesses is figure 10: 8 processes of seqload -client-cache, each with 8
// goroutines sharing one Go client, on one cached sequence. Each seqload checks its own
// values (none twice, in real-time order); seqbench checks all of them together.
func figureClientProcesses(ctx context.Context, b *bench, res *figureResult) error {
	dir, err := os.MkdirTemp("", "seqbench-ranges-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	runs, errs := make([]loadRun, 8), make([]error, 8)
	var wg sync.WaitGroup
	for i := range runs {
		wg.Go(func() { // figure 0 here: b.load records figures' runs one at a time
			runs[i], errs[i] = b.load(ctx, 0, b.seqd, "-target", "seq", "-name", "fig10", "-mode", "cached", "-admin-token", adminToken,
				"-client-cache", "-c", "8", "-d", b.cfg.duration.String(), "-ranges", filepath.Join(dir, strconv.Itoa(i)))
			runs[i].figure = 10
		})
	}
	wg.Wait()
	b.runs = append(b.runs, runs...)
	var all []history.Op
	var perS float64
	for i, r := range runs {
		ops, err := history.ReadRangesFile(filepath.Join(dir, strconv.Itoa(i)))
		if err = errors.Join(errs[i], err); err != nil || !r.Passed {
			return fmt.Errorf("seqload %d: %v %s", i, err, failures(r))
		}
		all, perS = append(all, ops...), perS+r.ValuesPerS
	}
	h := history.Check(all, history.Options{})
	res.row("10. Go client's local cache, 8 processes × 8 goroutines, one cached name",
		fmt.Sprintf("%s values/s in all; %s values, %d duplicates across the processes", formatCount(perS), formatCount(float64(h.Values)), h.Duplicates), "—", "—")
	if h.Duplicates > 0 {
		return fmt.Errorf("values received twice across processes: %s", strings.Join(h.Examples, "; "))
	}
	return nil
}
