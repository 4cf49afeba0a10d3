package counters

import (
	"context"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"

	"github.com/seqd/seqd/internal/stats"
)

// BenchmarkDriverRoundTrip is the anchor of figure 6: the write behind one value,
// made in-process with the driver against MONGODB_URI, on a counters document of a
// database of its own, with the update, options and write concern a Counter uses.
// "seqd" is the filter a Counter sends (counterFilter, which keeps every write off
// documents seqd cannot use); "plain" is the filter an application would write by
// hand, {_id, seq: {$lte}}; "id" is the least a write can send, {_id}. seqbench runs it against its dev store before and after
// its seqload runs:
//
//	MONGODB_URI=mongodb://127.0.0.1:27017/ go test -run '^$' -bench DriverRoundTrip -benchtime 1000x ./counters/
//
// Besides the mean it reports the nearest-rank p50 and p99, as seqload computes its own.
func BenchmarkDriverRoundTrip(b *testing.B) {
	client := benchClient(b)
	coll := client.Database("seqbench_driver").Collection(CounterCollection,
		options.Collection().SetWriteConcern(writeconcern.Majority()))
	update := bson.D{{Key: "$inc", Value: bson.D{{Key: fieldSeq, Value: int64(1)}}}}
	for _, f := range []struct {
		name   string
		filter func() any // made for each call, as a Counter makes its filter
	}{
		{"id", func() any { return bson.D{{Key: "_id", Value: "id"}} }},
		{"plain", func() any {
			return bson.D{{Key: "_id", Value: "plain"}, {Key: fieldSeq, Value: bson.D{{Key: "$lte", Value: int64(math.MaxInt64 - 1)}}}}
		}},
		{"seqd", func() any { return counterFilter("seqd", math.MaxInt64-1, notDraining) }},
	} {
		b.Run(f.name, func(b *testing.B) {
			call := func() time.Duration {
				ctx, cancel := context.WithTimeout(b.Context(), 2*time.Second) // seqd's default request deadline
				defer cancel()
				var doc struct {
					Seq int64 `bson:"seq"`
				}
				start := time.Now()
				if err := coll.FindOneAndUpdate(ctx, f.filter(), update, reserveOptions).Decode(&doc); err != nil {
					b.Fatal(err)
				}
				return time.Since(start)
			}
			for range 200 { // untimed: connections in the pool, the document in place
				call()
			}
			var latencies []time.Duration
			for b.Loop() {
				latencies = append(latencies, call())
			}
			slices.Sort(latencies)
			b.ReportMetric(float64(stats.Percentile(latencies, 50)), "p50-ns")
			b.ReportMetric(float64(stats.Percentile(latencies, 99)), "p99-ns")
		})
	}
}

// benchClient connects to MONGODB_URI until b ends, or skips b without one.
func benchClient(b *testing.B) *mongo.Client {
	uri := os.Getenv("MONGODB_URI")
	if uri == "" {
		b.Skip("needs a MongoDB server: set MONGODB_URI")
	}
	client, err := mongo.Connect(options.Client().ApplyURI(uri).SetAppName("seqbench"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { client.Disconnect(context.Background()) })
	return client
}

// batchCounter is an Observer that counts a Counter's writes and the callers they served.
type batchCounter struct{ writes, callers atomic.Int64 }

func (o *batchCounter) Retry(string)                      {}
func (o *batchCounter) Batch(n int)                       { o.writes.Add(1); o.callers.Add(int64(n)) }
func (o *batchCounter) Block(int64, time.Duration, error) {}

// BenchmarkCounterWritesInFlight measures a Counter's strict Next from 64
// goroutines on one name, with one to three coalesced writes in flight, against
// MONGODB_URI: the package comment's measurements of Options.WritesInFlight.
//
//	MONGODB_URI=mongodb://127.0.0.1:27017/ go test -run '^$' -bench CounterWritesInFlight -benchtime 3s -count 2 ./counters/
//
// ns/op is per value; it reports writes/s and callers per write beside.
func BenchmarkCounterWritesInFlight(b *testing.B) {
	client := benchClient(b)
	for _, k := range []int{1, 2, 3} {
		b.Run(fmt.Sprintf("writes=%d", k), func(b *testing.B) {
			obs := &batchCounter{}
			c := NewCounter(client.Database("seqbench_driver"), Options{WritesInFlight: k, Observer: obs})
			name := fmt.Sprintf("inflight-%d", k)
			if _, err := c.Next(b.Context(), name); err != nil {
				b.Fatal(err)
			}
			obs.writes.Store(0)
			obs.callers.Store(0)
			b.SetParallelism(max(1, 64/runtime.GOMAXPROCS(0)))
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := c.Next(b.Context(), name); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(obs.writes.Load())/b.Elapsed().Seconds(), "writes/s")
			b.ReportMetric(float64(obs.callers.Load())/float64(max(obs.writes.Load(), 1)), "callers/write")
		})
	}
}
