//go:build integration

package integration

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/seqd/seqd/counters"
)

// Many goroutines of one process on one name: every value exactly once, and each
// goroutine sees its own values increase.
func TestCounterManyCallersOneProcess(t *testing.T) {
	for _, st := range strategies[:2] {
		t.Run(st.name, func(t *testing.T) {
			ctx := testContext(t)
			obs := &observer{}
			s := st.new(be.Database(t), counters.Options{Observer: obs})

			const goroutines, perGoroutine = 64, 200
			all := make([][]int64, goroutines)
			var wg sync.WaitGroup
			for g := range goroutines {
				wg.Go(func() {
					for range perGoroutine {
						v, err := s.Next(ctx, "hot")
						if err != nil {
							t.Error(err)
							return
						}
						all[g] = append(all[g], v)
					}
				})
			}
			wg.Wait()

			var values []int64
			for g, vs := range all {
				if !slices.IsSorted(vs) {
					t.Errorf("goroutine %d saw its values go down", g)
				}
				values = append(values, vs...)
			}
			checkExactly(t, values, goroutines*perGoroutine)
			mustCurrent(t, s, "hot", goroutines*perGoroutine)
			t.Logf("%d calls served by %d writes", obs.callers.Load(), obs.batches.Load())
		})
	}
}

// NextN from many goroutines: the ranges are disjoint and together contiguous.
func TestCounterNextNRanges(t *testing.T) {
	for _, st := range strategies[:2] {
		t.Run(st.name, func(t *testing.T) {
			ctx := testContext(t)
			s := st.new(be.Database(t), counters.Options{})

			const goroutines, perGoroutine = 16, 50
			var mu sync.Mutex
			var ranges []counters.Range
			var wg sync.WaitGroup
			for g := range goroutines {
				wg.Go(func() {
					for i := range perGoroutine {
						n := int64((g+i)%7 + 1)
						r, err := s.NextN(ctx, "blocks", n)
						if err != nil {
							t.Error(err)
							return
						}
						if r.Count() != n {
							t.Errorf("NextN(%d) = %v", n, r)
						}
						mu.Lock()
						ranges = append(ranges, r)
						mu.Unlock()
					}
				})
			}
			wg.Wait()

			slices.SortFunc(ranges, func(a, b counters.Range) int { return int(a.First - b.First) })
			next := int64(1)
			for _, r := range ranges {
				if r.First != next {
					t.Fatalf("range %v: want it to start at %d (disjoint and contiguous)", r, next)
				}
				next = r.Last + 1
			}
			mustCurrent(t, s, "blocks", next-1)
		})
	}
}

// Racing first calls on new names, one Counter each, as separate processes would
// have. Losers of the upsert race get E11000 and must retry: mongod retries an
// upsert's E11000 itself only for a filter of equalities on the unique key, which
// seqd's never is. The dev store runs writes one at a time, so its upserts never
// race; the test counts retries rather than demanding them, and
// TestCounterUpsertE11000RetriedBySeqd makes one happen.
func TestCounterUpsertRace(t *testing.T) {
	ctx := testContext(t)
	db := be.Database(t)
	obs := &observer{}
	const racers, maxRounds = 16, 30

	procs := make([]*counters.Counter, racers)
	for i := range procs {
		procs[i] = counters.NewCounter(db, counters.Options{Observer: obs})
	}
	mustNext(t, procs[0], "warm-up", 1) // creates the collection outside the race

	rounds := 0
	for rounds < maxRounds && (rounds < 5 || obs.retries.Load() == 0) {
		name := fmt.Sprintf("fresh-%d", rounds)
		rounds++
		gate := make(chan struct{})
		values := make([]int64, racers)
		var wg sync.WaitGroup
		for i, c := range procs {
			wg.Go(func() {
				<-gate
				v, err := c.Next(ctx, name)
				if err != nil {
					t.Errorf("racer %d: %v", i, err)
				}
				values[i] = v
			})
		}
		close(gate)
		wg.Wait()
		checkExactly(t, values, racers)
	}

	retries := obs.retries.Load()
	t.Logf("%s: %d rounds of %d racers, %d E11000 retries", be.Kind, rounds, racers, retries)
	if retries == 0 {
		t.Logf("no E11000 in %d upsert races (the server ran them one at a time): "+
			"TestCounterUpsertE11000RetriedBySeqd and TestCounterRetryBound run the retry path", rounds)
	}
}

