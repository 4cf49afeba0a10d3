package main

import (
	"context"
	"fmt"

	"github.com/seqd/seqd/internal/proc"
)

// snowflakeBench is one round of figure 14, run objectIDRounds times (benchRounds).
var snowflakeBench = []string{"-bench", "^BenchmarkNew$", "-benchmem", "-count", "1", "./snowflake/"}

// figureSnowflake is figure 14: snowflake.New against bwmarrin/snowflake's Generate
// and sony/sonyflake's NextID, serial and parallel, then GET /snowflake against
// GET /oid (versusOID). Generate, like New, makes at most 4,096 ids a millisecond
// and waits for the next one, so both measure that limit as much as their cost.
func figureSnowflake(ctx context.Context, b *bench, res *figureResult) error {
	res.note("%d rounds of `go test -run '^$' %s`; each figure is the median of the rounds, and each ratio the median of the rounds' ratios. "+
		"New and bwmarrin's Generate make at most 4,096 ids a millisecond (244 ns an id), sonyflake's NextID 256 every 10 ms.",
		objectIDRounds, proc.ShellJoin(snowflakeBench))
	rounds, err := b.goBenchRounds(ctx, objectIDRounds, snowflakeBench...)
	if err != nil {
		return err
	}
	for _, mode := range []string{"serial", "parallel"} {
		ours, err := rounds.side("New/"+mode+"/snowflake", "New/"+mode+"/bwmarrin", "New/"+mode+"/sonyflake")
		if err != nil {
			return err
		}
		bw, sony := ours.rivals[0], ours.rivals[1]
		res.row(fmt.Sprintf("%d. snowflake.New, %s (GOMAXPROCS %s)", res.id, mode, ours.procs),
			fmt.Sprintf("%.4g ns/op, %g allocs/op", ours.ns, ours.allocs),
			fmt.Sprintf("bwmarrin/snowflake Generate %.4g ns/op, %g allocs/op; sony/sonyflake NextID %s ns/op", bw.ns, bw.allocs, formatCount(sony.ns)),
			fmt.Sprintf("%.2f× bwmarrin, %.0f× sonyflake (their ns ÷ ours, medians of the rounds)", bw.ratio, sony.ratio))
	}
	return versusOID(ctx, b, res, "snowflake")
}
