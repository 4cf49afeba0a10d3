package main

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"
)

// driverDB is where the raw round trip keeps its counter, apart from seqd's.
const driverDB = "seqbench_driver"

// driverRoundTrips times calls findOneAndUpdate round trips made in-process with the
// driver, after warmup untimed ones: the write a seqd Counter makes for one value, with
// the same filter, update, options and write concern, on a counters document. It returns
// the latencies, ascending.
func driverRoundTrips(ctx context.Context, uri string, warmup, calls int) ([]time.Duration, error) {
	client, err := mongo.Connect(options.Client().ApplyURI(uri).SetAppName("seqbench"))
	if err != nil {
		return nil, fmt.Errorf("mongodb: %w", err)
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		client.Disconnect(dctx)
	}()
	coll := client.Database(driverDB).Collection("counters",
		options.Collection().SetWriteConcern(writeconcern.Majority()))
	filter := bson.D{
		{Key: "_id", Value: "roundtrip"},
		{Key: "seq", Value: bson.D{{Key: "$lte", Value: int64(math.MaxInt64 - 1)}}},
	}
	update := bson.D{{Key: "$inc", Value: bson.D{{Key: "seq", Value: int64(1)}}}}
	opts := options.FindOneAndUpdate().SetUpsert(true).SetReturnDocument(options.After)

	latencies := make([]time.Duration, 0, calls)
	for i := range warmup + calls {
		var doc struct {
			Seq int64 `bson:"seq"`
		}
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second) // seqd's default request deadline
		start := time.Now()
		err := coll.FindOneAndUpdate(cctx, filter, update, opts).Decode(&doc)
		elapsed := time.Since(start)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("findOneAndUpdate %d: %w", i+1, err)
		}
		if i >= warmup {
			latencies = append(latencies, elapsed)
		}
	}
	slices.Sort(latencies)
	return latencies, nil
}

// percentile returns the nearest-rank p-th percentile (0 < p ≤ 100) of ascending
// latencies, as seqload computes its own.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p * float64(len(sorted)) / 100))
	return sorted[min(max(rank, 1), len(sorted))-1]
}
