//go:build integration

package integration

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/seqd/seqd/counters"
	"github.com/seqd/seqd/integration/backend"
	"github.com/seqd/seqd/internal/history"
)

// Pipelined writes: a Counter keeps up to Options.WritesInFlight coalesced
// findOneAndUpdate writes of one name in flight at once (seqd: --writes-in-flight,
// SEQD_WRITES_IN_FLIGHT). What it promises does not change: no value twice, and a
// call that begins after another ended gets larger values; only concurrent calls
// may complete out of value order. These tests hold it to that against the real
// backend, count the findAndModify commands the driver has in flight to see that
// the writes really overlap and never more than the option allows, and fail one
// write while another is in flight.

// pipelineMonitor counts the findAndModify commands that one mongo.Client has in
// flight: started, and neither succeeded nor failed yet. It is the client's
// event.CommandMonitor.
type pipelineMonitor struct {
	mu       sync.Mutex
	inFlight map[int64]bool // by request id
	most     int            // the most in flight at once, since the start or reset
	started  int
	failed   int
}

const findAndModify = "findAndModify"

func (m *pipelineMonitor) commandMonitor() *event.CommandMonitor {
	return &event.CommandMonitor{
		Started: func(_ context.Context, e *event.CommandStartedEvent) {
			if e.CommandName != findAndModify {
				return
			}
			m.mu.Lock()
			defer m.mu.Unlock()
			m.inFlight[e.RequestID] = true
			m.started++
			m.most = max(m.most, len(m.inFlight))
		},
		Succeeded: func(_ context.Context, e *event.CommandSucceededEvent) {
			m.finished(e.CommandFinishedEvent, false)
		},
		Failed: func(_ context.Context, e *event.CommandFailedEvent) {
			m.finished(e.CommandFinishedEvent, true)
		},
	}
}

func (m *pipelineMonitor) finished(e event.CommandFinishedEvent, failed bool) {
	if e.CommandName != findAndModify {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.inFlight, e.RequestID)
	if failed {
		m.failed++
	}
}

// reset starts the count of the most in flight again, from what is in flight now.
func (m *pipelineMonitor) reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.most = len(m.inFlight)
}

// counts returns the most findAndModify in flight at once since the start or the
// last reset, and how many have started and failed in all.
func (m *pipelineMonitor) counts() (most, started, failed int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.most, m.started, m.failed
}

// monitoredClient returns a client of its own on the backend, with app in its
// handshake (for a failpoint's appName) and a pipelineMonitor on its commands.
func monitoredClient(t *testing.T, app string) (*mongo.Client, *pipelineMonitor) {
	t.Helper()
	mon := &pipelineMonitor{inFlight: map[int64]bool{}}
	opts := options.Client().ApplyURI(be.URI).SetDirect(be.Direct).SetAppName(app).SetMonitor(mon.commandMonitor())
	return backend.Connect(t, opts), mon
}

// nextOp calls c.NextN and returns the call as an operation of the history.
func nextOp(ctx context.Context, c *counters.Counter, client, name string, n int64) (history.Op, error) {
	start := time.Now()
	r, err := c.NextN(ctx, name, n)
	end := time.Now()
	if err != nil {
		return history.Op{}, fmt.Errorf("%s: NextN(%q, %d): %w", client, name, n, err)
	}
	if r.Count() != n {
		return history.Op{}, fmt.Errorf("%s: NextN(%q, %d) = %v: %d values", client, name, n, r, r.Count())
	}
	return history.Op{Client: client, Start: start, End: end, First: r.First, Last: r.Last}, nil
}

// The load of the one-instance test, bounded by counts.
const (
	pipelineGoroutines = 64
	pipelineCalls      = 50 // NextN calls of each goroutine, of 1 to 3 values
)

// One Counter, many goroutines on one name: the whole history is a linearizable
// counter's with no gap (no call fails), the writes overlapped (at least two
// findAndModify in flight at once) and never more than WritesInFlight of them did.
func TestPipelineHistoryOneInstance(t *testing.T) {
	for _, depth := range []int{2, 4} {
		t.Run(fmt.Sprintf("writes-in-flight-%d", depth), func(t *testing.T) { pipelineOneInstance(t, depth) })
	}
}

