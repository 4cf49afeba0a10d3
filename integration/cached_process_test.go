//go:build integration

package integration

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/seqd/seqd/internal/history"
	"github.com/seqd/seqd/internal/proc"
)

// Cached sequences as processes see them: seqd instances on one store serving a
// cached sequence from the blocks each reserved, while one is killed, the only
// one is stopped, the store fails, and an operator switches the mode back and
// forth. What cached mode promises, checked over every answer of the run:
//
//   - no value twice, over every instance and every restart;
//   - each process's answers strictly increase in real-time order: an answer
//     that started after another answer of the same process returned is larger
//     (there is no order across instances, so none is checked);
//   - a crash loses at most the unused rest of the blocks the crashed process
//     held, and a clean stop loses nothing;
//   - with the store failing, an instance serves what its blocks hold, then
//     answers a fast 503 with Retry-After, and serves again once the store is back.

// Block bounds of the cached sequences in these tests: small, so that a run of a
// few thousand answers reserves many blocks, and what a process can hold (two
// blocks) is small next to what the run hands out.
const (
	cachedMinBlock = 10
	cachedMaxBlock = 100
	cachedModeBody = `{"mode":"cached","min_block":10,"max_block":100}`
)

// maxCount is the most values startLoad's clients ask for in one request.
const maxCount = 10

// sequenceView is GET /seq/{name} and the answer to PUT /seq/{name}: the sequence
// as stored, with its mode and, once blocks were reserved, their accounts.
type sequenceView struct {
	Name     string       `json:"name"`
	Value    int64        `json:"value"`
	Mode     string       `json:"mode"`
	MinBlock int64        `json:"min_block"`
	MaxBlock int64        `json:"max_block"`
	Blocks   *blockCounts `json:"blocks"`
}

// blockCounts are the counts of a sequence's blocks over every instance.
type blockCounts struct {
	Reserved    int64 `json:"reserved"`
	Served      int64 `json:"served"`
	Returned    int64 `json:"returned"`
	Unaccounted int64 `json:"unaccounted"`
}

// statusView is GET /seq/{name}/status: one process's blocks of the sequence.
type statusView struct {
	Name        string     `json:"name"`
	Mode        string     `json:"mode"`
	Current     *heldBlock `json:"current"`
	Next        *heldBlock `json:"next"`
	BlockSize   int64      `json:"block_size"`
	Rate        float64    `json:"rate"`
	LastFetchMs float64    `json:"last_fetch_ms"`
	LastError   string     `json:"last_error"`
	Served      int64      `json:"served"`
	Skipped     int64      `json:"skipped"`
	Returned    int64      `json:"returned"`
}

// heldBlock is the unused rest of a block: First..Last, Remaining values.
type heldBlock struct {
	First     int64 `json:"first"`
	Last      int64 `json:"last"`
	Remaining int64 `json:"remaining"`
}

// held is how many values the process holds unused in its blocks.
func (s statusView) held() int64 {
	var n int64
	for _, b := range []*heldBlock{s.Current, s.Next} {
		if b != nil {
			n += b.Remaining
		}
	}
	return n
}

// putSequence sets name on srv with the admin token and returns it as stored.
func putSequence(t *testing.T, srv *proc.Seqd, name, body string) sequenceView {
	t.Helper()
	var v sequenceView
	do(t, srv.URL(), call{method: http.MethodPut, path: "/seq/" + name, token: adminToken, body: body}).want(t, http.StatusOK, &v)
	return v
}

func getSequence(t *testing.T, srv *proc.Seqd, name string) sequenceView {
	t.Helper()
	var v sequenceView
	do(t, srv.URL(), call{path: "/seq/" + name}).want(t, http.StatusOK, &v)
	return v
}

func getStatus(t *testing.T, srv *proc.Seqd, name string) statusView {
	t.Helper()
	var s statusView
	do(t, srv.URL(), call{path: "/seq/" + name + "/status"}).want(t, http.StatusOK, &s)
	if s.Name != name {
		t.Fatalf("GET /seq/%s/status: %+v", name, s)
	}
	return s
}

// makeCached switches name to cached mode through srv and checks the answer.
func makeCached(t *testing.T, srv *proc.Seqd, name string) {
	t.Helper()
	if v := putSequence(t, srv, name, cachedModeBody); v.Mode != "cached" || v.MinBlock != cachedMinBlock || v.MaxBlock != cachedMaxBlock {
		t.Fatalf("PUT /seq/%s %s: answered %+v", name, cachedModeBody, v)
	}
}

