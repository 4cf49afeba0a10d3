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

// figureCached is figure 8: a cached sequence, served from memory, next to GET /oid on the
// same seqd (ABBA, as figure 2) and to a findOneAndUpdate per request (strict, no coalescing).
func figureCached(ctx context.Context, b *bench, res *figureResult) error {
	cached := []string{"-target", "seq", "-name", "fig8", "-mode", "cached", "-admin-token", adminToken}
	var runs [5]loadRun
	for i, args := range [][]string{cached, {"-target", "oid"}, {"-target", "oid"}, cached, {"-target", "seq", "-name", "fig8-strict"}} {
		var err error
		if runs[i], err = b.load(ctx, 8, []*server{b.seqd, b.seqd, b.seqd, b.seqd, b.off}[i], append(args, "-c", "64", "-d", b.cfg.duration.String())...); err != nil {
			return err
		}
	}
	mean := func(i, j int) float64 { return (runs[i].RequestsPerS + runs[j].RequestsPerS) / 2 }
	c, oid, strict := mean(0, 3), mean(1, 2), runs[4].RequestsPerS
	res.row("8. cached /seq/{name}/next, c = 64 (means of the runs cached, oid, oid, cached)",
		fmt.Sprintf("%s req/s (p99 %s, %s server CPU/req), %s", formatCount(c), formatMs(runs[0].LatencyP99Ms), formatMicros(runs[0].serverCPUPerRequest()), verified(runs[0])),
		fmt.Sprintf("GET /oid, same seqd: %s req/s (%s server CPU/req); strict, one findOneAndUpdate per request: %s req/s", formatCount(oid), formatMicros(runs[1].serverCPUPerRequest()), formatCount(strict)),
		fmt.Sprintf("%.2f× /oid, %.0f× strict", c/oid, c/strict))
	if !runs[0].Passed || !runs[3].Passed {
		return fmt.Errorf("the cached runs failed verification: %s %s", failures(runs[0]), failures(runs[3]))
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
