//go:build integration

package integration

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/seqd/seqd/internal/history"
	"github.com/seqd/seqd/internal/proc"
)

// Block leases as processes see them. An instance serves a cached sequence from
// its blocks only while its lease lasts: the send time of the latest request that
// confirmed the sequence cached, plus --block-lease. A switch to strict drains:
// no instance hands out a value until every lease has run out (the longest lease
// × 1.02 from when an instance saw the drain), and from then on every value is a
// strict write. So, with one instance cut off from the store while another
// switches the sequence:
//
//   - an answer that starts after a strict answer ended holds larger values, from
//     whichever instance;
//   - the cut-off instance serves from its blocks until its lease runs out, and
//     no longer, then answers 503 with Retry-After within its request deadline;
//   - once the partition heals, both instances serve again, above everything
//     handed out before;
//   - no value twice.

// seqdTimeout is SEQD_TIMEOUT's default: every answer, 200 or 503, comes within it.
const seqdTimeout = 2 * time.Second

// answerMargin is what an answer may take beyond seqdTimeout: the HTTP round
// trip and a loaded machine.
const answerMargin = time.Second

// leaseBlock is the block size of the partitioned sequence, fixed: large enough
// that what the cut-off instance holds outlasts its lease at its clients' rate, so
// that only the lease can stop it serving.
const leaseBlock = 1000

// leaseView is GET /seq/{name} and the answer to PUT /seq/{name}, with when
// strict values start while the sequence leaves cached mode.
type leaseView struct {
	sequenceView
	StrictFrom *time.Time `json:"strict_from"`
}

func getLeaseView(t *testing.T, srv *proc.Seqd, name string) leaseView {
	t.Helper()
	var v leaseView
	do(t, srv.URL(), call{path: "/seq/" + name}).want(t, http.StatusOK, &v)
	return v
}

// instanceCall is an outcome of a request to one instance, A or B.
type instanceCall struct {
	instance string
	nextCall
}

func (c instanceCall) end() time.Time { return c.start.Add(c.latency) }

// leaseRun records every outcome of a run on instances A and B and the times of
// its events, and counts outcomes so that the test can wait for them.
type leaseRun struct {
	lease time.Duration
	seen  tally // "A", "B": 200s; "A healed", "B healed": 200s that started after Heal

	mu            sync.Mutex
	calls         []instanceCall
	cutAt, healAt time.Time
	pastLease     func(nextCall) // told of B's failures that started past its lease
}

func (r *leaseRun) add(instance string, call nextCall) {
	r.mu.Lock()
	r.calls = append(r.calls, instanceCall{instance, call})
	cutAt, healAt, pastLease := r.cutAt, r.healAt, r.pastLease
	r.mu.Unlock()
	if call.status == http.StatusOK {
		r.seen.add(instance)
		if !healAt.IsZero() && call.start.After(healAt) {
			r.seen.add(instance + " healed")
		}
		return
	}
	if instance == "B" && pastLease != nil && healAt.IsZero() && call.start.After(cutAt.Add(r.lease+time.Second)) {
		pastLease(call)
	}
}

// The operator switches a cached sequence to strict through instance A while
// instance B, loaded like A, is cut off from the store; then the partition
// heals. Once with short leases, once with the defaults.
func TestLeaseSwitchPartitioned(t *testing.T) {
	for _, tc := range []struct {
		name           string
		lease, refresh time.Duration
		env            []string
	}{
		{"lease=2s", 2 * time.Second, 200 * time.Millisecond, []string{"SEQD_BLOCK_LEASE=2s", "SEQD_MODE_REFRESH=200ms"}},
		{"defaults", 15 * time.Second, time.Second, nil},
	} {
		t.Run(tc.name, func(t *testing.T) { leaseSwitchPartitioned(t, tc.lease, tc.refresh, tc.env...) })
	}
}

