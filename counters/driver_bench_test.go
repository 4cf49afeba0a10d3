package counters

import (
	"context"
	"math"
	"os"
	"slices"
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
// hand, {_id, seq: {$lte}}. seqbench runs it against its dev store before and after
// its seqload runs:
//
//	MONGODB_URI=mongodb://127.0.0.1:27017/ go test -run '^$' -bench DriverRoundTrip -benchtime 1000x ./counters/
//
// Besides the mean it reports the nearest-rank p50 and p99, as seqload computes its own.
func BenchmarkDriverRoundTrip(b *testing.B) {
	uri := os.Getenv("MONGODB_URI")
	if uri == "" {
		b.Skip("needs a MongoDB server: set MONGODB_URI")
	}
	client, err := mongo.Connect(options.Client().ApplyURI(uri).SetAppName("seqbench"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { client.Disconnect(context.Background()) })
	coll := client.Database("seqbench_driver").Collection(CounterCollection,
		options.Collection().SetWriteConcern(writeconcern.Majority()))
	update := bson.D{{Key: "$inc", Value: bson.D{{Key: fieldSeq, Value: int64(1)}}}}
	for _, f := range []struct {
		name   string
		filter func() any // made for each call, as a Counter makes its filter
	}{
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
