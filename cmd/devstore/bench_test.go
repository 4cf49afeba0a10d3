package main

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// BenchmarkIncrement measures the counter write (findOneAndUpdate $inc) through
// the front and straight to FerretDB's socket, from one client and from 32
// independent clients, in one run:
//
//	cd cmd/devstore && go test -run '^$' -bench Increment -benchtime 2000x -count 3
//
// It reports each operation's median latency, operations per second, and the
// values handed out more than once (FerretDB alone loses concurrent increments).
func BenchmarkIncrement(b *testing.B) {
	s := startStore(b)
	for _, path := range []struct {
		name string
		uri  string
	}{{"front", s.uri()}, {"direct", s.ferretURI()}} {
		for _, clients := range []int{1, 32} {
			b.Run(fmt.Sprintf("%s/clients=%d", path.name, clients), func(b *testing.B) {
				benchmarkIncrement(b, path.uri, clients)
			})
		}
	}
}

func benchmarkIncrement(b *testing.B, uri string, clients int) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	name := fmt.Sprintf("bench-%d-%d", clients, time.Now().UnixNano())
	colls := make([]*mongo.Collection, clients)
	for i := range colls {
		colls[i] = connect(b, uri).Database("bench").Collection("counters")
		if err := colls[i].Database().Client().Ping(ctx, nil); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := colls[0].InsertOne(ctx, bson.D{{Key: "_id", Value: name}, {Key: "seq", Value: int64(0)}}); err != nil {
		b.Fatal(err)
	}

	latencies := make([][]time.Duration, clients)
	values := make([][]int64, clients)
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for i, c := range colls {
		n := b.N / clients
		if i < b.N%clients {
			n++
		}
		wg.Go(func() {
			for range n {
				t0 := time.Now()
				v, err := increment(ctx, c, name)
				if err != nil {
					b.Error(err)
					return
				}
				latencies[i] = append(latencies[i], time.Since(t0))
				values[i] = append(values[i], v)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()

	lat := slices.Concat(latencies...)
	all := slices.Concat(values...)
	slices.Sort(all)
	dups := len(all) - len(slices.Compact(all))
	reportMedian(b, lat)
	b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "ops/s")
	b.ReportMetric(float64(dups), "duplicates")
}

// reportMedian reports the median of latencies as p50-µs.
func reportMedian(b *testing.B, latencies []time.Duration) {
	if len(latencies) == 0 {
		return
	}
	slices.Sort(latencies)
	b.ReportMetric(float64(latencies[len(latencies)/2].Microseconds()), "p50-µs")
}

// BenchmarkCounterWrite measures the write of seqd's strict next, a
// findOneAndUpdate $inc with seqd's filter (seqdFilter), through the front, with
// 10 and with 10,000 documents in the collection, in one run:
//
//	cd cmd/devstore && go test -run '^$' -bench CounterWrite -benchtime 2000x -count 3
//
// It reports each write's median latency; the store's answer for one document
// should not depend on how many others there are.
func BenchmarkCounterWrite(b *testing.B) {
	s := startStore(b)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	db := connect(b, s.uri()).Database("bench")
	for _, docs := range []int{10, 10000} {
		coll := db.Collection(fmt.Sprintf("counters%d", docs))
		batch := make([]any, 0, 1000)
		for i := range docs {
			batch = append(batch, bson.D{{Key: "_id", Value: fmt.Sprintf("seq%05d", i)}, {Key: "seq", Value: int64(0)}, {Key: "mode", Value: "strict"}})
			if len(batch) == cap(batch) || i == docs-1 {
				if _, err := coll.InsertMany(ctx, batch); err != nil {
					b.Fatal(err)
				}
				batch = batch[:0]
			}
		}
		name := fmt.Sprintf("seq%05d", docs/2)
		filter := seqdFilter(name, math.MaxInt64-1)
		inc := bson.D{{Key: "$inc", Value: bson.D{{Key: "seq", Value: int64(1)}}}}
		after := options.FindOneAndUpdate().SetReturnDocument(options.After)
		b.Run(fmt.Sprintf("documents=%d", docs), func(b *testing.B) {
			latencies := make([]time.Duration, 0, b.N)
			for b.Loop() {
				t0 := time.Now()
				if err := coll.FindOneAndUpdate(ctx, filter, inc, after).Err(); err != nil {
					b.Fatal(err)
				}
				latencies = append(latencies, time.Since(t0))
			}
			reportMedian(b, latencies)
		})
	}
}
