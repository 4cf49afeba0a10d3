//go:build integration

package robustness

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/seqd/seqd/integration/backend"
)

// TestRobustness runs the cluster under random traffic and faults, -robustness.runs
// times (or once, with -robustness.seed), and fails on any anomaly.
func TestRobustness(t *testing.T) {
	switch *flagStore {
	case storeBackend, storeStandalone, storeBoth:
	default:
		t.Fatalf("-robustness.store %q: backend, standalone or both", *flagStore)
	}
	var standalone *backend.Backend
	standaloneStore := func() *backend.Backend {
		switch {
		case standalone != nil:
		case be.Kind == backend.KindDevStore && !isReplicaSet(t, be):
			standalone = be // a dev store that is standalone already
		default:
			standalone = openDevStore(t, storeStandalone, "")
		}
		return standalone
	}
	seeds := runSeeds()
	var total figures
	for i, seed := range seeds {
		st := storeOf(i, standaloneStore)
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			r := run(t, seed, *flagDuration, st, "")
			total.add(r.figures)
			if len(r.anomalies) > 0 {
				t.Errorf("%s", r.failure())
			}
		})
	}
	if len(seeds) > 1 {
		say("robustness: all %d runs: %s", len(seeds), total)
	}
}

// mutants are the deliberately broken builds the suite must catch: seqd's
// (counters/mutants_on.go), on the suite's backend, and the dev store's
// (storeMutant), under seqd as it is.
var mutants = []string{"no-lease", "no-fence", "early-answer", storeMutant}

// TestRobustnessMutants runs each mutant named by -robustness.mutants until the
// checks catch it, for at most -robustness.runs runs, and fails if one is not
// caught. It is skipped without -robustness.mutants.
func TestRobustnessMutants(t *testing.T) {
	if *flagMutants == "" {
		t.Skip("no -robustness.mutants")
	}
	want := strings.Split(*flagMutants, ",")
	if *flagMutants == "all" {
		want = mutants
	}
	for _, m := range want {
		if !slices.Contains(mutants, m) {
			t.Fatalf("no mutant %q; there are %v", m, mutants)
		}
		t.Run(m, func(t *testing.T) {
			st, seqdMutant := be, m
			if m == storeMutant {
				st, seqdMutant = openDevStore(t, storeMutant, backend.DevStoreReplSet, "-mutant-rerun-retries"), ""
			}
			var traffic time.Duration
			for i, seed := range runSeeds() {
				r := run(t, seed, *flagDuration, st, seqdMutant)
				traffic += r.traffic
				if len(r.anomalies) > 0 {
					checks := map[string]int64{}
					for _, a := range r.anomalies {
						checks[a.Check] += a.Count
					}
					say("robustness: mutant %s CAUGHT by run %d (seed %d) after %v of traffic in all: %v; e.g. %s",
						m, i+1, seed, traffic.Round(time.Second), checks, r.anomalies[0].Example)
					return
				}
			}
			t.Errorf("mutant %s not caught in %d runs (%v of traffic)", m, len(runSeeds()), traffic.Round(time.Second))
		})
	}
}

// runSeeds are the seeds of the runs: -robustness.seed alone, or
// -robustness.runs seeds drawn from the clock.
func runSeeds() []uint64 {
	if *flagSeed != 0 {
		return []uint64{*flagSeed}
	}
	seeds := make([]uint64, max(*flagRuns, 1))
	for i := range seeds {
		seeds[i] = uint64(time.Now().UnixNano()%1_000_000_000) + uint64(i)*7919
	}
	return seeds
}

// say prints at once, not at the end of the test: the seed must be known even if
// the run hangs.
func say(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
}

// figures are what a run did.
type figures struct {
	ops, okOps, values int64
	byVia              map[string][2]int64 // ok, failed
	faults             map[string]int
	anomalies          int64
	strict, modelOps   int
	skipped, dropped   int64 // strict values never handed out; write replies the relays dropped
	unexplained        int64 // strict values skipped that nothing explains
	traffic, checkTime time.Duration
}

