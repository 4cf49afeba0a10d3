//go:build integration

package integration

// Hostile tests of cached mode's leases, drains and fenced give-backs
// (commit 23f86e6). Each TestAttack states the promise it attacks; those that
// fail are specifications of what the code does not yet keep.
//
//	cd integration && go test -tags integration -count=1 -run TestAttack -v -timeout 20m .

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/seqd/seqd"
	"github.com/seqd/seqd/blocks"
	"github.com/seqd/seqd/counters"
	"github.com/seqd/seqd/integration/backend"
	"github.com/seqd/seqd/internal/history"
)

// atkShort are short leases, so that drains take a fraction of a second.
func atkShort(b blocks.Options) counters.Options {
	return counters.Options{Blocks: b, BlockLease: 300 * time.Millisecond, ModeRefresh: 50 * time.Millisecond}
}

// atkFailFinds makes every find of the clients named app fail (its mode refresh
// cannot confirm, nor learn of a switch), until the test ends.
func atkFailFinds(t *testing.T, db string, app string) *backendFail {
	t.Helper()
	return be.FailCommand(t, "alwaysOn", bson.D{
		{Key: "failCommands", Value: bson.A{"find"}},
		{Key: "namespace", Value: db + "." + counters.CounterCollection},
		{Key: "appName", Value: app},
		{Key: "errorCode", Value: 8},
	})
}

type backendFail = backend.FailCommand

// atkRec records answers by instance, the Client up to its first '-' (each in
// real-time order of its own), and which of them are known to be strict.
type atkRec struct {
	byProcess
	all, strict history.Recorder
}

func (r *atkRec) add(client string, start, end time.Time, rg counters.Range, strict bool) {
	inst, caller, _ := strings.Cut(client, "-")
	op := r.byProcess.add(inst, history.Op{Client: caller, Start: start, End: end, First: rg.First, Last: rg.Last})
	r.all.Add(op)
	if strict {
		r.strict.Add(op)
	}
}

// atkCheck checks the recorded answers: no value twice, each instance in
// real-time order, and strict's promise: an answer that starts after a strict
// answer ended holds larger values.
func atkCheck(t *testing.T, r *atkRec) {
	t.Helper()
	all, strict := r.all.Ops(), r.strict.Ops()
	if len(all) < 20 {
		for _, o := range all {
			t.Logf("%s: %d…%d, %v…%v", o.Client, o.First, o.Last, o.Start.Format("15:04:05.000"), o.End.Format("15:04:05.000"))
		}
	}
	res := r.check(t)
	broken := history.CheckAbove(strict, all)
	for _, b := range broken[:min(len(broken), 5)] {
		t.Errorf("strict order broken: %s", b)
	}
	if len(broken) > 0 {
		t.Errorf("%d answers started after a strict answer ended and hold a value not above it", len(broken))
	}
	t.Logf("%d answers (%d known strict): %s", len(all), len(strict), res)
}

// atkLoad is callers that ask for values of "s" over and over, each call within
// timeout, and record their answers in rec, until stop or the test's end.
type atkLoad struct {
	t       *testing.T
	rec     *atkRec
	timeout time.Duration
	faults  bool          // the test injects faults: an error is an unknown outcome, not a failure
	pause   time.Duration // between a caller's calls

	done     chan struct{}
	stopOnce sync.Once
	wg       sync.WaitGroup
}

func newAtkLoad(t *testing.T, rec *atkRec, timeout time.Duration) *atkLoad {
	l := &atkLoad{t: t, rec: rec, timeout: timeout, done: make(chan struct{})}
	t.Cleanup(l.stop)
	return l
}

// callers starts n callers of c, recorded as id-0 … id-(n-1), each asking for
// one value at a time.
func (l *atkLoad) callers(ctx context.Context, id string, c *counters.Counter, n int) {
	for g := range n {
		l.caller(ctx, fmt.Sprintf("%s-%d", id, g), c, func(int) int64 { return 1 })
	}
}

