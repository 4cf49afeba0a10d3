//go:build integration

package integration

import (
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/seqd/seqd/internal/history"
	"github.com/seqd/seqd/internal/metrics"
	"github.com/seqd/seqd/internal/stats"
)

// Faults a MongoDB deployment reports, injected with its own failCommand failpoint
// on seqd's findAndModify while clients load two seqd instances: what a replica set
// returns while it fails over or shuts down, a write-concern timeout, a dropped
// connection, a command slower than seqd's deadline. The kill tests in
// faults_test.go cover processes dying; these cover what a live server says.
//
// For each fault, over the whole run (before, during, after):
//   - every answer is 200, or 503 with Retry-After and the error body;
//   - every 503 comes within seqd's deadline plus failpointMargin;
//   - the history of 200s is a linearizable counter's (history.Check);
//   - once the failpoint is off, both instances serve again, and keep serving;
//   - each instance's /metrics counts its 503s as backend errors.

// failpointTimeout is seqd's per-request deadline (SEQD_TIMEOUT) in these tests.
const failpointTimeout = 500 * time.Millisecond

// failpointMargin is how much later than the deadline a 503 may come: scheduling
// on a busy test machine, not waiting on the backend.
const failpointMargin = 500 * time.Millisecond

// failpointFaults are the faults, as failCommand data; the test adds the command
// (findAndModify) and aims it at seqd on the test's collection.
//
// entered is how many findAndModify commands the failpoint must act on; 0 means
// failpointEntered. ShutdownInProgress makes the driver forget the server until
// its monitor's next hello (a streaming hello waits up to heartbeatFrequencyMS,
// 10 s, on mongod as on the dev store), so few commands reach the failpoint.
var failpointFaults = []struct {
	name    string
	data    bson.D
	entered int64
}{
	{"closeConnection", bson.D{{Key: "closeConnection", Value: true}}, 0},
	{"NotWritablePrimary", bson.D{
		{Key: "errorCode", Value: 10107},
		{Key: "errorLabels", Value: bson.A{"RetryableWriteError"}},
	}, 0},
	{"ShutdownInProgress", bson.D{{Key: "errorCode", Value: 91}}, 4},
	{"writeConcernError", bson.D{{Key: "writeConcernError", Value: bson.D{
		{Key: "code", Value: 64},
		{Key: "errmsg", Value: "waiting for replication timed out"},
	}}}, 0},
	{"blockConnection", bson.D{
		{Key: "blockConnection", Value: true},
		{Key: "blockTimeMS", Value: (3 * failpointTimeout).Milliseconds()},
	}, 0},
}

func TestFailpointFaults(t *testing.T) {
	be.RequireFailCommand(t)
	for _, f := range failpointFaults {
		entered := f.entered
		if entered == 0 {
			entered = failpointEntered
		}
		t.Run(f.name, func(t *testing.T) { failpointScenario(t, f.name, f.data, entered) })
	}
}

// The load of each fault test, and how much of each phase it waits for.
const (
	failpointClients = 16 // HTTP clients, over two instances
	failpointEntered = 20 // findAndModify commands the failpoint acts on, at least
	failedPerSeqd    = 5  // answers other than 200 from each instance during the fault
	servedPerSeqd    = 50 // 200s from each instance before, after the fault and after recovery
)