func pipelineOneInstance(t *testing.T, depth int) {
	ctx := testContext(t)
	name := be.Database(t).Name()
	client, mon := monitoredClient(t, "pipeline-one")
	obs := &observer{}
	c := counters.NewCounter(client.Database(name), counters.Options{WritesInFlight: depth, Observer: obs})
	const seq = "piped"

	began := time.Now()
	var rec history.Recorder
	fail := &failures{t: t}
	var wg sync.WaitGroup
	var want int64 // the values asked for, in all
	for g := range pipelineGoroutines {
		for i := range pipelineCalls {
			want += int64((g+i)%3 + 1)
		}
		wg.Go(func() {
			for i := range pipelineCalls {
				op, err := nextOp(ctx, c, fmt.Sprintf("goroutine-%d", g), seq, int64((g+i)%3+1))
				if err != nil {
					fail.errorf("%v", err)
					return
				}
				rec.Add(op)
			}
		})
	}
	wg.Wait()
	took := time.Since(began)

	res := history.Check(rec.Ops(), history.Options{Contiguous: true})
	if err := res.Err(); err != nil {
		t.Error(err)
	}
	if res.Ops != pipelineGoroutines*pipelineCalls || res.Min != 1 || res.Max != want {
		t.Errorf("history %v; want %d ops holding exactly 1…%d", res, pipelineGoroutines*pipelineCalls, want)
	}
	most, started, _ := mon.counts()
	if most < 2 {
		t.Errorf("at most %d findAndModify in flight at once with WritesInFlight %d, over %d writes for %d callers: "+
			"no write went out while another was in flight", most, depth, started, pipelineGoroutines)
	}
	if most > depth {
		t.Errorf("%d findAndModify in flight at once, with WritesInFlight %d", most, depth)
	}
	mustCurrent(t, c, seq, want)
	t.Logf("WritesInFlight %d, %d goroutines × %d NextN: %v; %d findAndModify (%d writes served %d calls), most %d in flight at once; %v",
		depth, pipelineGoroutines, pipelineCalls, res, started, obs.batches.Load(), obs.callers.Load(), most, took.Round(time.Millisecond))
}

// The load of the several-instance test, bounded by counts.
const (
	pipelineInstances   = 3
	pipelineInFlight    = 3
	pipelineHTTPClients = 48 // spread over the instances
	pipelineHTTPCalls   = 50 // requests of each client
)

// Three seqd processes with SEQD_WRITES_IN_FLIGHT=3 on one name: the whole history
// of their answers is a linearizable counter's. A gap is allowed only if some
// request failed (a 503 may have reserved values it could not hand out).
func TestPipelineHistoryInstances(t *testing.T) {
	ctx := testContext(t)
	c := startCluster(t, pipelineInstances, pipelineHTTPClients, fmt.Sprintf("SEQD_WRITES_IN_FLIGHT=%d", pipelineInFlight))
	checkWritesInFlightLogged(t, c, pipelineInFlight)
	const name = "piped"

	began := time.Now()
	var rec history.Recorder
	var answers tally
	fail := &failures{t: t}
	var wg sync.WaitGroup
	for client := range pipelineHTTPClients {
		instance := client % len(c.seqds)
		wg.Go(func() {
			for range pipelineHTTPCalls {
				call := callNext(ctx, c.http, c.seqds[instance].URL(), name)
				call.client = client
				if call.status != http.StatusOK {
					answers.add("failed")
					if err := checkUnavailable(call.status, call.header, call.body); call.err != nil || err != nil {
						fail.errorf("instance %d: %v: %v", instance, call, err)
					}
					continue
				}
				op, err := c.op(instance, call, name)
				if err != nil {
					fail.errorf("instance %d: %v", instance, err)
					continue
				}
				rec.Add(op)
				answers.add(fmt.Sprint("instance ", instance))
			}
		})
	}
	wg.Wait()
	took := time.Since(began)

	failed := answers.count("failed")
	res := history.Check(rec.Ops(), history.Options{Contiguous: failed == 0})
	if err := res.Err(); err != nil {
		t.Error(err)
	}
	perInstance := pipelineHTTPClients / pipelineInstances * pipelineHTTPCalls
	for i := range c.seqds {
		if n := answers.count(fmt.Sprint("instance ", i)); n < perInstance/2 {
			t.Errorf("instance %d served %d of its %d requests", i, n, perInstance)
		}
	}
	t.Logf("%d seqd with SEQD_WRITES_IN_FLIGHT=%d, %d HTTP clients × %d requests: %d failed (503); %v; %v",
		pipelineInstances, pipelineInFlight, pipelineHTTPClients, pipelineHTTPCalls, failed, res, took.Round(time.Millisecond))
}