// waitMode waits until every one of seqds says, in its /seq/{name}/status, that it
// serves name in mode: within the mode refresh (1 s) and a round trip of a switch.
func waitMode(t *testing.T, ctx context.Context, name, mode string, seqds ...*proc.Seqd) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	for _, srv := range seqds {
		pollUntil(t, ctx, fmt.Sprintf("%s to serve %s %s", srv.Addr(), name, mode), func() (bool, error) {
			return getStatus(t, srv, name).Mode == mode, nil
		})
	}
}

// byProcess keeps the answers of a run by the seqd process that gave them: a
// restarted instance is a new process, with an order of its own.
type byProcess struct {
	mu   sync.Mutex
	recs map[string]*history.Recorder
}

// add records op as process's, its Client prefixed with the process's name, and
// returns it as recorded.
func (b *byProcess) add(process string, op history.Op) history.Op {
	b.mu.Lock()
	if b.recs == nil {
		b.recs = map[string]*history.Recorder{}
	}
	rec := b.recs[process]
	if rec == nil {
		rec = &history.Recorder{}
		b.recs[process] = rec
	}
	b.mu.Unlock()
	op.Client = process + " " + op.Client
	rec.Add(op)
	return op
}

// check fails t on a value received twice, over all processes, or an answer of a
// process that is not above one the same process gave before it was asked
// (checkPerInstance). It returns the check of all answers together, for its gaps
// and the log.
func (b *byProcess) check(t *testing.T) history.Result {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	return checkPerInstance(t, b.recs)
}

// SIGKILL one of two seqd instances while clients load both with a cached
// sequence, then start it again. No value twice, each process in order, and
// what the run never handed out is no more than the killed process held plus
// what the others hold or skipped at the end.
func TestCachedProcessKilledUnderLoad(t *testing.T) {
	ctx := testContext(t)
	const (
		perSeqd  = 8    // clients on each instance
		perPhase = 3000 // answers from each instance before the kill, and from the restarted one
	)
	c := startCluster(t, 2, 2*perSeqd)
	const name = "cached-killed"
	makeCached(t, c.seqds[0], name)
	waitMode(t, ctx, name, "cached", c.seqds...)
	var answers byProcess
	var seen tally
	fail := &failures{t: t}

	// serve loads process (an instance and its generation) with perSeqd clients.
	// onFailure gets what is not a 200; before the kill there must be none.
	serve := func(srv *proc.Seqd, process string, onFailure func(nextCall)) *load {
		return startLoad(ctx, t, c.http, srv.URL(), name, perSeqd, func(call nextCall) {
			if call.status != http.StatusOK {
				onFailure(call)
				return
			}
			op, err := call.op(name)
			if err != nil {
				fail.errorf("%s: %v", process, err)
				return
			}
			answers.add(process, op)
			seen.add(process)
		})
	}
	mustServe := func(process string) func(nextCall) {
		return func(call nextCall) { fail.errorf("%s: %v, want 200", process, call) }
	}
	survivor, victim := c.seqds[0], c.seqds[1]
	survivorLoad := serve(survivor, "seqd-0", mustServe("seqd-0"))
	failed, allFailed := everyClient(perSeqd)
	var killing atomic.Bool
	victimLoad := serve(victim, "seqd-1", func(call nextCall) {
		switch {
		case !killing.Load():
			fail.errorf("seqd-1 before the kill: %v, want 200", call)
		case !call.connectionError():
			fail.errorf("seqd-1 killed: %v, want a connection error", call)
		}
		failed(call)
	})
	waitFor(t, ctx, seen.reach("seqd-0", perPhase), fmt.Sprintf("%d answers from seqd-0", perPhase))
	waitFor(t, ctx, seen.reach("seqd-1", perPhase), fmt.Sprintf("%d answers from seqd-1", perPhase))

	held := getStatus(t, victim, name)
	if held.Mode != "cached" {
		t.Fatalf("seqd-1 under load on a cached sequence: status %+v", held)
	}
	killing.Store(true)
	victim.Kill()
	waitFor(t, ctx, allFailed, "every client of seqd-1 to see the kill")
	victimLoad.stop()
	waitFor(t, ctx, seen.more("seqd-0", perPhase/4), "answers from seqd-0 after the kill")

	restarted := startSeqdAt(t, seqdURI(), c.db, "SEQD_ADMIN_TOKEN="+adminToken)
	restartedLoad := serve(restarted, "seqd-1'", mustServe("seqd-1'"))
	waitFor(t, ctx, seen.reach("seqd-1'", perPhase), fmt.Sprintf("%d answers from seqd-1 restarted", perPhase))
	if s := getStatus(t, restarted, name); s.Mode != "cached" {
		t.Errorf("seqd-1 restarted: mode %q, want the stored mode, cached", s.Mode)
	}
	survivorLoad.stop()
	restartedLoad.stop()

	res := answers.check(t)
	// What the run never handed out, between the least and greatest value received:
	//   - what seqd-1 held when killed: its blocks' rest when its status was read,
	//     one block more that a fetch may have brought between that read and the
	//     kill, the values of its requests the kill cut off (up to maxCount each),
	//     and what it had skipped;
	//   - what the processes alive at the end hold unused or skipped, one block
	//     more each for a fetch in flight, and the values of their requests the
	//     end of the load cut off.
	killedHeld := held.held() + cachedMaxBlock + perSeqd*maxCount + held.Skipped
	bound := killedHeld
	var others []string
	for _, srv := range []*proc.Seqd{survivor, restarted} {
		s := getStatus(t, srv, name)
		bound += s.held() + s.Skipped + cachedMaxBlock + perSeqd*maxCount
		others = append(others, fmt.Sprintf("%s holds %d and skipped %d", srv.Addr(), s.held(), s.Skipped))
	}
	if res.Gaps > bound {
		t.Errorf("%d values never handed out, more than seqd-1 held when killed (%d) and the others hold, skipped or lost to the end of the load: %d in all",
			res.Gaps, killedHeld, bound)
	}
	if res.Values < 5*bound {
		t.Errorf("%d values in the run, not 5 times the bound on gaps (%d): the run does not test the bound", res.Values, bound)
	}
	t.Logf("SIGKILL of one of 2 seqd under load, cached (blocks %d..%d): %v; seqd-1 held %d (current %+v, next %+v) and had skipped %d when its status was read, "+
		"at the end %s: %d gaps allowed", cachedMinBlock, cachedMaxBlock, res, held.held(), held.Current, held.Next, held.Skipped, strings.Join(others, ", "), bound)
}