func leaseSwitchPartitioned(t *testing.T, lease, refresh time.Duration, env ...string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	const (
		aClients = 4
		bClients = 2
		// B's clients wait this long between requests: B serves about 30
		// values a second, and holds at least 0.9 × leaseBlock at the cut.
		bPace  = 150 * time.Millisecond
		healed = 20 // answers from each instance after Heal
	)
	relay, relayURI := startStoreRelay(t)
	db := be.Database(t).Name()
	env = append([]string{"SEQD_ADMIN_TOKEN=" + adminToken}, env...)
	a := startSeqdAt(t, seqdURI(), db, env...)
	b := startSeqdAt(t, relayURI, db, env...)
	t.Cleanup(relay.Heal) // before B stops, if the test ends early: its give-back needs the store
	hc := loadClient(t, aClients+bClients)

	const name = "lease-partitioned"
	if v := putSequence(t, a, name, fmt.Sprintf(`{"mode":"cached","min_block":%d,"max_block":%d}`, leaseBlock, leaseBlock)); v.Mode != "cached" {
		t.Fatalf("PUT mode cached: answered %+v", v)
	}
	run := &leaseRun{lease: lease}
	aLoad := startLoad(ctx, t, hc, a.URL(), name, aClients, func(call nextCall) { run.add("A", call) })
	bLoad := startLoad(ctx, t, hc, b.URL(), name, bClients, func(call nextCall) {
		run.add("B", call)
		select { // pacing B's client, not waiting for anything
		case <-ctx.Done():
		case <-time.After(bPace):
		}
	})
	waitMode(t, ctx, name, "cached", a, b)
	waitFor(t, ctx, run.seen.reach("A", 300), "300 answers from A")
	waitFor(t, ctx, run.seen.reach("B", 30), "30 answers from B")

	statusAt := time.Now()
	held := getStatus(t, b, name)
	if held.Mode != "cached" || held.held() == 0 {
		t.Fatalf("B before the cut: status %+v, want cached with values held", held)
	}
	pastLease, allPastLease := everyClient(bClients)
	run.mu.Lock()
	run.cutAt, run.pastLease = time.Now(), pastLease
	cutAt := run.cutAt
	run.mu.Unlock()
	relay.Cut()

	putStart := time.Now()
	var put leaseView
	do(t, a.URL(), call{method: http.MethodPut, path: "/seq/" + name, token: adminToken, body: `{"mode":"strict"}`}).
		want(t, http.StatusOK, &put)
	putEnd := time.Now()
	drain := lease + lease/50
	if put.Mode != "strict" || put.StrictFrom == nil {
		t.Fatalf("PUT mode strict: answered %+v, strict_from %v; want mode strict and strict_from", put.sequenceView, put.StrictFrom)
	}
	strictFrom := *put.StrictFrom
	// Wall clocks of one machine: seqd's and the test's.
	if strictFrom.Before(putStart.Add(drain).Add(-time.Millisecond)) || strictFrom.After(putEnd.Add(drain)) {
		t.Errorf("PUT mode strict: strict_from %v, want the PUT's time (%v … %v) + %v",
			strictFrom, putStart.Round(0), putEnd.Round(0), drain)
	}
	if took := putEnd.Sub(putStart); took > time.Second {
		t.Errorf("PUT mode strict answered after %v, want at once: it does not wait for the drain", took)
	}
	if time.Now().Before(strictFrom.Add(-100 * time.Millisecond)) {
		if v := getLeaseView(t, a, name); v.Mode != "strict" || v.StrictFrom == nil || !v.StrictFrom.Equal(strictFrom) {
			t.Errorf("GET /seq/%s while draining: %+v, strict_from %v; want strict with strict_from %v", name, v.sequenceView, v.StrictFrom, strictFrom)
		}
	}

	waitFor(t, ctx, allPastLease, "every client of B to fail past B's lease")
	run.mu.Lock()
	run.healAt = time.Now()
	healAt := run.healAt
	run.mu.Unlock()
	relay.Heal()
	waitFor(t, ctx, run.seen.reach("A healed", healed), fmt.Sprintf("%d answers from A after Heal", healed))
	waitFor(t, ctx, run.seen.reach("B healed", healed), fmt.Sprintf("%d answers from B after Heal", healed))
	aLoad.stop()
	bLoad.stop()
	if v := getLeaseView(t, a, name); v.Mode != "strict" || v.StrictFrom != nil {
		t.Errorf("GET /seq/%s after the drain: %+v, strict_from %v; want strict without strict_from", name, v.sequenceView, v.StrictFrom)
	}

	checkSwitch(t, name, run, switchTimes{
		lease: lease, refresh: refresh, drain: drain, statusAt: statusAt, held: held.held(),
		cutAt: cutAt, putStart: putStart, putEnd: putEnd, strictFrom: strictFrom, healAt: healAt,
	})
}

