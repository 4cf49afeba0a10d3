//go:build integration

package integration

// Hostile tests of pipelined writes (Options.WritesInFlight > 1) against cached
// mode's switch order, on the real backend: a strict write held on the server
// while another of the same Counter, sent beside it, tells the Counter that the
// name went cached; and a busy name switched back and forth between strict and
// cached, through either of two Counters, with four writes in flight each.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/seqd/seqd"
	"github.com/seqd/seqd/blocks"
	"github.com/seqd/seqd/counters"
	"github.com/seqd/seqd/internal/history"
)

// With two writes in flight: W1, a strict write of Counter a, is held on the
// server; another instance switches the name to cached; W2, sent by a beside
// W1, comes back cached, and a learns it while W1 is still in flight. A call
// that begins after W2's caller returned is served from a block, which must lie
// above W1's value and W2's: the block fetch waits for W1. When a itself
// switches the name (at once, in a), W2 writes nothing and its caller is
// served from the block too.
func TestPipelineAttackLearnWhileWriteHeld(t *testing.T) {
	be.RequireFailCommand(t)
	for _, via := range []string{"other instance", "same instance"} {
		t.Run(via, func(t *testing.T) {
			ctx := testContext(t)
			db := be.Database(t)
			const app = "attack-learn"
			a := counters.NewCounter(be.NewAppClient(t, app).Database(db.Name()), counters.Options{WritesInFlight: 2})
			other := counters.NewCounter(db, counters.Options{})
			t.Cleanup(func() { a.Close(context.Background()); other.Close(context.Background()) })
			mustNext(t, a, "orders", 1)

			held := be.FailCommand(t, bson.D{{Key: "times", Value: 1}}, bson.D{
				{Key: "failCommands", Value: bson.A{"findAndModify"}},
				{Key: "appName", Value: app},
				{Key: "namespace", Value: db.Name() + "." + counters.CounterCollection},
				{Key: "blockConnection", Value: true},
				{Key: "blockTimeMS", Value: 500},
			})
			w1 := make(chan answer, 1)
			w1Start := time.Now()
			go func() { v, err := a.Next(ctx, "orders"); w1 <- answer{v, err} }()
			if err := held.WaitEntered(ctx, 1); err != nil {
				t.Fatal(err)
			}
			if via == "same instance" {
				mustSetMode(t, a, "orders", seqd.ModeCached, 10, 10)
			} else {
				mustSetMode(t, other, "orders", seqd.ModeCached, 10, 10)
			}
			var rec history.Recorder
			op := func(client string) int64 {
				t.Helper()
				start := time.Now()
				v, err := a.Next(ctx, "orders")
				if err != nil {
					t.Fatalf("%s: %v", client, err)
				}
				rec.Add(history.Op{Client: client, Start: start, End: time.Now(), First: v, Last: v})
				return v
			}
			v2 := op("W2, beside the held W1")
			x := op("X, after W2's caller returned")
			r1 := <-w1
			if r1.err != nil {
				t.Fatalf("W1: %v", r1.err)
			}
			rec.Add(history.Op{Client: "W1, held", Start: w1Start, End: time.Now(), First: r1.v, Last: r1.v})
			y := op("Y, after W1 returned")
			if res := history.Check(rec.Ops(), history.Options{}); res.Err() != nil {
				t.Error(res)
			}
			if x <= r1.v {
				t.Errorf("X got %d from a block, below or at the strict W1's %d that was in flight when a learned the name cached", x, r1.v)
			}
			if _, ok := a.BlockStatus("orders"); !ok {
				t.Errorf("a does not serve the name from blocks")
			}
			t.Logf("W1 %d, W2 %d, X %d, Y %d", r1.v, v2, x, y)
		})
	}
}

