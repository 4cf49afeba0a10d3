//go:build integration

package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/seqd/seqd"
	"github.com/seqd/seqd/blocks"
	"github.com/seqd/seqd/counters"
)

// BenchmarkLeaseRefresh is the store's work on lease confirmation with n
// names cached on one instance, at the defaults (ModeRefresh 1 s, lease
// 15 s): the refresh's commands and the documents they ask for, per second of
// a quiet steady state, counted with a command monitor; then how long a clean
// stop (Close) takes to give every tail back, and that it did (returned equals
// what was held). One run per size:
//
//	cd integration && go test -tags integration -run '^$' -bench LeaseRefresh -benchtime 1x .
func BenchmarkLeaseRefresh(b *testing.B) {
	for _, n := range []int{10, 1000} {
		b.Run(fmt.Sprintf("names=%d", n), func(b *testing.B) {
			log := &refreshLog{}
			db := monitoredDB(b, log)
			c := counters.NewCounter(db, counters.Options{Blocks: blocks.Options{MinBlock: 1000, MaxBlock: 1000}})
			ctx := context.Background()
			for i := range n {
				name := fmt.Sprintf("n%05d", i)
				if err := c.SetMode(ctx, name, seqd.ModeCached, 0, 0); err != nil {
					b.Fatal(err)
				}
				if _, err := c.Next(ctx, name); err != nil {
					b.Fatal(err)
				}
			}
			time.Sleep(3 * time.Second) // two rounds read the new names: then the steady state
			log.take()
			b.ResetTimer()
			const window = 5 * time.Second
			time.Sleep(window) // a benchmark's measured window, not a synchronisation
			cmds, docs := 0, 0
			for _, cmd := range refreshReads(log.take()) {
				cmds++
				if coll, _ := cmd.Lookup("find").StringValueOK(); coll == counters.CounterCollection {
					in, _ := cmd.Lookup("filter", "_id", "$in").ArrayOK()
					vals, _ := in.Values()
					docs += len(vals)
				} else {
					docs++
				}
			}
			b.ReportMetric(float64(cmds)/window.Seconds(), "cmds/s")
			b.ReportMetric(float64(docs)/window.Seconds(), "docs/s")

			start := time.Now()
			cctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
			err := c.Close(cctx)
			cancel()
			b.ReportMetric(float64(time.Since(start).Milliseconds()), "close-ms")
			if err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			cur, err := db.Collection(counters.CounterCollection).Find(ctx, bson.D{})
			if err != nil {
				b.Fatal(err)
			}
			var all []struct {
				Returned int64 `bson:"returned"`
			}
			if err := cur.All(ctx, &all); err != nil {
				b.Fatal(err)
			}
			var returned int64
			for _, d := range all {
				returned += d.Returned
			}
			if want := int64(n) * 999; returned != want {
				b.Errorf("returned %d after Close, want %d (999 held for each of %d names)", returned, want, n)
			}
		})
	}
}