// switchTimes are the events of a partitioned switch, and what B held at the cut.
type switchTimes struct {
	lease, refresh, drain           time.Duration
	statusAt                        time.Time // when B's status was read
	held                            int64     // the values B held then
	cutAt, putStart, putEnd, healAt time.Time
	strictFrom                      time.Time // as the PUT answered it: when the drain ends
}

// checkSwitch checks every outcome of a partitioned switch: (a) an answer that
// starts after a strict answer ended holds larger values; (b) B, cut off, serves
// from its blocks until its lease runs out and no longer, then answers 503
// within its request deadline; (c) after Heal both instances serve values above
// everything answered before; (d) no value twice, each process in order. Along
// the way: A hands out no value during the drain, and its 503s say draining with
// a Retry-After that reaches strict_from.
func checkSwitch(t *testing.T, name string, run *leaseRun, ev switchTimes) {
	t.Helper()
	run.mu.Lock()
	calls := slices.Clone(run.calls)
	run.mu.Unlock()
	fail := &failures{t: t}
	var (
		answers            byProcess
		all, strict        []history.Op
		beforeHeal, healOp []history.Op
		aDraining, bFailed int
		bSlowest           time.Duration // B's slowest 503
		bLastBlock         time.Time     // the start of B's last 200 that ended before Heal
		bHealed            time.Time     // the end of B's first 200 that started after Heal
		bServedAfterStatus int64         // values B handed out from the status read to Heal
		firstStrictEnd     time.Time     // when an answer of A first showed the drain over
	)
	// A's answers that started after the PUT returned are strict: A retired its
	// blocks during the PUT. The first of them to end shows the drain over.
	for _, c := range calls {
		if c.instance == "A" && c.status == http.StatusOK && c.start.After(ev.putEnd) &&
			(firstStrictEnd.IsZero() || c.end().Before(firstStrictEnd)) {
			firstStrictEnd = c.end()
		}
	}
	if firstStrictEnd.IsZero() {
		t.Fatal("no 200 from A after the PUT")
	}
	for _, c := range calls {
		if c.err != nil {
			fail.errorf("%s: %v, want an answer", c.instance, c.nextCall)
			continue
		}
		if c.status != http.StatusOK {
			switch {
			case c.instance == "A" && c.start.Before(ev.putStart), c.instance == "B" && c.start.Before(ev.cutAt):
				fail.errorf("%s before the fault: %v, want 200", c.instance, c.nextCall)
			case c.instance == "A":
				aDraining++
				checkDraining(fail, c, ev.strictFrom, ev.drain)
			case c.end().Before(ev.healAt):
				bFailed++
				if err := checkUnavailable(c.status, c.header, c.body); err != nil {
					fail.errorf("B cut off: %v: %v", c.nextCall, err)
				}
			default: // reached the store after Heal: the drain may not be over in B's view
				if code, _, _ := apiError(c.body); code == "draining" {
					checkDraining(fail, c, time.Time{}, ev.drain)
				} else if err := checkUnavailable(c.status, c.header, c.body); err != nil {
					fail.errorf("B healed: %v: %v", c.nextCall, err)
				}
			}
			if c.instance == "B" {
				bSlowest = max(bSlowest, c.latency)
			}
			if c.latency > seqdTimeout+answerMargin {
				fail.errorf("%s: %v: want an answer within SEQD_TIMEOUT=%v + %v", c.instance, c.nextCall, seqdTimeout, answerMargin)
			}
			continue
		}
		op, err := c.op(name)
		if err != nil {
			fail.errorf("%s: %v", c.instance, err)
			continue
		}
		op = answers.add(c.instance, op)
		all = append(all, op)
		if c.start.After(ev.healAt) {
			healOp = append(healOp, op)
			if c.instance == "B" && (bHealed.IsZero() || c.end().Before(bHealed)) {
				bHealed = c.end()
			}
		} else if c.end().Before(ev.healAt) {
			beforeHeal = append(beforeHeal, op)
		}
		if c.instance == "A" && c.start.After(ev.putEnd) || c.start.After(firstStrictEnd) {
			strict = append(strict, op)
		}
		if c.instance == "A" && c.start.After(ev.putEnd) && c.end().Before(ev.strictFrom.Add(-10*time.Millisecond)) {
			fail.errorf("A: %v: a value during the drain, which ends at %v", c.nextCall, ev.strictFrom)
		}
		if c.instance == "B" && c.end().Before(ev.healAt) {
			if c.start.After(bLastBlock) {
				bLastBlock = c.start
			}
			if c.end().After(ev.statusAt) {
				bServedAfterStatus += op.Last - op.First + 1
			}
		}
	}

	// (a) Strict answers bind every answer that starts after them.
	for _, v := range history.CheckAbove(strict, all) {
		fail.errorf("after a strict answer: %s", v)
	}
	// (b) B serves from its blocks while its lease lasts, and no longer.
	if latest := ev.cutAt.Add(ev.lease + time.Second); bLastBlock.After(latest) {
		t.Errorf("B, cut off: its last 200 before Heal started %v after the cut, past its lease (%v) + 1s",
			bLastBlock.Sub(ev.cutAt).Round(time.Millisecond), ev.lease)
	}
	if bServedAfterStatus+maxCount >= ev.held {
		t.Errorf("B handed out %d values after its status read, and held %d then: it may have run out before its lease did, so the run does not test the lease",
			bServedAfterStatus, ev.held)
	} else if earliest := ev.cutAt.Add(ev.lease - 2*ev.refresh - 500*time.Millisecond); bLastBlock.Before(earliest) {
		t.Errorf("B, cut off with %d values held: its last 200 started %v after the cut, want it to serve them until its lease (%v from its last confirmation, at most %v before the cut) runs out",
			ev.held, bLastBlock.Sub(ev.cutAt).Round(time.Millisecond), ev.lease, ev.refresh)
	}
	// (c) After Heal, both serve values above everything answered before.
	for _, v := range history.CheckAbove(beforeHeal, healOp) {
		fail.errorf("after Heal: %s", v)
	}
	// (d) No value twice; each process's answers in order.
	res := answers.check(t)
	ms := func(at time.Time) time.Duration { return at.Sub(ev.cutAt).Round(time.Millisecond) }
	t.Logf("lease %v, refresh %v: %v; times from the cut: B held %d, handed out %d more, last 200 at +%v, %d × 503 until Heal at +%v (slowest %v); "+
		"PUT strict at +%v took %v, strict_from +%v, first strict answer ended +%v; A: %d × 503 draining; after Heal: %d answers, B's first ended +%v",
		ev.lease, ev.refresh, res, ev.held, bServedAfterStatus, ms(bLastBlock), bFailed, ms(ev.healAt), bSlowest.Round(time.Millisecond),
		ms(ev.putStart), ev.putEnd.Sub(ev.putStart).Round(time.Millisecond), ev.strictFrom.Sub(ev.cutAt.Round(0)).Round(time.Millisecond), ms(firstStrictEnd),
		aDraining, len(healOp), ms(bHealed))
}