// caller starts a caller of c, recorded as client, whose i-th call asks for
// count(i) values. Unless the test injects faults, an error atkExpected does
// not allow fails the test and ends the caller.
func (l *atkLoad) caller(ctx context.Context, client string, c *counters.Counter, count func(i int) int64) {
	l.wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-l.done:
				return
			default:
			}
			cctx, cancel := context.WithTimeout(ctx, l.timeout)
			start := time.Now()
			r, err := c.NextN(cctx, "s", count(i))
			end := time.Now()
			cancel()
			if err == nil {
				l.rec.add(client, start, end, r, false)
			} else if !l.faults && !atkExpected(err) {
				l.t.Errorf("%s: %v", client, err)
				return
			}
			time.Sleep(l.pause)
		}
	})
}

// stop ends the callers and waits for them.
func (l *atkLoad) stop() {
	l.stopOnce.Do(func() { close(l.done) })
	l.wg.Wait()
}

// atkStrictFor has a, which switched "s" to strict, ask for one value after
// another for d, and records them as a-strict, known strict.
func atkStrictFor(t *testing.T, ctx context.Context, rec *atkRec, a *counters.Counter, d time.Duration) {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); {
		start := time.Now()
		r, err := a.NextN(ctx, "s", 1)
		if err != nil {
			t.Fatalf("a's strict Next: %v", err)
		}
		rec.add("a-strict", start, time.Now(), r, true)
	}
}

// Promise 1. Instance b learned that the name is cached (its allocator has
// never fetched, so it is exempt from the lease) and sends its first block
// fetch; the store applies it at once, but the answer is slow to come back.
// Meanwhile a switches the name to strict, waits out the drain and hands out a
// strict value. A caller of b that starts after that strict answer ended
// finds b's allocator still exempt (nothing fetched yet), waits for the fetch
// in flight, and is served from a block reserved before the switch: a smaller
// value than the strict answer that ended before it began. b's mode refresh
// does not help: blind, it reads nothing; over the slow link, its find read
// before the switch comes back as late as the fetch.
func TestAttackFirstFetchAnswerOutlivesDrain(t *testing.T) {
	// blind: b's finds fail too, so its mode refresh cannot see the switch;
	// slow link only: b's refresh runs, but its answers are as slow as the fetch's.
	for _, blind := range []bool{true, false} {
		t.Run(map[bool]string{true: "blind", false: "slow link only"}[blind], func(t *testing.T) {
			attackFirstFetch(t, blind)
		})
	}
}

func attackFirstFetch(t *testing.T, blind bool) {
	be.RequireFailCommand(t)
	ctx := testContext(t)
	name := be.Database(t).Name()
	relay, uri := startStoreRelay(t)
	opts := atkShort(blocks.Options{Prefetch: 1})
	a := counters.NewCounter(be.NewClient(t).Database(name), opts)
	bopts := opts
	bopts.Observer = atkLogObserver{t}
	b := counters.NewCounter(backend.Connect(t, options.Client().ApplyURI(uri).SetAppName("atk-slow-b")).Database(name), bopts)
	t.Cleanup(func() {
		relay.SetDelay(0)
		a.Close(context.Background())
		b.Close(context.Background())
	})
	rec := &atkRec{}

	mustSetMode(t, a, "s", seqd.ModeCached, 10, 10)
	mustNext(t, b, "s", 1) // strict write: b learns "cached", fetches nothing yet
	if blind {
		atkFailFinds(t, name, "atk-slow-b")
	}

	relay.SetDelay(2 * time.Second)
	first := make(chan answer, 1)
	go func() {
		start := time.Now()
		r, err := b.NextN(ctx, "s", 1) // b's first block fetch: applied at once, answered 2s later
		if err == nil {
			rec.add("b-first", start, time.Now(), r, false)
		}
		first <- answer{r.Last, err}
	}()
	pollUntil(t, ctx, "b's first block fetch to apply", func() (bool, error) {
		s, err := a.Current(ctx, "s")
		return err == nil && s.Blocks.Reserved > 0, err
	})

	st, ok := b.BlockStatus("s")
	t.Logf("b's blocks once its fetch applied: %+v, %v", st, ok)
	mustSetMode(t, a, "s", seqd.ModeStrict, 0, 0)
	start := time.Now()
	r, err := a.NextN(ctx, "s", 1) // waits out the drain, finishes it, strict write
	end := time.Now()
	if err != nil {
		t.Fatalf("a's strict Next: %v", err)
	}
	rec.add("a-strict", start, end, r, true)
	if s, err := a.Current(ctx, "s"); err != nil || s.Mode != seqd.ModeStrict || !s.StrictFrom.IsZero() {
		t.Fatalf("after a's strict Next: %+v, %v; want strict, drain over", s, err)
	}

	st, ok = b.BlockStatus("s")
	t.Logf("b's blocks after the strict answer: %+v, %v", st, ok)
	time.Sleep(20 * time.Millisecond) // strictly after the strict answer
	start = time.Now()
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	r, err = b.NextN(cctx, "s", 1)
	cancel()
	if err != nil {
		t.Fatalf("b's Next after the strict answer: %v", err)
	}
	rec.add("b-later", start, time.Now(), r, false)
	if f := <-first; f.err != nil {
		t.Logf("b's first Next: %v", f.err)
	}
	relay.SetDelay(0)
	atkCheck(t, rec)
}