// A busy name switched between strict and cached eight times, through either
// of two Counters, each with four writes of a name in flight, while 16
// goroutines per Counter call NextN of 1 to 3 values: no error, no value twice,
// each Counter's answers in real-time order.
func TestPipelineAttackSwitchUnderLoad(t *testing.T) {
	ctx := testContext(t)
	name := be.Database(t).Name()
	opts := counters.Options{WritesInFlight: 4, Blocks: blocks.Options{MinBlock: 50, MaxBlock: 500},
		ModeRefresh: 20 * time.Millisecond, BlockLease: 300 * time.Millisecond}
	a := counters.NewCounter(be.NewClient(t).Database(name), opts)
	b := counters.NewCounter(be.NewClient(t).Database(name), opts)
	t.Cleanup(func() { a.Close(context.Background()); b.Close(context.Background()) })
	cs := map[string]*counters.Counter{"a": a, "b": b}

	const switches, perPhase = 8, 1500
	var done atomic.Int64
	progress := make(chan struct{}, 1)
	stop := make(chan struct{})
	recs := map[string]*history.Recorder{"a": {}, "b": {}}
	fail := &failures{t: t}
	var wg sync.WaitGroup
	for id, c := range cs {
		for g := range 16 {
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					n := int64(rand.IntN(3) + 1)
					start := time.Now()
					r, err := c.NextN(ctx, "busy", n)
					end := time.Now()
					if err != nil {
						fail.errorf("%s-%d: NextN(%d): %v", id, g, n, err)
						return
					}
					if r.Count() != n {
						fail.errorf("%s-%d: NextN(%d) = %v", id, g, n, r)
						return
					}
					recs[id].Add(history.Op{Client: fmt.Sprintf("%s-%d", id, g), Start: start, End: end, First: r.First, Last: r.Last})
					done.Add(1)
					select {
					case progress <- struct{}{}:
					default:
					}
				}
			})
		}
	}
	waitDone := func(n int64) {
		t.Helper()
		for done.Load() < n {
			select {
			case <-progress:
			case <-ctx.Done():
				close(stop)
				t.Fatalf("load stalled at %d answers, waiting for %d", done.Load(), n)
			}
		}
	}
	// strictPhases are spans of time in which every answer that began and
	// ended inside one is a strict one: from when the name was seen strict
	// again (the drain over) to when the next switch to cached began.
	type span struct{ from, until time.Time }
	strictPhases := []span{{from: time.Now()}}
	for i := range switches {
		waitDone(int64(i+1) * perPhase)
		mode := seqd.ModeCached
		if i%2 == 1 {
			mode = seqd.ModeStrict
		}
		if mode == seqd.ModeCached {
			strictPhases[len(strictPhases)-1].until = time.Now()
		}
		via := []*counters.Counter{a, b}[i%2]
		if err := via.SetMode(ctx, "busy", mode, 0, 0); err != nil {
			close(stop)
			wg.Wait()
			t.Fatalf("switch %d to %s: %v", i, mode, err)
		}
		if mode == seqd.ModeStrict {
			pollUntil(t, ctx, "the drain to end", func() (bool, error) {
				s, err := via.Current(ctx, "busy")
				return err == nil && s.Mode == seqd.ModeStrict, err
			})
			strictPhases = append(strictPhases, span{from: time.Now()})
		}
	}
	waitDone(int64(switches+1) * perPhase)
	close(stop)
	strictPhases[len(strictPhases)-1].until = time.Now()
	wg.Wait()
	all := checkPerInstance(t, recs)
	t.Logf("%d switches: %s", switches, all)

	// "A strict answer is larger than every answer that ended before it
	// started, whichever instance gave that answer."
	var every, strict []history.Op
	for _, rec := range recs {
		for _, op := range rec.Ops() {
			every = append(every, op)
			for _, p := range strictPhases {
				if !op.Start.Before(p.from) && op.End.Before(p.until) {
					strict = append(strict, op)
				}
			}
		}
	}
	if bad := history.CheckAbove(every, strict); len(bad) > 0 {
		t.Errorf("%d strict answers not above every answer that ended before they began, e.g. %q", len(bad), bad[:min(len(bad), 5)])
	}
	t.Logf("%d strict answers over %d strict phases checked against all %d", len(strict), len(strictPhases), len(every))
	s, err := a.Current(context.Background(), "busy")
	if err != nil || s.Blocks.Reserved == 0 {
		t.Errorf("Current = %+v, %v; want blocks reserved in the cached phases", s, err)
	}
}