// checkDraining checks a 503 draining: Retry-After whole seconds, at least 1 and
// at most the drain; with strictFrom known, the call came before it and
// Retry-After reaches it.
func checkDraining(fail *failures, c instanceCall, strictFrom time.Time, drain time.Duration) {
	code, _, err := apiError(c.body)
	if c.status != http.StatusServiceUnavailable || err != nil || code != "draining" {
		fail.errorf("%s while draining: %v (%v), want 503 draining", c.instance, c.nextCall, err)
		return
	}
	ra, err := strconv.Atoi(c.header.Get("Retry-After"))
	wait := time.Duration(ra) * time.Second
	if err != nil || ra < 1 || wait > drain+time.Second {
		fail.errorf("%s: %v with Retry-After %q, want 1 to %v", c.instance, c.nextCall, c.header.Get("Retry-After"), drain+time.Second)
		return
	}
	if strictFrom.IsZero() {
		return
	}
	if left := strictFrom.Sub(c.start); left < -500*time.Millisecond || wait < strictFrom.Sub(c.end())-time.Second || wait > left+2*time.Second {
		fail.errorf("%s: %v with Retry-After %ds, %v before strict_from: want it until strict_from, rounded up",
			c.instance, c.nextCall, ra, left.Round(time.Millisecond))
	}
}