func (f *figures) add(g figures) {
	f.ops += g.ops
	f.okOps += g.okOps
	f.values += g.values
	f.anomalies += g.anomalies
	f.strict += g.strict
	f.modelOps += g.modelOps
	f.skipped += g.skipped
	f.unexplained += g.unexplained
	f.dropped += g.dropped
	f.traffic += g.traffic
	f.checkTime += g.checkTime
	if f.byVia == nil {
		f.byVia, f.faults = map[string][2]int64{}, map[string]int{}
	}
	for k, v := range g.byVia {
		w := f.byVia[k]
		f.byVia[k] = [2]int64{w[0] + v[0], w[1] + v[1]}
	}
	for k, v := range g.faults {
		f.faults[k] += v
	}
}

func (f figures) String() string {
	var via, faults []string
	for _, k := range slices.Sorted(mapKeys(f.byVia)) {
		via = append(via, fmt.Sprintf("%s %d ok/%d failed", k, f.byVia[k][0], f.byVia[k][1]))
	}
	n := 0
	for _, k := range slices.Sorted(mapKeys(f.faults)) {
		faults = append(faults, fmt.Sprintf("%s %d", k, f.faults[k]))
		if !strings.HasSuffix(k, " FAILED") {
			n += f.faults[k]
		}
	}
	return fmt.Sprintf("%d ops (%d answered, %d values; %s); %d answers checked as strict, %d ops through porcupine; %d strict values never handed out (%d of them unexplained); %d faults (%s), %d write replies dropped; %d anomalies; traffic %v, checks %v",
		f.ops, f.okOps, f.values, strings.Join(via, ", "), f.strict, f.modelOps, f.skipped, f.unexplained, n, strings.Join(faults, ", "),
		f.dropped, f.anomalies, f.traffic.Round(time.Second), f.checkTime.Round(time.Millisecond))
}

func mapKeys[M ~map[string]V, V any](m M) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// result is one run's outcome.
type result struct {
	figures
	seed      uint64
	mutant    string
	store     string // storeName
	schedule  []fault
	attempts  []attempt
	anomalies []anomaly
	reportDir string
}

// failure says what a failing run found, and how to run it again.
func (r result) failure() string {
	var b strings.Builder
	again := fmt.Sprintf("make robustness SEED=%d DURATION=%v STORE=%s", r.seed, *flagDuration, r.store)
	switch {
	case r.mutant != "":
		again = fmt.Sprintf("make robustness-mutants MUTANTS=%s SEED=%d DURATION=%v", r.mutant, r.seed, *flagDuration)
	case r.store == storeMutant:
		again = fmt.Sprintf("make robustness-mutants MUTANTS=%s SEED=%d DURATION=%v", storeMutant, r.seed, *flagDuration)
	}
	fmt.Fprintf(&b, "robustness: seed %d on the %s store: %d anomalies (again: %s)\n", r.seed, r.store, len(r.anomalies), again)
	for i, a := range r.anomalies {
		if i == 20 {
			fmt.Fprintf(&b, "  … and %d more\n", len(r.anomalies)-i)
			break
		}
		fmt.Fprintf(&b, "  %s on %s: %d; e.g. %s\n", a.Check, a.Name, a.Count, a.Example)
	}
	fmt.Fprintf(&b, "fault schedule as it ran:\n%s", describeSchedule(r.schedule))
	fmt.Fprintf(&b, "report (history, schedule, seqd output, porcupine visualizations): %s", r.reportDir)
	return b.String()
}

func describeSchedule(faults []fault) string {
	var b strings.Builder
	var t0 time.Time
	for i, f := range faults {
		if i == 0 {
			t0 = f.At.Add(-f.Quiet)
		}
		fmt.Fprintf(&b, "  +%-8v %s\n", f.At.Sub(t0).Round(time.Millisecond), f)
	}
	return b.String()
}

var dbCount atomic.Int64

