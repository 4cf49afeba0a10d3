//go:build integration

package integration

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/seqd/seqd"
	"github.com/seqd/seqd/blocks"
	"github.com/seqd/seqd/counters"
	"github.com/seqd/seqd/integration/backend"
	"github.com/seqd/seqd/internal/stats"
)

// BenchmarkLeaseRefresh is the figure for many cached names on one instance,
// at the defaults (ModeRefresh 1 s, lease 15 s), with n names cached and one
// value taken from each, in a quiet steady state:
//
//   - refresh-ms/s: the time the store spent answering the mode refresh's
//     reads (their round trips, from a command monitor), per second;
//     cmds/s and docs/s: those reads, and the documents they ask for;
//   - strict-p50-µs: the median strict next of a name in strict mode,
//     measured beside it (one every 10 ms), with n+1 documents in "counters";
//   - close-ms: how long a clean stop (Close) takes, and that it gave every
//     tail back (returned equals what was held).
//
// One run per size:
//
//	cd integration && go test -tags integration -count=1 -run '^$' -bench LeaseRefresh -benchtime 1x .
func BenchmarkLeaseRefresh(b *testing.B) {
	for _, n := range []int{10, 1000, 10000} {
		b.Run(fmt.Sprintf("names=%d", n), func(b *testing.B) {
			log := &timedLog{started: make(map[int64]bson.Raw)}
			client := backend.Connect(b, options.Client().ApplyURI(be.URI).SetDirect(be.Direct).
				SetMonitor(&event.CommandMonitor{Started: log.start, Succeeded: log.succeed, Failed: log.fail}))
			db := client.Database(backend.DatabaseName(b))
			b.Cleanup(func() { db.Drop(context.Background()) })
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
			if _, err := c.Next(ctx, "strictprobe"); err != nil {
				b.Fatal(err)
			}
			time.Sleep(3 * time.Second) // two rounds read the new names: then the steady state
			log.take()
			b.ResetTimer()
			const window = 5 * time.Second
			var latencies []time.Duration
			tick := time.NewTicker(10 * time.Millisecond) // pacing the probe, not a synchronisation
			for end := time.Now().Add(window); time.Now().Before(end); <-tick.C {
				start := time.Now()
				if _, err := c.Next(ctx, "strictprobe"); err != nil {
					b.Fatal(err)
				}
				latencies = append(latencies, time.Since(start))
			}
			tick.Stop()
			cmds, docs := 0, 0
			var spent time.Duration
			for _, r := range log.take() {
				if len(refreshReads([]bson.Raw{r.cmd})) == 0 {
					continue
				}
				cmds++
				spent += r.took
				if coll, _ := r.cmd.Lookup("find").StringValueOK(); coll == counters.CounterCollection {
					in, _ := r.cmd.Lookup("filter", "_id", "$in").ArrayOK()
					vals, _ := in.Values()
					docs += len(vals)
				} else {
					docs++
				}
			}
			b.ReportMetric(float64(spent.Microseconds())/1000/window.Seconds(), "refresh-ms/s")
			b.ReportMetric(float64(cmds)/window.Seconds(), "cmds/s")
			b.ReportMetric(float64(docs)/window.Seconds(), "docs/s")
			slices.Sort(latencies)
			b.ReportMetric(float64(stats.Percentile(latencies, 50).Microseconds()), "strict-p50-µs")

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

// timedLog records each command a client sent and, once it succeeded, how
// long its round trip took.
type timedLog struct {
	mu      sync.Mutex
	started map[int64]bson.Raw // by request id, until the reply
	done    []timedCommand
}

type timedCommand struct {
	cmd  bson.Raw
	took time.Duration
}

func (l *timedLog) start(_ context.Context, e *event.CommandStartedEvent) {
	l.mu.Lock()
	l.started[e.RequestID] = append(bson.Raw(nil), e.Command...)
	l.mu.Unlock()
}

func (l *timedLog) succeed(_ context.Context, e *event.CommandSucceededEvent) {
	l.mu.Lock()
	if cmd, ok := l.started[e.RequestID]; ok {
		delete(l.started, e.RequestID)
		l.done = append(l.done, timedCommand{cmd, e.Duration})
	}
	l.mu.Unlock()
}

func (l *timedLog) fail(_ context.Context, e *event.CommandFailedEvent) {
	l.mu.Lock()
	delete(l.started, e.RequestID)
	l.mu.Unlock()
}

// take returns the commands that succeeded since the last take.
func (l *timedLog) take() []timedCommand {
	l.mu.Lock()
	defer l.mu.Unlock()
	done := l.done
	l.done = nil
	return done
}