// Promise 1, without slow answers: b holds blocks and its refresh cannot read
// the switch; a switches to strict and its strict answers must be above every
// answer of b that starts after them. Callers of b hammer the name throughout.
func TestAttackSwitchWhileRefreshBlind(t *testing.T) {
	for _, v := range []struct {
		noCoalesce, sessions bool
	}{{false, false}, {true, false}, {false, true}} {
		noCoalesce := v.noCoalesce
		t.Run(fmt.Sprintf("NoCoalesce=%v,sessions=%v", v.noCoalesce, v.sessions), func(t *testing.T) {
			be.RequireFailCommand(t)
			ctx := testContext(t)
			name := be.Database(t).Name()
			opts := atkShort(blocks.Options{})
			opts.NoCoalesce = noCoalesce
			a := counters.NewCounter(be.NewAppClient(t, "atk-a").Database(name), opts)
			bc := be.NewAppClient(t, "atk-blind-b")
			b := counters.NewCounter(bc.Database(name), opts)
			t.Cleanup(func() { a.Close(context.Background()); b.Close(context.Background()) })
			mustSetMode(t, a, "s", seqd.ModeCached, 50, 50)
			if _, err := b.Next(ctx, "s"); err != nil {
				t.Fatal(err)
			}
			atkFailFinds(t, name, "atk-blind-b")
			ctxs := make([]context.Context, 8) // one for each of b's callers
			for g := range ctxs {
				ctxs[g] = ctx
				if v.sessions { // b's callers write alone, inside sessions of their own
					sess, err := bc.StartSession()
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { sess.EndSession(context.Background()) })
					ctxs[g] = mongo.NewSessionContext(ctx, sess)
				}
			}
			rec := &atkRec{}
			load := newAtkLoad(t, rec, 2*time.Second)
			for g, gctx := range ctxs {
				load.caller(gctx, fmt.Sprintf("b-%d", g), b, func(i int) int64 { return int64(1 + i%3) })
			}
			for range 3 {
				time.Sleep(200 * time.Millisecond)
				mustSetMode(t, a, "s", seqd.ModeStrict, 0, 0)
				atkStrictFor(t, ctx, rec, a, time.Second)
				mustSetMode(t, a, "s", seqd.ModeCached, 50, 50)
			}
			load.stop()
			atkCheck(t, rec)
		})
	}
}

