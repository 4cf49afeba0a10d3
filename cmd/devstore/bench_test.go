package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
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
	slices.Sort(lat)
	all := slices.Concat(values...)
	slices.Sort(all)
	dups := len(all) - len(slices.Compact(all))
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	}
	b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "ops/s")
	b.ReportMetric(float64(dups), "duplicates")
}