// run is one run: a cluster on a database of its own on st, traffic and faults
// for duration, then every check. mutant, if not empty, runs that seqd mutant's
// build.
func run(t *testing.T, seed uint64, duration time.Duration, st *backend.Backend, mutant string) result {
	say("robustness: seed %d, %v of traffic and faults on %s%s", seed, duration, st, map[bool]string{true: ", mutant " + mutant}[mutant != ""])
	res := result{seed: seed, mutant: mutant, store: storeName(st)}
	ctx, cancel := context.WithTimeout(context.Background(), duration+10*time.Minute)
	defer cancel()
	rng := rand.New(rand.NewPCG(seed, 0))
	sub := func(i int) *rand.Rand { return rand.New(rand.NewPCG(seed, uint64(i)+1)) }

	db := fmt.Sprintf("robust_%d_%d_%d", os.Getpid()%100000, dbCount.Add(1), seed%1_000_000)
	e := &env{failCommand: probeFailCommand(t, st), replSet: isReplicaSet(t, st)}
	c, err := startCluster(t, ctx, st, db, mutant)
	if err != nil {
		t.Fatal(err)
	}
	e.c = c
	faults := schedule(rng, e, duration)

	names := []seqName{
		{"strict-0", kindStrict}, {"strict-1", kindStrict},
		{"switch-0", kindSwitching}, {"switch-1", kindSwitching},
		{"cached-0", kindCached},
	}
	tr := &traffic{c: c, names: names, rec: &recorder{}, nudge: make(chan struct{}, 1)}
	e.tr = tr
	transport := &http.Transport{MaxIdleConnsPerHost: 32, DisableCompression: true}
	defer transport.CloseIdleConnections()
	tr.hc = &http.Client{Transport: recording{next: transport, rec: tr.rec}, Timeout: 20 * time.Second}
	for _, n := range names {
		if n.kind == kindCached {
			if o := tr.setMode(ctx, rng, n.name, "cached"); !o.OK {
				t.Fatalf("making %s cached: %s", n.name, o.Err)
			}
		}
	}

	tr.t0 = time.Now()
	until := tr.t0.Add(duration)
	tctx, stopTraffic := context.WithCancel(ctx)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 5 {
		wg.Go(func() { tr.httpClient(tctx, sub(i), i) })
	}
	for i, in := range c.insts {
		wg.Go(func() {
			if err := tr.goClient(tctx, sub(10+i), i, in, false); err != nil {
				errs <- err
			}
		})
	}
	for i := range 2 {
		wg.Go(func() {
			if err := tr.goClient(tctx, sub(20+i), i, c.insts[i], true); err != nil {
				errs <- err
			}
		})
	}
	for i := range 2 {
		wg.Go(func() { tr.snowflakeClient(tctx, sub(40+i), i) })
	}
	wg.Go(func() { tr.adminLoop(tctx, sub(30)) })

	res.schedule = runSchedule(ctx, t, e, faults, until)
	pause(ctx, time.Until(until))
	stopTraffic()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	res.traffic = time.Since(tr.t0)
	for _, in := range c.insts {
		if _, up := in.state(); !up { // a restart that failed
			if err := in.start(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}

	checkStart := time.Now()
	ops := tr.rec.all()
	var dir string
	reportDir := func() string {
		if dir == "" {
			var err error
			if dir, err = mkdirReport(*flagReport, seed); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	attempts := tr.rec.allAttempts()
	ch := checkHistory(names, ops, attempts, storeFaultsOf(res.schedule), tr.t0, reportDir)
	res.anomalies, res.attempts = append(ch.anomalies, checkSnowflakes(ops)...), attempts
	res.strict, res.modelOps, res.skipped, res.unexplained = ch.strict, ch.modelOps, ch.skipped, ch.unexplain
	for _, in := range c.insts {
		if in.relay != nil {
			res.dropped += in.relay.WriteRepliesDropped()
		}
	}

	// The accounts: as the API shows them now, then as stored once every
	// instance has stopped and given back what it held.
	acc := map[string]*accounts{}
	for _, n := range names {
		if n.kind == kindStrict {
			continue
		}
		a := &accounts{Name: n.name}
		acc[n.name] = a
		for attempt := 0; attempt < 20 && !a.APIRead; attempt++ {
			if o, ans := tr.read(ctx, rng, n.name); o.OK && ans.Blocks != nil {
				a.APIRead = true
				a.APIReserved, a.APIServed, a.APIReturned, a.APIUnaccounted = ans.Blocks.Reserved, ans.Blocks.Served, ans.Blocks.Returned, ans.Blocks.Unaccounted
			} else if o.OK {
				break // no block reserved
			}
			pause(ctx, 250*time.Millisecond)
		}
	}
	stopCtx, cancelStop := context.WithTimeout(ctx, 30*time.Second)
	if err := c.stopAll(stopCtx); err != nil {
		res.anomalies = append(res.anomalies, anomaly{Check: "clean stop", Count: 1, Example: err.Error()})
	}
	cancelStop()
	losing := int64(len(res.schedule) + 1)
	for _, o := range ops {
		if o.Kind == opMode {
			losing++
		}
	}
	for _, n := range names {
		a := acc[n.name]
		if a == nil {
			continue
		}
		var doc struct {
			Seq      int64 `bson:"seq"`
			Reserved int64 `bson:"reserved"`
			Served   int64 `bson:"served"`
			Returned int64 `bson:"returned"`
		}
		if err := st.Client.Database(db).Collection("counters").FindOne(ctx, bson.D{{Key: "_id", Value: n.name}}).Decode(&doc); err != nil {
			t.Fatalf("reading %s: %v", n.name, err)
		}
		a.Seq, a.Reserved, a.Served, a.Returned = doc.Seq, doc.Reserved, doc.Served, doc.Returned
		a.Unaccounted = doc.Reserved - doc.Served - doc.Returned
		var multi int64
		for _, o := range ops {
			if o.Name == n.name && o.Kind == opNext {
				if o.Count > 1 {
					multi++
				}
				if o.OK {
					a.MaxHandedOut = max(a.MaxHandedOut, o.Last)
				}
			}
		}
		// What can be lost: what every instance holds (two blocks) at each
		// fault, switch or bounds change, and at the end; and a block's rest
		// skipped by a NextN it could not hold (under 10 values each).
		a.LossBound = losing*instances*2*maxBlock + 9*multi
		res.anomalies = append(res.anomalies, checkAccounts(*a)...)
	}
	res.checkTime = time.Since(checkStart)

	// Figures.
	res.byVia, res.faults = map[string][2]int64{}, map[string]int{}
	for _, o := range ops {
		res.ops++
		v := res.byVia[o.Via+" "+string(o.Kind)]
		if o.OK {
			res.okOps++
			v[0]++
			if o.Kind == opNext {
				res.values += o.Last - o.First + 1
			}
		} else {
			v[1]++
		}
		res.byVia[o.Via+" "+string(o.Kind)] = v
	}
	for _, f := range res.schedule {
		res.faults[f.Kind]++
		if f.Err != "" {
			res.faults[f.Kind+" FAILED"]++
		}
	}
	for _, a := range res.anomalies {
		res.figures.anomalies += a.Count
	}
	say("robustness: seed %d: %s", seed, res.figures)
	for _, n := range names {
		if a := acc[n.name]; a != nil {
			say("robustness: seed %d: %s: reserved %d = served %d + returned %d + unaccounted %d (bound %d); value %d, highest handed out %d",
				seed, n.name, a.Reserved, a.Served, a.Returned, a.Unaccounted, a.LossBound, a.Seq, a.MaxHandedOut)
		}
	}

	if len(res.anomalies) > 0 {
		res.reportDir = reportDir()
		writeReport(t, res, ops, c)
		if mutant != "" {
			say("robustness: mutant %s: %d anomalies; report in %s", mutant, len(res.anomalies), res.reportDir)
		}
	} else {
		dctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		st.Client.Database(db).Drop(dctx)
		cancel()
	}
	return res
}

// writeReport writes a failing run's report to res.reportDir: what failure()
// says, the history as JSON lines, and each seqd's output.
func writeReport(t *testing.T, res result, ops []op, c *cluster) {
	dir := res.reportDir
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Errorf("report: %v", err)
		}
	}
	write("report.txt", res.failure()+"\n\nfigures: "+res.figures.String()+"\n")
	var b strings.Builder
	enc := json.NewEncoder(&b)
	for _, o := range ops {
		enc.Encode(o)
	}
	write("history.jsonl", b.String())
	b.Reset()
	for _, a := range res.attempts {
		enc.Encode(a)
	}
	write("attempts.jsonl", b.String())
	b.Reset()
	for _, f := range res.schedule {
		enc.Encode(f)
	}
	write("schedule.jsonl", b.String())
	for _, in := range c.insts {
		write(in.name()+".log", in.output())
	}
}