// The retry path and its bound, made deterministic by the failCommand failpoint:
// every reservation is answered E11000, as a lost upsert race is. MaxRetries
// retries, each reported to the Observer, then ErrContention.
func TestCounterRetryBound(t *testing.T) {
	be.RequireFailCommand(t)
	ctx := testContext(t)
	db := be.Database(t)
	// Every upsert loses the race: the server answers E11000 each time.
	be.FailCommand(t, "alwaysOn", bson.D{
		{Key: "failCommands", Value: bson.A{"findAndModify"}},
		{Key: "namespace", Value: db.Name() + "." + counters.CounterCollection},
		{Key: "errorCode", Value: 11000},
	})
	obs := &observer{}
	c := counters.NewCounter(db, counters.Options{MaxRetries: 3, Observer: obs, NoCoalesce: true})
	if v, err := c.Next(ctx, "contended"); !errors.Is(err, counters.ErrContention) {
		t.Fatalf("Next = %d, %v; want ErrContention", v, err)
	}
	if got := obs.retries.Load(); got != 3 {
		t.Errorf("%d retries reported, want 3", got)
	}
}

// One lost upsert race, as mongod reports it for seqd's filter (which is not
// equalities on _id alone, so the server does not retry it): the first
// findAndModify of a new name is answered E11000. seqd's own retry settles it:
// Next returns 1, the retry is reported to the Observer (seqd's metric), and the
// counter holds 1. The same for Set's upsert.
func TestCounterUpsertE11000RetriedBySeqd(t *testing.T) {
	be.RequireFailCommand(t)
	for _, tc := range []struct {
		name string
		call func(ctx context.Context, c *counters.Counter) error
		want int64 // the counter after the call
	}{
		{"Next", func(ctx context.Context, c *counters.Counter) error {
			v, err := c.Next(ctx, "fresh")
			if err == nil && v != 1 {
				err = fmt.Errorf("got %d, want 1", v)
			}
			return err
		}, 1},
		{"Set", func(ctx context.Context, c *counters.Counter) error { return c.Set(ctx, "fresh", 41, false) }, 41},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testContext(t)
			db := be.Database(t)
			obs := &observer{}
			c := counters.NewCounter(db, counters.Options{Observer: obs})
			// The first call reads the collection's options, before the failpoint.
			if _, err := c.Current(ctx, "fresh"); !errors.Is(err, counters.ErrNotFound) {
				t.Fatal(err)
			}
			fp := be.FailCommand(t, bson.D{{Key: "times", Value: 1}}, bson.D{
				{Key: "failCommands", Value: bson.A{"findAndModify"}},
				{Key: "namespace", Value: db.Name() + "." + counters.CounterCollection},
				{Key: "errorCode", Value: 11000},
			})
			if err := tc.call(ctx, c); err != nil {
				t.Fatalf("%s after one E11000: %v", tc.name, err)
			}
			if err := fp.WaitEntered(ctx, 1); err != nil {
				t.Fatal(err)
			}
			if got := obs.retries.Load(); got != 1 {
				t.Errorf("%d retries reported, want 1", got)
			}
			mustCurrent(t, c, "fresh", tc.want)
		})
	}
}

// Independent clients, each with its own connection pool like separate processes,
// hammer one name. Half of them coalesce, half do not. No value may repeat.
func TestCounterIndependentClients(t *testing.T) {
	ctx := testContext(t)
	name := be.Database(t).Name()

	const clients, goroutines, perGoroutine = 4, 8, 100
	var mu sync.Mutex
	var values []int64
	var wg sync.WaitGroup
	for i := range clients {
		db := be.NewClient(t).Database(name)
		c := counters.NewCounter(db, counters.Options{NoCoalesce: i%2 == 1})
		for range goroutines {
			wg.Go(func() {
				for range perGoroutine {
					v, err := c.Next(ctx, "shared")
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					values = append(values, v)
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	checkExactly(t, values, clients*goroutines*perGoroutine)
}
