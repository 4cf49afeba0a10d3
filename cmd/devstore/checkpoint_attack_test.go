package main

import (
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Many clients $inc one document while checkpoints run (the log passes walLimit
// several times): no increment is lost, every value is handed out once, and the
// log stays bounded.
func TestAttackIncrementsAcrossCheckpoints(t *testing.T) {
	s := startStore(t)
	ctx := testContext(t)
	const clients, each = 12, 250
	coll0 := connect(t, s.uri()).Database("ckpt").Collection("counters")
	if _, err := coll0.InsertOne(ctx, bson.D{{Key: "_id", Value: "n"}, {Key: "seq", Value: int64(0)}}); err != nil {
		t.Fatal(err)
	}
	wal := filepath.Join(s.dir, "ckpt.sqlite-wal")
	var largest, shrinks atomic.Int64
	stop := make(chan struct{})
	var watch sync.WaitGroup
	watch.Go(func() {
		var last int64
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
			if fi, err := os.Stat(wal); err == nil {
				if fi.Size() < last {
					shrinks.Add(1)
				}
				last = fi.Size()
				if fi.Size() > largest.Load() {
					largest.Store(fi.Size())
				}
			}
		}
	})
	seen := make([][]int64, clients)
	var wg sync.WaitGroup
	for i := range clients {
		c := connect(t, s.uri()).Database("ckpt").Collection("counters")
		wg.Go(func() {
			for j := range each {
				name := "n"
				if j%3 == 0 {
					name = "pad" // another document, to grow the log
				}
				v, err := increment(ctx, c, name)
				if err != nil {
					t.Error(err)
					return
				}
				if name == "n" {
					seen[i] = append(seen[i], v)
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	watch.Wait()
	total := 0
	got := map[int64]bool{}
	for _, vs := range seen {
		for _, v := range vs {
			if got[v] {
				t.Errorf("value %d handed out twice", v)
			}
			got[v] = true
		}
		total += len(vs)
	}
	final := seqOf(t, coll0, "n")
	t.Logf("increments %d, final %d, largest WAL %.1f MB, shrinks %d", total, final, float64(largest.Load())/1e6, shrinks.Load())
	if final != int64(total) {
		t.Errorf("final counter %d, want %d: increments lost", final, total)
	}
	if largest.Load() > 8<<20 {
		t.Errorf("WAL reached %d bytes", largest.Load())
	}
	if shrinks.Load() == 0 {
		t.Logf("no checkpoint observed")
	}
}
