package main

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

// BenchmarkDriverRoundTrip is the anchor of figure 6: the write a seqd Counter makes for
// one value (the same filter, update, options and write concern, on a counters document
// of its own database), made in-process with the driver against MONGODB_URI. seqbench
// runs it against its dev store before and after its seqload runs:
//
//	MONGODB_URI=mongodb://127.0.0.1:27017/ go test -run '^$' -bench DriverRoundTrip -benchtime 1000x ./cmd/seqbench/
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
	coll := client.Database("seqbench_driver").Collection("counters",
		options.Collection().SetWriteConcern(writeconcern.Majority()))
	filter := bson.D{
		{Key: "_id", Value: "roundtrip"},
		{Key: "seq", Value: bson.D{{Key: "$lte", Value: int64(math.MaxInt64 - 1)}}},
	}
	update := bson.D{{Key: "$inc", Value: bson.D{{Key: "seq", Value: int64(1)}}}}
	opts := options.FindOneAndUpdate().SetUpsert(true).SetReturnDocument(options.After)
	call := func() time.Duration {
		ctx, cancel := context.WithTimeout(b.Context(), 2*time.Second) // seqd's default request deadline
		defer cancel()
		var doc struct {
			Seq int64 `bson:"seq"`
		}
		start := time.Now()
		if err := coll.FindOneAndUpdate(ctx, filter, update, opts).Decode(&doc); err != nil {
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
}