// checkWritesInFlightLogged fails t unless every seqd of c said at its start that
// it keeps n writes in flight.
func checkWritesInFlightLogged(t *testing.T, c *cluster, n int) {
	t.Helper()
	for i, srv := range c.seqds {
		if !strings.Contains(srv.Output(), fmt.Sprintf(`"writes_in_flight":%d`, n)) {
			t.Fatalf("seqd %d does not say writes_in_flight %d when it starts:\n%s", i, n, srv.Output())
		}
	}
}

// pipelineBlock is how long the failpoint holds the failing write before it
// answers the error: far longer than the write that must get past it takes.
const pipelineBlock = time.Second

// pipelineFault is the failCommand data of the failure-while-in-flight test, less
// the command and whom it aims at: the first findAndModify waits pipelineBlock,
// then fails with ExceededTimeLimit, which seqd takes for ErrUnavailable (503).
// No error labels: on a replica set the driver would retry a write labelled
// RetryableWriteError, and the retry would succeed.
var pipelineFault = bson.D{
	{Key: "blockConnection", Value: true},
	{Key: "blockTimeMS", Value: pipelineBlock.Milliseconds()},
	{Key: "errorCode", Value: 262},
	{Key: "errorLabels", Value: bson.A{}},
}

// The calls after the failure, bounded by counts.
const (
	pipelineAfterClients = 16
	pipelineAfterCalls   = 20
)

// A write that fails while another of the same name is in flight: call A's write
// is held by the failpoint, then fails; call B, begun while A's write is held,
// gets a write of its own at once and its values before A gets its error. A gets
// ErrUnavailable (over HTTP, a 503 with Retry-After). The history of every
// answer, before and after, is a linearizable counter's.
func TestPipelineFailedWriteWhileAnotherInFlight(t *testing.T) {
	be.RequireFailCommand(t)
	t.Run("library", pipelineFailedWriteLibrary)
	t.Run("http", pipelineFailedWriteHTTP)
}

func pipelineFailedWriteLibrary(t *testing.T) {
	ctx := testContext(t)
	name := be.Database(t).Name()
	const app = "pipeline-fail"
	client, mon := monitoredClient(t, app)
	c := counters.NewCounter(client.Database(name), counters.Options{WritesInFlight: 2})
	const seq = "failing"
	var rec history.Recorder
	add := func(op history.Op, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		rec.Add(op)
	}
	add(nextOp(ctx, c, "warm-up", seq, 1)) // creates the document, and a connection

	fp := be.FailCommand(t, bson.D{{Key: "times", Value: 1}}, append(bson.D{
		{Key: "failCommands", Value: bson.A{findAndModify}},
		{Key: "appName", Value: app},
		{Key: "namespace", Value: name + "." + counters.CounterCollection},
	}, pipelineFault...))
	mon.reset()
	type outcome struct {
		r   counters.Range
		err error
	}
	aDone := make(chan outcome, 1)
	go func() {
		r, err := c.NextN(ctx, seq, 2)
		aDone <- outcome{r, err}
	}()
	if err := fp.WaitEntered(ctx, 1); err != nil {
		t.Fatal(err)
	}
	b, err := nextOp(ctx, c, "B", seq, 3)
	if err != nil {
		t.Fatalf("B, begun while A's write was held by the failpoint: %v; want its values", err)
	}
	rec.Add(b)
	aFirst := false
	select {
	case a := <-aDone:
		aDone <- a
		aFirst = true
	default:
	}
	var a outcome
	select {
	case a = <-aDone:
	case <-ctx.Done():
		t.Fatalf("waiting for A: %v", ctx.Err())
	}
	most, _, failed := mon.counts()

	if !errors.Is(a.err, counters.ErrUnavailable) {
		t.Errorf("A, whose write failed with ExceededTimeLimit: %v, %v; want ErrUnavailable", a.r, a.err)
	}
	if aFirst {
		t.Errorf("A's answer (%v) came before B's values %d…%d: B's write waited for A's to return, "+
			"though it began while A's was held for %v", a.err, b.First, b.Last, pipelineBlock)
	}
	if most < 2 {
		t.Errorf("at most %d findAndModify in flight at once: B's write did not go out while A's was in flight", most)
	}
	if most > 2 {
		t.Errorf("%d findAndModify in flight at once, with WritesInFlight 2", most)
	}
	if failed != 1 {
		t.Errorf("%d findAndModify failed; want 1, A's", failed)
	}

	// More calls, after the failure: the history of every answer holds.
	var wg sync.WaitGroup
	fail := &failures{t: t}
	for g := range pipelineAfterClients {
		wg.Go(func() {
			for i := range pipelineAfterCalls {
				op, err := nextOp(ctx, c, fmt.Sprintf("after-%d", g), seq, int64((g+i)%3+1))
				if err != nil {
					fail.errorf("after the failure: %v", err)
					return
				}
				rec.Add(op)
			}
		})
	}
	wg.Wait()
	res := checkHistory(t, rec.Ops())
	t.Logf("A: %v; B got %d…%d; most %d findAndModify in flight at once; history: %v", a.err, b.First, b.Last, most, res)
}