// SIGTERM the only seqd of a cached sequence: it gives back what its blocks
// hold, so the next value after a restart is the last one handed out plus one.
func TestCachedProcessCleanStopGivesBack(t *testing.T) {
	ctx := testContext(t)
	const clients = 8
	c := startCluster(t, 1, clients)
	const name = "cached-stopped"
	srv := c.seqds[0]
	makeCached(t, srv, name)
	var answers byProcess
	fail := &failures{t: t}
	// Clients that stop asking after 1000 answers in all, each letting its request
	// in flight finish: a request cut off could be handed values after the last
	// answer seen here, and the test must know the last value handed out.
	var answered atomic.Int64
	var clientsDone sync.WaitGroup
	for client := range clients {
		clientsDone.Go(func() {
			for answered.Add(1) <= 1000 {
				call := callNext(ctx, c.http, srv.URL(), name)
				call.client = client
				op, err := call.op(name)
				if call.status != http.StatusOK || err != nil {
					fail.errorf("%v (%v), want 200", call, err)
					return
				}
				answers.add("seqd", op)
			}
		})
	}
	clientsDone.Wait()
	// Then requests one at a time until seqd holds values to give back: the last of
	// them is the last value handed out.
	var last nextReply
	pollUntil(t, ctx, "seqd to hold values after its last answer", func() (bool, error) {
		start := time.Now()
		do(t, srv.URL(), call{path: "/seq/" + name + "/next"}).want(t, http.StatusOK, &last)
		answers.add("seqd", history.Op{Client: "alone", Start: start, End: time.Now(), First: last.Value, Last: last.Value})
		return getStatus(t, srv, name).held() > 0, nil
	})

	if err := srv.Stop(ctx); err != nil {
		t.Fatalf("SIGTERM: %v\n%s", err, srv.Output())
	}
	if err := srv.Wait(ctx); err != nil {
		t.Errorf("seqd exited with %v after SIGTERM, want 0\n%s", err, srv.Output())
	}
	restarted := startSeqdAt(t, seqdURI(), c.db, "SEQD_ADMIN_TOKEN="+adminToken)
	stored := getSequence(t, restarted, name)
	if stored.Blocks == nil {
		stored.Blocks = &blockCounts{}
	}
	if stored.Mode != "cached" || stored.Value != last.Value || stored.Blocks.Returned <= 0 {
		t.Errorf("after SIGTERM: GET /seq/%s = %+v, want mode cached, value %d (the last handed out) and blocks.returned > 0",
			name, stored, last.Value)
	}
	var next nextReply
	do(t, restarted.URL(), call{path: "/seq/" + name + "/next"}).want(t, http.StatusOK, &next)
	if next.Value != last.Value+1 {
		t.Errorf("first value after the restart: %d, want %d, the last value handed out before the stop plus one", next.Value, last.Value+1)
	}
	res := answers.check(t)
	t.Logf("clean stop of the only seqd, cached: %v; stored after the stop: value %d, blocks %+v; the next value %d",
		res, stored.Value, *stored.Blocks, next.Value)
}