// Promise 1 across quick flips: cached→strict→cached→strict with no pause,
// new bounds each time, b blind (its finds fail) and holding blocks, a the
// switcher; then a's strict answers must be above anything started after them.
func TestAttackQuickFlips(t *testing.T) {
	be.RequireFailCommand(t)
	ctx := testContext(t)
	name := be.Database(t).Name()
	opts := atkShort(blocks.Options{})
	a := counters.NewCounter(be.NewAppClient(t, "atk-a").Database(name), opts)
	b := counters.NewCounter(be.NewAppClient(t, "atk-flip-b").Database(name), opts)
	c := counters.NewCounter(be.NewAppClient(t, "atk-c").Database(name), counters.Options{BlockLease: time.Second, ModeRefresh: 50 * time.Millisecond})
	t.Cleanup(func() {
		a.Close(context.Background())
		b.Close(context.Background())
		c.Close(context.Background())
	})
	mustSetMode(t, a, "s", seqd.ModeCached, 20, 20)
	if _, err := b.Next(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Next(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	atkFailFinds(t, name, "atk-flip-b")
	rec := &atkRec{}
	load := newAtkLoad(t, rec, 3*time.Second)
	load.callers(ctx, "b", b, 4)
	load.callers(ctx, "c", c, 4)
	for round := range 4 {
		time.Sleep(150 * time.Millisecond)
		for i, mode := range []seqd.Mode{seqd.ModeStrict, seqd.ModeCached, seqd.ModeStrict} {
			if err := a.SetMode(ctx, "s", mode, int64(10+i+round), int64(10+i+round)); err != nil {
				t.Errorf("round %d: SetMode(%s) #%d: %v", round, mode, i, err)
			}
		}
		atkStrictFor(t, ctx, rec, a, 1500*time.Millisecond)
		mustSetMode(t, a, "s", seqd.ModeCached, 20, 20)
	}
	load.stop()
	atkCheck(t, rec)
}

// A second SetMode(strict) while the name drains (the operator repeats the
// command, or two operators switch at once) must succeed, and change nothing.
func TestAttackSetModeStrictWhileDraining(t *testing.T) {
	ctx := testContext(t)
	db := be.Database(t)
	a := counters.NewCounter(be.NewClient(t).Database(db.Name()), atkShort(blocks.Options{}))
	b := counters.NewCounter(be.NewClient(t).Database(db.Name()), atkShort(blocks.Options{}))
	t.Cleanup(func() { a.Close(context.Background()); b.Close(context.Background()) })
	mustSetMode(t, a, "s", seqd.ModeCached, 10, 10)
	mustNext(t, a, "s", 1)
	mustSetMode(t, a, "s", seqd.ModeStrict, 0, 0)
	for _, c := range []*counters.Counter{a, b} {
		if err := c.SetMode(ctx, "s", seqd.ModeStrict, 0, 0); err != nil {
			t.Errorf("SetMode(strict) while draining: %v", err)
		}
	}
	// And two at once, from cached.
	mustSetMode(t, a, "t", seqd.ModeCached, 10, 10)
	var top int64
	for _, c := range []*counters.Counter{a, b, b} {
		v, err := c.Next(ctx, "t")
		if err != nil {
			t.Fatal(err)
		}
		top = max(top, v)
	}
	errs := make(chan error, 2)
	for _, c := range []*counters.Counter{a, b} {
		go func() { errs <- c.SetMode(ctx, "t", seqd.ModeStrict, 0, 0) }()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Errorf("concurrent SetMode(strict): %v", err)
		}
	}
	v, err := b.Next(ctx, "t")
	if err != nil || v <= top {
		t.Errorf("Next after the drain: %d, %v; want above %d", v, err, top)
	}
}

// Promise 3. b holds 1…10 and has handed out 1…4. The operator forces the
// sequence to 4, the last value handed out: nothing handed out is handed out
// again by that. a then reserves 5 (strict) and 6…10 (a block) and hands out
// 5…9. b's Close finds seq at 10, the end of its block, and the floor at 4, and
// gives 5…10 back: seq goes back below values a reserved and handed out after
// b's block, and a hands 5… out a second time.
func TestAttackForcedSetGiveBackABA(t *testing.T) {
	ctx := testContext(t)
	name := be.Database(t).Name()
	a := counters.NewCounter(be.NewClient(t).Database(name), counters.Options{Blocks: blocks.Options{MinBlock: 5, MaxBlock: 5, Prefetch: 1}})
	b := counters.NewCounter(be.NewClient(t).Database(name), counters.Options{Blocks: blocks.Options{MinBlock: 10, MaxBlock: 10, Prefetch: 1}})
	admin := counters.NewCounter(be.NewClient(t).Database(name), counters.Options{})
	t.Cleanup(func() { a.Close(context.Background()); b.Close(context.Background()) })
	rec := &atkRec{}
	next := func(id string, c *counters.Counter) int64 {
		t.Helper()
		start := time.Now()
		r, err := c.NextN(ctx, "s", 1)
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		rec.add(id, start, time.Now(), r, false)
		t.Logf("%s: %d", id, r.Last)
		return r.Last
	}
	mustSetMode(t, b, "s", seqd.ModeCached, 0, 0)
	for range 4 {
		next("b-1", b) // 1…4, from b's block 1…10
	}
	mustSet(t, admin, "s", 4, true)
	for range 5 {
		next("a-1", a) // 5 strict (a learns), then 6…9 from a's block 6…10
	}
	if err := b.Close(ctx); err != nil {
		t.Fatal(err)
	}
	s, err := admin.Current(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("after b's Close: %+v", s)
	if s.Value < 10 {
		t.Errorf("b's give-back moved seq to %d, below a's values reserved and handed out after b's block (a holds 6…10, handed out 5…9): %+v", s.Value, s)
	}
	for range 3 {
		next("a-1", a)
	}
	atkCheck(t, rec)
}

// Promise 3, no force: a Set (even one refused as backwards) and other
// instances' blocks keep a give-back above them.
func TestAttackGiveBackFenceHolds(t *testing.T) {
	ctx := testContext(t)
	name := be.Database(t).Name()
	opts := counters.Options{Blocks: blocks.Options{MinBlock: 10, MaxBlock: 10, Prefetch: 1}}
	a := counters.NewCounter(be.NewClient(t).Database(name), opts)
	b := counters.NewCounter(be.NewClient(t).Database(name), opts)
	admin := counters.NewCounter(be.NewClient(t).Database(name), counters.Options{})
	t.Cleanup(func() { a.Close(context.Background()); b.Close(context.Background()) })
	mustSetMode(t, b, "s", seqd.ModeCached, 0, 0)
	mustNext(t, b, "s", 1) // b holds 2…10
	mustSet(t, admin, "s", 10, false)
	if err := b.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if s, err := admin.Current(ctx, "s"); err != nil || s.Value != 10 {
		t.Errorf("after a Set to 10 and b's Close: %+v, %v; want 10", s, err)
	}
	// a reserves 11…20, gives it back untouched, and so seq is again at the end
	// of b2's block.
	b2 := counters.NewCounter(be.NewClient(t).Database(name), opts)
	t.Cleanup(func() { b2.Close(context.Background()) })
	mustNext(t, b2, "s", 11) // strict: learns
	mustNext(t, b2, "s", 12) // block 12…21
	mustNext(t, a, "s", 22)  // strict: learns
	mustNext(t, a, "s", 23)  // block 23…32
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if s, err := admin.Current(ctx, "s"); err != nil || s.Value != 23 {
		t.Fatalf("after a's Close: %+v, %v; want 23", s, err)
	}
	if err := b2.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if s, err := admin.Current(ctx, "s"); err != nil || s.Value != 23 {
		t.Errorf("after b2's Close: %+v, %v; want 23 (a's 22 and 23 are above b2's block)", s, err)
	}
}

// Promise 4: fetches that fail in every way (refused, connection closed,
// write concern error after applying), lease expiries (finds fail) that retire
// allocators and give back, several instances: the store's served count never
// exceeds the values handed out from blocks, and the identity holds.
func TestAttackAccountingUnderFaults(t *testing.T) {
	be.RequireFailCommand(t)
	ctx := testContext(t)
	name := be.Database(t).Name()
	ns := name + "." + counters.CounterCollection
	opts := atkShort(blocks.Options{MinBlock: 7, MaxBlock: 7, Cooldown: time.Millisecond})
	cs := map[string]*counters.Counter{}
	for _, id := range []string{"a", "b", "c"} {
		cs[id] = counters.NewCounter(be.NewAppClient(t, "atk-acct-"+id).Database(name), opts)
	}
	admin := counters.NewCounter(be.NewClient(t).Database(name), counters.Options{})
	mustSetMode(t, admin, "s", seqd.ModeCached, 0, 0)
	rec := &atkRec{}
	load := newAtkLoad(t, rec, 2*time.Second)
	load.faults = true
	for id, c := range cs {
		load.callers(ctx, id, c, 4)
	}
	faults := []bson.E{
		{Key: "errorCode", Value: 91},
		{Key: "closeConnection", Value: true},
		{Key: "writeConcernError", Value: bson.D{{Key: "code", Value: 64}, {Key: "errmsg", Value: "timed out"}}},
	}
	for i := range 12 {
		time.Sleep(100 * time.Millisecond)
		f := be.FailCommand(t, bson.D{{Key: "times", Value: 2}}, bson.D{
			{Key: "failCommands", Value: bson.A{"findAndModify"}},
			{Key: "namespace", Value: ns},
			{Key: "appName", Value: "atk-acct-" + []string{"a", "b", "c"}[i%3]},
			faults[i%len(faults)],
		})
		if i%4 == 0 {
			blind := be.FailCommand(t, bson.D{{Key: "times", Value: 10}}, bson.D{
				{Key: "failCommands", Value: bson.A{"find"}},
				{Key: "namespace", Value: ns},
				{Key: "appName", Value: "atk-acct-" + []string{"a", "b", "c"}[(i+1)%3]},
				{Key: "errorCode", Value: 8},
			})
			time.Sleep(400 * time.Millisecond)
			blind.Off(ctx)
		}
		f.Off(ctx)
	}
	load.stop()
	answers := int64(len(rec.all.Ops())) // of one value each, all from blocks
	for id, c := range cs {
		if err := c.Close(ctx); err != nil {
			t.Errorf("Close %s: %v", id, err)
		}
	}
	s, err := admin.Current(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	bc := s.Blocks
	t.Logf("answers %d, value %d, counts %+v, unaccounted %d", answers, s.Value, bc, bc.Unaccounted())
	if bc.Served > answers {
		t.Errorf("the store counts %d served, but only %d answers were handed out: served counted twice", bc.Served, answers)
	}
	if bc.Unaccounted() < 0 {
		t.Errorf("unaccounted %d < 0: %+v", bc.Unaccounted(), bc)
	}
	atkCheck(t, rec)
}

// Promise 5: Close during a drain, by the switcher: the other instance's
// callers finish it within their contexts, no call hangs, and no goroutine
// outlives the Counters' Close.
func TestAttackCloseDuringDrain(t *testing.T) {
	be.RequireFailCommand(t)
	ctx := testContext(t)
	name := be.Database(t).Name()
	ca := be.NewAppClient(t, "atk-close-a")
	cb := be.NewAppClient(t, "atk-close-b")
	opts := atkShort(blocks.Options{MinBlock: 10, MaxBlock: 10})
	warm := counters.NewCounter(ca.Database(name), counters.Options{})
	if _, err := warm.Next(ctx, "warm"); err != nil {
		t.Fatal(err)
	}
	warm.Close(ctx)
	warmB := counters.NewCounter(cb.Database(name), counters.Options{})
	if _, err := warmB.Next(ctx, "warm"); err != nil {
		t.Fatal(err)
	}
	warmB.Close(ctx)
	time.Sleep(200 * time.Millisecond)
	baseline := runtime.NumGoroutine()

	a := counters.NewCounter(ca.Database(name), opts)
	b := counters.NewCounter(cb.Database(name), opts)
	mustSetMode(t, a, "s", seqd.ModeCached, 0, 0)
	mustNext(t, a, "s", 1)
	var bMax int64
	for range 5 {
		v, err := b.Next(ctx, "s")
		if err != nil {
			t.Fatal(err)
		}
		bMax = max(bMax, v)
	}
	blind := atkFailFinds(t, name, "atk-close-b")
	mustSetMode(t, a, "s", seqd.ModeStrict, 0, 0)
	if err := a.Close(ctx); err != nil {
		t.Fatalf("a.Close during the drain: %v", err)
	}
	// A caller with less time than the drain gets ErrDraining at once.
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	began := time.Now()
	_, err := b.Next(short, "s")
	cancel()
	if took := time.Since(began); took > 200*time.Millisecond {
		t.Errorf("Next with 50ms left took %v", took)
	}
	t.Logf("Next with 50ms during the drain: %v", err)
	// One with time enough gets a strict value above all b served (b may read
	// again now: its read after the strict write that finds the drain).
	if err := blind.Off(ctx); err != nil {
		t.Fatal(err)
	}
	drained := false
	for end := time.Now().Add(5 * time.Second); !drained && time.Now().Before(end); {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		v, err := b.Next(cctx, "s")
		cancel()
		if err != nil || v <= bMax {
			t.Fatalf("Next during or after the drain: %d, %v; want above %d", v, err, bMax)
		}
		bMax = v
		s, err := warm.Current(ctx, "s")
		if err != nil {
			t.Fatal(err)
		}
		drained = s.StrictFrom.IsZero()
		time.Sleep(20 * time.Millisecond)
	}
	if !drained {
		t.Errorf("the name still drains 5s after a switched it and closed")
	}
	if err := b.Close(ctx); err != nil {
		t.Errorf("b.Close: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	n := runtime.NumGoroutine()
	for n > baseline && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		n = runtime.NumGoroutine()
	}
	if n > baseline {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		t.Errorf("%d goroutines 5s after Close, %d before the Counters:\n%s", n, baseline, atkOurStacks(string(buf)))
	}
}

// atkExpected: errors a loader may get: a drain that outlasts its context,
// its deadline, or the failpoint that blinds its instance's finds (which
// fails the read after a strict write that found the name draining too).
func atkExpected(err error) bool {
	return errors.Is(err, counters.ErrDraining) || errors.Is(err, context.DeadlineExceeded) ||
		strings.Contains(err.Error(), "failCommand")
}

type atkLogObserver struct{ t *testing.T }

func (o atkLogObserver) Retry(string) {}
func (o atkLogObserver) Batch(int)    {}
func (o atkLogObserver) Block(values int64, d time.Duration, err error) {
	o.t.Logf("b's block fetch: %d values in %v: %v", values, d.Round(time.Millisecond), err)
}

// atkOurStacks keeps the goroutine stacks that run seqd code.
func atkOurStacks(all string) string {
	var keep []string
	for _, g := range strings.Split(all, "\n\n") {
		if strings.Contains(g, "seqd/counters") || strings.Contains(g, "seqd/blocks") {
			keep = append(keep, g)
		}
	}
	return strings.Join(keep, "\n\n")
}

// Promise 1 with leases that differ: b takes 2s leases, a (the switcher) 300ms.
// b's fetch raises the document's leaseMs, so a's drain lasts b's lease: b,
// blind, serves its blocks for up to 2s after its last fetch, and a's strict
// answers must not come before.
func TestAttackMixedLeases(t *testing.T) {
	be.RequireFailCommand(t)
	ctx := testContext(t)
	name := be.Database(t).Name()
	a := counters.NewCounter(be.NewAppClient(t, "atk-mixed-a").Database(name), atkShort(blocks.Options{}))
	bopts := atkShort(blocks.Options{MinBlock: 1000, MaxBlock: 1000})
	bopts.BlockLease = 2 * time.Second
	b := counters.NewCounter(be.NewAppClient(t, "atk-mixed-b").Database(name), bopts)
	t.Cleanup(func() { a.Close(context.Background()); b.Close(context.Background()) })
	mustSetMode(t, a, "s", seqd.ModeCached, 0, 0) // leaseMs 300
	if _, err := b.Next(ctx, "s"); err != nil {   // strict: b learns, with min(2s, 300ms)
		t.Fatal(err)
	}
	if _, err := b.Next(ctx, "s"); err != nil { // b's block: leaseMs 2000, b's lease 2s from now
		t.Fatal(err)
	}
	atkFailFinds(t, name, "atk-mixed-b")
	rec := &atkRec{}
	load := newAtkLoad(t, rec, 5*time.Second)
	load.pause = time.Millisecond
	load.callers(ctx, "b", b, 4)
	mustSetMode(t, a, "s", seqd.ModeStrict, 0, 0)
	atkStrictFor(t, ctx, rec, a, 3*time.Second)
	load.stop()
	atkCheck(t, rec)
}