func failpointScenario(t *testing.T, fault string, data bson.D, entered int64) {
	ctx := testContext(t)
	c := startCluster(t, 2, failpointClients, "SEQD_TIMEOUT="+failpointTimeout.String())
	const name = "faulty"
	var rec history.Recorder
	var seen tally
	fail := &failures{t: t}

	// The phase of the run when an answer came: before the failpoint, while it is
	// on, after it is off, and once both instances have served again after it.
	// From then on (recoveredAt), every request must be served.
	const (
		before = iota
		during
		after
		recovered
	)
	phaseNames := []string{"before", "during", "after", "recovered"}
	var phase atomic.Int32
	var recoveredAt atomic.Int64 // UnixNano
	var mu sync.Mutex
	var unavailable [2]int           // 503s by instance
	var latencies503 []time.Duration // of every 503
	var slowest time.Duration        // of every answer
	stop := c.load(ctx, name, failpointClients, func(instance int, call nextCall) {
		p := phase.Load() // when the answer came; a request sent before may end in a later phase
		mu.Lock()
		slowest = max(slowest, call.latency)
		mu.Unlock()
		switch {
		case call.err != nil:
			fail.errorf("instance %d, %s: no answer (a hang, or seqd died): %v", instance, phaseNames[p], call)
			return
		case call.status == http.StatusOK:
			op, err := c.op(instance, call, name)
			if err != nil {
				fail.errorf("instance %d: %v", instance, err)
				return
			}
			rec.Add(op)
			seen.add(fmt.Sprintf("200 %s %d", phaseNames[p], instance))
			return
		}
		seen.add(fmt.Sprintf("failed %s %d", phaseNames[p], instance))
		if at := recoveredAt.Load(); p == before || at != 0 && call.start.UnixNano() > at {
			fail.errorf("instance %d, %s: %v, want 200", instance, phaseNames[p], call)
		}
		if err := checkUnavailable(call.status, call.header, call.body); err != nil {
			fail.errorf("instance %d, %s: %v: %v", instance, fault, call, err)
			return
		}
		if call.latency > failpointTimeout+failpointMargin {
			fail.errorf("instance %d, %s: 503 after %v, want it within SEQD_TIMEOUT=%v plus %v: %v",
				instance, fault, call.latency, failpointTimeout, failpointMargin, call)
		}
		mu.Lock()
		unavailable[instance]++
		latencies503 = append(latencies503, call.latency)
		mu.Unlock()
	})
	waitEach := func(kind string, n int) {
		t.Helper()
		for i := range c.seqds {
			key := fmt.Sprintf("%s %d", kind, i)
			waitFor(t, ctx, seen.reach(key, n), fmt.Sprintf("%d answers %q", n, key))
		}
	}

	waitEach("200 before", servedPerSeqd)
	phase.Store(during) // first: an answer may fail as soon as the failpoint is on
	fp := be.FailCommand(t, "alwaysOn", append(bson.D{
		{Key: "failCommands", Value: bson.A{"findAndModify"}},
		{Key: "appName", Value: seqdAppName},
		{Key: "namespace", Value: c.db + ".counters"},
	}, data...))
	if err := fp.WaitEntered(ctx, entered); err != nil {
		t.Fatal(err)
	}
	waitEach("failed during", failedPerSeqd)

	if err := fp.Off(ctx); err != nil {
		t.Fatal(err)
	}
	phase.Store(after)
	waitEach("200 after", servedPerSeqd)
	recoveredAt.Store(time.Now().UnixNano())
	phase.Store(recovered)
	waitEach("200 recovered", servedPerSeqd)
	stop()

	res := checkHistory(t, rec.Ops())
	for i, srv := range c.seqds {
		m, err := metrics.Scrape(ctx, c.http, srv.URL())
		if err != nil {
			t.Fatal(err)
		}
		counted, _ := m.Sum("seqd_backend_errors_total", "code", "unavailable")
		if unavailable[i] == 0 || counted < float64(unavailable[i]) {
			t.Errorf("instance %d answered %d × 503; its seqd_backend_errors_total{code=\"unavailable\"} is %v",
				i, unavailable[i], counted)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	slices.Sort(latencies503)
	t.Logf("%s on findAndModify, 2 seqd, %d clients, SEQD_TIMEOUT=%v: %d × 503 (%d + %d), median %v, slowest %v; slowest answer %v; "+
		"failed answers during %d, after %d; history: %v",
		fault, failpointClients, failpointTimeout, unavailable[0]+unavailable[1], unavailable[0], unavailable[1],
		stats.Percentile(latencies503, 50).Round(time.Millisecond), stats.Percentile(latencies503, 100).Round(time.Millisecond), slowest.Round(time.Millisecond),
		seen.count("failed during 0")+seen.count("failed during 1"), seen.count("failed after 0")+seen.count("failed after 1"), res)
}

// On a replica set the driver retries a write that failed with a retryable error,
// once: a single NotWritablePrimary, as in a step-down, costs seqd's client nothing.
func TestFailpointRetryableWrite(t *testing.T) {
	be.RequireFailCommand(t)
	be.RequireReplicaSet(t)
	ctx := testContext(t)
	c := startCluster(t, 1, 1)
	fp := be.FailCommand(t, bson.D{{Key: "times", Value: 1}}, bson.D{
		{Key: "failCommands", Value: bson.A{"findAndModify"}},
		{Key: "appName", Value: seqdAppName},
		{Key: "errorCode", Value: 10107},
		{Key: "errorLabels", Value: bson.A{"RetryableWriteError"}},
	})
	var r nextReply
	do(t, c.seqds[0].URL(), call{method: http.MethodPost, path: "/seq/retried/next"}).want(t, http.StatusOK, &r)
	if r.Value != 1 {
		t.Errorf("first value after a retried write: %+v, want 1", r)
	}
	if err := fp.WaitEntered(ctx, 1); err != nil {
		t.Fatal(err)
	}
}