// With the store failing every findAndModify, a cached instance serves exactly
// the values its blocks hold, then answers 503 with Retry-After within its
// request deadline; once the store is back, it serves again.
func TestCachedProcessStoreDown(t *testing.T) {
	be.RequireFailCommand(t)
	for _, f := range []struct {
		name string
		data bson.D
	}{
		{"closeConnection", bson.D{{Key: "closeConnection", Value: true}}},
		{"ShutdownInProgress", bson.D{{Key: "errorCode", Value: 91}}},
	} {
		t.Run(f.name, func(t *testing.T) { cachedStoreDown(t, f.data) })
	}
}

func cachedStoreDown(t *testing.T, fault bson.D) {
	ctx := testContext(t)
	c := startCluster(t, 1, 1, "SEQD_TIMEOUT="+failpointTimeout.String())
	srv := c.seqds[0]
	const name = "cached-store-down"
	// One block size, so that what seqd holds once it has a next block stays put.
	if v := putSequence(t, srv, name, `{"mode":"cached","min_block":50,"max_block":50}`); v.Mode != "cached" {
		t.Fatalf("PUT mode cached: %+v", v)
	}
	next := func() (reply, time.Duration) {
		start := time.Now()
		r := do(t, srv.URL(), call{path: "/seq/" + name + "/next"})
		return r, time.Since(start)
	}
	var last int64
	value := func(r reply) int64 {
		t.Helper()
		var n nextReply
		r.want(t, http.StatusOK, &n)
		if n.Value <= last {
			t.Fatalf("value %d after %d from the same seqd", n.Value, last)
		}
		last = n.Value
		return n.Value
	}

	// Warm up: take values until the prefetch has brought the next block.
	var warm statusView
	pollUntil(t, ctx, "seqd to hold a next block", func() (bool, error) {
		r, _ := next()
		value(r)
		warm = getStatus(t, srv, name)
		return warm.Next != nil && warm.Next.Remaining > 0, nil
	})
	var want []int64 // the values seqd holds, in the order it must hand them out
	for _, b := range []*heldBlock{warm.Current, warm.Next} {
		if b == nil || b.Last-b.First+1 != b.Remaining {
			t.Fatalf("status %+v: blocks not as documented", warm)
		}
		for v := b.First; v <= b.Last; v++ {
			want = append(want, v)
		}
	}

	fp := be.FailCommand(t, "alwaysOn", append(bson.D{
		{Key: "failCommands", Value: bson.A{"findAndModify"}},
		{Key: "appName", Value: seqdAppName},
		{Key: "namespace", Value: c.db + ".counters"},
	}, fault...))
	for i, v := range want {
		r, latency := next()
		if r.status != http.StatusOK {
			t.Fatalf("store failing, value %d of the %d held: %d %s after %v, want 200 with %d", i+1, len(want), r.status, r.body, latency, v)
		}
		if got := value(r); got != v {
			t.Fatalf("store failing, value %d of the %d held: %d, want %d", i+1, len(want), got, v)
		}
		if latency > failpointTimeout+failpointMargin {
			t.Errorf("store failing, value %d of the %d held: 200 after %v, want it within SEQD_TIMEOUT=%v plus %v",
				i+1, len(want), latency, failpointTimeout, failpointMargin)
		}
	}
	const failing = 5
	var slowest time.Duration
	for i := range failing {
		r, latency := next()
		if err := checkUnavailable(r.status, r.header, r.body); err != nil {
			t.Fatalf("store failing, request %d after the held values: %v (%s)", i+1, err, r.body)
		}
		if latency > failpointTimeout+failpointMargin {
			t.Errorf("503 after %v, want it within SEQD_TIMEOUT=%v plus %v", latency, failpointTimeout, failpointMargin)
		}
		slowest = max(slowest, latency)
	}
	if err := fp.WaitEntered(ctx, 1); err != nil {
		t.Fatal(err)
	}
	// The status is read from the store. On a replica set the driver forgets
	// the server at a network error or ShutdownInProgress until its monitor's
	// next hello (at once after a network error, up to heartbeatFrequencyMS
	// after ShutdownInProgress), and the read answers 503 meanwhile. The driver
	// also retries the failing fetch until its deadline, so last_error shows
	// once that fetch has ended, not at the first failed command.
	var s statusView
	pollUntil(t, ctx, "the status with the store failing to show last_error", func() (bool, error) {
		r := do(t, srv.URL(), call{path: "/seq/" + name + "/status"})
		if r.status != http.StatusOK {
			return false, checkUnavailable(r.status, r.header, r.body)
		}
		r.want(t, http.StatusOK, &s)
		return s.LastError != "", nil
	})

	if err := fp.Off(ctx); err != nil {
		t.Fatal(err)
	}
	pollUntil(t, ctx, "a 200 after the store is back", func() (bool, error) {
		r, latency := next()
		if r.status == http.StatusOK {
			value(r)
			return true, nil
		}
		if err := checkUnavailable(r.status, r.header, r.body); err != nil || latency > failpointTimeout+failpointMargin {
			t.Fatalf("store back: %d %s after %v (%v), want 200 or a fast 503", r.status, r.body, latency, err)
		}
		return false, nil
	})
	for range 2 * len(want) { // past the blocks of before: new ones are fetched
		r, _ := next()
		value(r)
	}
	t.Logf("store failing (%v): the %d values held (%d..%d) served, then %d × 503 (slowest %v); after: up to %d",
		fault, len(want), want[0], want[len(want)-1], failing, slowest.Round(10*time.Microsecond), last)
}