func pipelineFailedWriteHTTP(t *testing.T) {
	ctx := testContext(t)
	c := startCluster(t, 1, 2+pipelineAfterClients, "SEQD_WRITES_IN_FLIGHT=2", "SEQD_TIMEOUT=5s")
	checkWritesInFlightLogged(t, c, 2)
	srv := c.seqds[0]
	const name = "failing"
	var rec history.Recorder
	add := func(call nextCall) {
		t.Helper()
		if call.status != http.StatusOK {
			t.Fatalf("%v, want 200", call)
		}
		op, err := c.op(0, call, name)
		if err != nil {
			t.Fatal(err)
		}
		rec.Add(op)
	}
	add(callNext(ctx, c.http, srv.URL(), name)) // creates the document, and a connection

	fp := be.FailCommand(t, bson.D{{Key: "times", Value: 1}}, append(bson.D{
		{Key: "failCommands", Value: bson.A{findAndModify}},
		{Key: "appName", Value: seqdAppName},
		{Key: "namespace", Value: c.db + "." + counters.CounterCollection},
	}, pipelineFault...))
	aDone := make(chan nextCall, 1)
	go func() { aDone <- callNext(ctx, c.http, srv.URL(), name) }()
	if err := fp.WaitEntered(ctx, 1); err != nil {
		t.Fatal(err)
	}
	b := callNext(ctx, c.http, srv.URL(), name)
	aFirst := false
	select {
	case a := <-aDone:
		aDone <- a
		aFirst = true
	default:
	}
	var a nextCall
	select {
	case a = <-aDone:
	case <-ctx.Done():
		t.Fatalf("waiting for A: %v", ctx.Err())
	}

	if b.status != http.StatusOK {
		t.Fatalf("B, begun while A's write was held by the failpoint: %v; want 200", b)
	}
	add(b)
	if err := checkUnavailable(a.status, a.header, a.body); err != nil {
		t.Errorf("A, whose write failed with ExceededTimeLimit: %v: %v", a, err)
	}
	if aFirst {
		t.Errorf("A's answer (%v) came before B's (%v): B's write waited for A's to return, "+
			"though it began while A's was held for %v", a, b, pipelineBlock)
	}

	// More calls, after the failure: the history of every answer holds.
	var wg sync.WaitGroup
	fail := &failures{t: t}
	for client := range pipelineAfterClients {
		wg.Go(func() {
			for range pipelineAfterCalls {
				call := callNext(ctx, c.http, srv.URL(), name)
				call.client = client
				if call.status != http.StatusOK {
					fail.errorf("after the failure: %v, want 200", call)
					continue
				}
				op, err := c.op(0, call, name)
				if err != nil {
					fail.errorf("after the failure: %v", err)
					continue
				}
				rec.Add(op)
			}
		})
	}
	wg.Wait()
	res := checkHistory(t, rec.Ops())
	t.Logf("A: %v; B: %v; history: %v", a, b, res)
}
