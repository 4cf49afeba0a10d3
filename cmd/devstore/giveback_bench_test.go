package main

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// BenchmarkGiveBackUpdates is the store's part of a clean stop of seqd with
// 1,000 and 10,000 cached names: update commands of 50 statements with seqd's
// filters (counterFilter's conditions), a fenced give-back and a report of
// what was served for each name, two statements a name, one run:
//
//	cd cmd/devstore && go test -run '^$' -bench GiveBackUpdates -benchtime 1x
//
// It reports the whole time and the time per statement.
func BenchmarkGiveBackUpdates(b *testing.B) {
	for _, docs := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("names=%d", docs), func(b *testing.B) { benchmarkGiveBackUpdates(b, docs) })
	}
}

func benchmarkGiveBackUpdates(b *testing.B, docs int) {
	s := startStore(b)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	coll := connect(b, s.uri()).Database("bench").Collection("counters")
	batch := make([]any, 0, 1000)
	for i := range docs {
		batch = append(batch, bson.D{{Key: "_id", Value: fmt.Sprintf("n%05d", i)}, {Key: "seq", Value: int64(1000)}, {Key: "mode", Value: "cached"}, {Key: "reserved", Value: int64(1000)}, {Key: "served", Value: int64(0)}, {Key: "returned", Value: int64(0)}, {Key: "gen", Value: int64(1)}, {Key: "leaseMs", Value: int64(15000)}})
		if len(batch) == cap(batch) {
			if _, err := coll.InsertMany(ctx, batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	notArray := bson.E{Key: "$not", Value: bson.D{{Key: "$type", Value: "array"}}}
	absentOr := func(field string, cond bson.D) bson.D {
		return bson.D{{Key: "$or", Value: bson.A{
			bson.D{{Key: field, Value: bson.D{{Key: "$exists", Value: false}}}},
			bson.D{{Key: field, Value: cond}},
		}}}
	}
	count := bson.D{{Key: "$type", Value: bson.A{"int", "long"}}, notArray}
	bound := bson.D{{Key: "$type", Value: bson.A{"int", "long"}}, {Key: "$gte", Value: int64(0)}, {Key: "$lte", Value: int64(1000000)}, notArray}
	filter := func(name string, max int64, more ...bson.D) bson.D {
		and := bson.A{bson.D{{Key: "seq", Value: bson.D{{Key: "$type", Value: bson.A{"int", "long"}}, {Key: "$gte", Value: int64(0)}, {Key: "$lte", Value: max}, notArray}}},
			absentOr("mode", bson.D{{Key: "$in", Value: bson.A{"strict", "cached", "draining"}}, notArray}),
			absentOr("minBlock", bound), absentOr("maxBlock", bound),
			absentOr("reserved", count), absentOr("served", count), absentOr("returned", count), absentOr("gen", count), absentOr("leaseMs", count), absentOr("floor", count), absentOr("forced", count),
			absentOr("strictFrom", bson.D{{Key: "$type", Value: "date"}})}
		for _, m := range more {
			and = append(and, m)
		}
		return bson.D{{Key: "_id", Value: name}, {Key: "$and", Value: and}}
	}
	var models []mongo.WriteModel
	for i := range docs {
		name := fmt.Sprintf("n%05d", i)
		models = append(models, mongo.NewUpdateOneModel().SetFilter(filter(name, 1000, bson.D{{Key: "seq", Value: int64(1000)}}, absentOr("forced", bson.D{{Key: "$eq", Value: int64(0)}}), absentOr("floor", bson.D{{Key: "$lte", Value: int64(1)}}))).SetUpdate(bson.D{{Key: "$set", Value: bson.D{{Key: "seq", Value: int64(1)}}}, {Key: "$inc", Value: bson.D{{Key: "returned", Value: int64(999)}}}}))
		models = append(models, mongo.NewUpdateOneModel().SetFilter(filter(name, math.MaxInt64)).SetUpdate(bson.D{{Key: "$inc", Value: bson.D{{Key: "served", Value: int64(1)}}}}))
	}
	statements := len(models)
	b.ResetTimer()
	start := time.Now()
	for len(models) > 0 {
		m := models[:min(50, len(models))]
		models = models[len(m):]
		res, err := coll.BulkWrite(ctx, m, options.BulkWrite().SetOrdered(false))
		if err != nil {
			b.Fatal(err)
		}
		if res.MatchedCount != int64(len(m)) {
			b.Fatalf("%d of %d statements matched", res.MatchedCount, len(m))
		}
	}
	elapsed := time.Since(start)
	b.ReportMetric(float64(elapsed.Milliseconds()), "total-ms")
	b.ReportMetric(float64(elapsed.Microseconds())/float64(statements), "µs/statement")
}
