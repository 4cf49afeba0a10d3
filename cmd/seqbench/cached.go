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

	"github.com/seqd/seqd/internal/history"
)

const adminToken = "seqbench-admin" // seqd's, for seqload -mode

// figureCached is figure 8: a cached sequence, served from seqd's memory, next to GET
// /oid on the same seqd (an answer without a sequence) and to one findOneAndUpdate per
// request (strict, without coalescing), at the same concurrency.
func figureCached(ctx context.Context, b *bench, res *figureResult) error {
	var runs [3]loadRun
	for i, args := range [][]string{{"-target", "seq", "-name", "fig8", "-mode", "cached", "-admin-token", adminToken},
		{"-target", "oid"}, {"-target", "seq", "-name", "fig8-strict"}} {
		var err error
		if runs[i], err = b.load(ctx, 8, []*server{b.seqd, b.seqd, b.off}[i], append(args, "-c", "64", "-d", b.cfg.duration.String())...); err != nil {
			return err
		}
	}
	cached, oid, strict := runs[0], runs[1], runs[2]
	res.row("8. cached /seq/{name}/next, c = 64", fmt.Sprintf("%s req/s (p99 %s), %s", formatCount(cached.RequestsPerS), formatMs(cached.LatencyP99Ms), verified(cached)),
		fmt.Sprintf("GET /oid, same seqd: %s req/s; strict, one findOneAndUpdate per request: %s req/s", formatCount(oid.RequestsPerS), formatCount(strict.RequestsPerS)),
		fmt.Sprintf("%.2f× /oid, %.0f× strict", cached.RequestsPerS/oid.RequestsPerS, cached.RequestsPerS/strict.RequestsPerS))
	if !cached.Passed {
		return fmt.Errorf("the cached run failed verification: %s", failures(cached))
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