// An operator switches a busy sequence between strict and cached several times
// while clients load two instances: every answer is a 200, or, while a switch to
// strict drains, a 503 draining whose Retry-After is within the lease; no value
// twice, each instance's answers in order, and each switch reaches both
// instances.
func TestCachedProcessModeSwitches(t *testing.T) {
	ctx := testContext(t)
	const clients = 16
	const lease = 2 * time.Second
	c := startCluster(t, 2, clients, "SEQD_BLOCK_LEASE="+lease.String(), "SEQD_MODE_REFRESH=200ms")
	const name = "cached-switched"
	var answers byProcess
	var seen tally
	var draining atomic.Int64
	fail := &failures{t: t}
	stop := c.load(ctx, name, clients, func(instance int, call nextCall) {
		process := fmt.Sprint("seqd-", instance)
		if code, _, err := apiError(call.body); call.status == http.StatusServiceUnavailable && err == nil && code == "draining" {
			if s, err := strconv.Atoi(call.header.Get("Retry-After")); err != nil || s < 1 || time.Duration(s)*time.Second > lease+time.Second {
				fail.errorf("%s: %v with Retry-After %q, want 1 to %v", process, call, call.header.Get("Retry-After"), lease+time.Second)
			}
			draining.Add(1)
			return
		}
		if call.status != http.StatusOK {
			fail.errorf("%s: %v, want 200", process, call)
			return
		}
		op, err := call.op(name)
		if err != nil {
			fail.errorf("%s: %v", process, err)
			return
		}
		answers.add(process, op)
		seen.add(process)
	})
	modes := []struct{ mode, body string }{
		{"strict", ""}, // the default, before any switch
		{"cached", cachedModeBody},
		{"strict", `{"mode":"strict"}`},
		{"cached", `{"mode":"cached"}`},
		{"strict", `{"mode":"strict"}`},
		{"cached", cachedModeBody},
		{"strict", `{"mode":"strict"}`},
	}
	const perPhase = 300 // answers from each instance in each mode, once both have it
	var took []string
	for i, m := range modes {
		if m.body != "" {
			start := time.Now()
			if v := putSequence(t, c.seqds[i%2], name, m.body); v.Mode != m.mode {
				t.Fatalf("PUT %s: answered %+v", m.body, v)
			}
			waitMode(t, ctx, name, m.mode, c.seqds...)
			took = append(took, fmt.Sprintf("%s in %v", m.mode, time.Since(start).Round(time.Millisecond)))
		}
		for k := range c.seqds {
			process := fmt.Sprint("seqd-", k)
			waitFor(t, ctx, seen.more(process, perPhase), fmt.Sprintf("%d answers from %s in mode %s", perPhase, process, m.mode))
		}
	}
	stop()
	if v := getSequence(t, c.seqds[0], name); v.Mode != "strict" || v.Blocks == nil || v.Blocks.Reserved == 0 {
		t.Errorf("GET /seq/%s after the switches: %+v, want strict, with the blocks reserved while cached", name, v)
	}
	res := answers.check(t)
	t.Logf("2 seqd, %d clients, %d switches (%s): %v; %d × 503 draining", clients, len(modes)-1, strings.Join(took, ", "), res, draining.Load())
}
