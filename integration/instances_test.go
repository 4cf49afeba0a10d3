//go:build integration

package integration

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seqd/seqd/internal/history"
)

// Several seqd instances on one store, with other applications taking values of
// the same counter document through the driver and an operator raising it in the
// middle: together they must behave as one linearizable counter. Every allocation
// is recorded with the time it was asked for and the time it returned, and the
// whole history is checked: no value twice, and an allocation that returned
// before another was asked for holds smaller values. Gaps are expected (the raise
// makes one) and not checked.
func TestInstancesLinearizable(t *testing.T) {
	t.Run("coalesce", func(t *testing.T) { instancesScenario(t, true) })
	t.Run("no-coalesce", func(t *testing.T) { instancesScenario(t, false) })
}

// The load of the several-instance test. It is bounded by counts: the test ends
// when both the HTTP clients and the driver clients have done their share.
const (
	instances       = 3
	instanceClients = 48 // HTTP clients, spread over the instances
	httpAnswers     = 4800
	driverClients   = 4 // independent mongo.Clients, as other applications
	driverWorkers   = 2 // goroutines on each
	driverIncs      = 100
	// raisedTo is far above what the run reaches before the raise, so that the
	// raise holds for every allocation that completed before it.
	raisedTo = 1_000_000
)

func instancesScenario(t *testing.T, coalesce bool) {
	ctx := testContext(t)
	c := startCluster(t, instances, instanceClients, fmt.Sprintf("SEQD_NO_COALESCE=%v", !coalesce))
	for _, srv := range c.seqds {
		if !strings.Contains(srv.Output(), fmt.Sprintf(`"coalesce":%v`, coalesce)) {
			t.Fatalf("seqd does not say coalesce %v when it starts:\n%s", coalesce, srv.Output())
		}
	}
	const name = "shared"
	var rec history.Recorder
	var answers tally
	fail := &failures{t: t}

	// The first allocation creates the counter document, so that the other
	// applications find it: their plain upsert has no answer to a race on creation,
	// as seqd's retry is.
	first := callNext(ctx, c.http, c.seqds[0].URL(), name)
	if first.status != http.StatusOK {
		t.Fatalf("first allocation: %v", first)
	}
	if op, err := c.op(0, first, name); err != nil {
		t.Fatal(err)
	} else {
		rec.Add(op)
	}

	stop := c.load(ctx, name, instanceClients, func(instance int, call nextCall) {
		if call.status != http.StatusOK {
			fail.errorf("instance %d: %v", instance, call)
			return
		}
		op, err := c.op(instance, call, name)
		if err != nil {
			fail.errorf("instance %d: %v", instance, err)
			return
		}
		rec.Add(op)
		answers.add("http")
		answers.add(fmt.Sprint("instance ", instance))
	})

	var driver sync.WaitGroup
	dctx, cancel := context.WithCancel(ctx)
	t.Cleanup(func() { // on the way out of a failed test, too
		cancel()
		driver.Wait()
	})
	for i := range driverClients {
		coll := c.counters()
		for w := range driverWorkers {
			client := fmt.Sprintf("driver-%d.%d", i, w)
			driver.Go(func() {
				for range driverIncs {
					start := time.Now()
					v, err := increment(dctx, coll, name)
					if err != nil {
						fail.errorf("%s: %v", client, err)
						return
					}
					rec.Add(history.Op{Client: client, Start: start, End: time.Now(), First: v, Last: v})
				}
			})
		}
	}
	driverDone := make(chan struct{})
	go func() {
		driver.Wait()
		close(driverDone)
	}()

	waitFor(t, ctx, answers.reach("http", httpAnswers/2), fmt.Sprintf("%d HTTP answers", httpAnswers/2))
	raise, err := c.raise(ctx, 1, name, raisedTo)
	if err != nil {
		t.Fatal(err)
	}
	rec.Add(raise)
	waitFor(t, ctx, answers.reach("http", httpAnswers), fmt.Sprintf("%d HTTP answers", httpAnswers))
	waitFor(t, ctx, driverDone, "the driver clients")
	stop()

	res := checkHistory(t, rec.Ops())
	t.Logf("%d seqd (coalesce %v), %d HTTP clients, %d driver clients × %d goroutines × %d $inc, one raise to %d: %v",
		instances, coalesce, instanceClients, driverClients, driverWorkers, driverIncs, raisedTo, res)
	if res.Max <= raisedTo {
		t.Errorf("no value above %d after the raise; the run did not test it", raisedTo)
	}
	for i := range c.seqds {
		if n := answers.count(fmt.Sprint("instance ", i)); n == 0 {
			t.Errorf("instance %d answered nothing", i)
		}
	}
}