// An equal Set between a block fetch and a clean stop: the instance holds the
// unused tail of its blocks, which ends at the stored value, when the operator
// sets that same value and switches the sequence to strict. The give-back must
// not take the sequence below the value set: the next value after a restart is
// above it.
func TestLeaseGiveBackAfterSet(t *testing.T) {
	ctx := testContext(t)
	const lease = 2 * time.Second
	env := []string{"SEQD_ADMIN_TOKEN=" + adminToken, "SEQD_BLOCK_LEASE=" + lease.String(), "SEQD_MODE_REFRESH=200ms"}
	db := be.Database(t).Name()
	srv := startSeqdAt(t, seqdURI(), db, env...)
	const name = "lease-give-back"
	if v := putSequence(t, srv, name, `{"mode":"cached","min_block":10,"max_block":10}`); v.Mode != "cached" {
		t.Fatalf("PUT mode cached: answered %+v", v)
	}
	var first nextReply
	do(t, srv.URL(), call{path: "/seq/" + name + "/next"}).want(t, http.StatusOK, &first)
	// Taking a value of a block of 10 fetches the next block (prefetch at 10%);
	// once it is in, nothing is in flight and the held tail ends at the stored value.
	var st statusView
	var stored sequenceView
	pollUntil(t, ctx, "seqd to hold two blocks", func() (bool, error) {
		st, stored = getStatus(t, srv, name), getSequence(t, srv, name)
		return st.Next != nil && st.Next.Last == stored.Value, nil
	})
	set := stored.Value
	if v := putSequence(t, srv, name, fmt.Sprintf(`{"value":%d}`, set)); v.Value != set || v.Mode != "cached" {
		t.Fatalf("PUT value %d (equal): answered %+v", set, v)
	}
	var put leaseView
	do(t, srv.URL(), call{method: http.MethodPut, path: "/seq/" + name, token: adminToken, body: `{"mode":"strict"}`}).
		want(t, http.StatusOK, &put)
	if put.Mode != "strict" || put.StrictFrom == nil || put.Value < set {
		t.Errorf("PUT mode strict: answered %+v, strict_from %v; want strict, strict_from, value at least %d", put.sequenceView, put.StrictFrom, set)
	}
	if err := srv.Stop(ctx); err != nil {
		t.Fatalf("SIGTERM: %v\n%s", err, srv.Output())
	}
	if err := srv.Wait(ctx); err != nil {
		t.Errorf("seqd exited with %v after SIGTERM, want 0\n%s", err, srv.Output())
	}

	restarted := startSeqdAt(t, seqdURI(), db, env...)
	after := getLeaseView(t, restarted, name)
	if after.Value < set {
		t.Errorf("after the stop: GET /seq/%s = %+v: value %d, below %d, the value set: a give-back went below it", name, after.sequenceView, after.Value, set)
	}
	if after.Blocks != nil && after.Blocks.Returned != 0 {
		t.Errorf("after the stop: blocks %+v, want nothing returned: the value set, %d, ends the tail held", *after.Blocks, set)
	}
	var next nextReply
	var draining int
	pollUntil(t, ctx, "a 200 once the drain is over", func() (bool, error) {
		start := time.Now()
		r := do(t, restarted.URL(), call{path: "/seq/" + name + "/next"})
		if r.status == http.StatusOK {
			r.want(t, http.StatusOK, &next)
			return true, nil
		}
		c := instanceCall{"restarted", nextCall{method: http.MethodGet, count: 1, start: start, latency: time.Since(start), status: r.status, header: r.header, body: r.body}}
		checkDraining(&failures{t: t}, c, time.Time{}, lease+lease/50)
		draining++
		return false, nil
	})
	if next.Value <= set {
		t.Errorf("first value after the restart: %d, want above %d, the value set", next.Value, set)
	}
	if v := getLeaseView(t, restarted, name); v.Mode != "strict" || v.StrictFrom != nil {
		t.Errorf("GET /seq/%s after the drain: %+v, strict_from %v; want strict without strict_from", name, v.sequenceView, v.StrictFrom)
	}
	t.Logf("took %d, held %+v and %+v; set %d; after the stop: value %d, blocks %+v; %d × 503 draining, then %d",
		first.Value, st.Current, st.Next, set, after.Value, after.Blocks, draining, next.Value)
}
