//go:build integration

package robustness

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/seqd/seqd/internal/history"
)

// porcupineTimeout bounds porcupine's search for one name; a search that runs
// out is reported as an anomaly of its own (the history could not be decided).
const porcupineTimeout = 2 * time.Minute

// anomaly is one broken promise found in a run's history.
type anomaly struct {
	Check   string `json:"check"` // which check found it
	Name    string `json:"name"`
	Count   int64  `json:"count"`
	Example string `json:"example"`
}

// window is a span in which a name is known to be strict: an answer that
// started at or after from and ended at or before to was a strict write.
type window struct{ from, to time.Time }

var forever = time.Unix(1<<40, 0)

// strictWindows reads, from the admin's operations on a name (one after
// another), when its answers were strict writes. A strict name always; a
// cached one never. A switching name is strict from the start of the run until
// the first PUT that may make it cached is sent (answered or not), and again
// once a PUT mode strict answered: at once if the name was strict already (no
// strict_from), else once its drain is over, which is the later of strict_from
// and the PUT's answer plus the longest lease × 1.02 (every lease confirmed
// before the switch has run out by then).
func strictWindows(kind nameKind, admin []op, t0 time.Time) []window {
	switch kind {
	case kindStrict:
		return []window{{t0.Add(-time.Hour), forever}}
	case kindCached:
		return nil
	}
	var out []window
	open, from := true, t0.Add(-time.Hour)
	for _, o := range admin {
		if o.Kind != opMode {
			continue
		}
		switch {
		case o.Mode == "cached":
			if open {
				out = append(out, window{from, o.Start})
			}
			open = false
		case o.Mode == "strict" && o.OK && !open:
			open, from = true, o.End
			if !o.StrictFrom.IsZero() {
				from = o.End.Add(drainWait)
				if o.StrictFrom.After(from) {
					from = o.StrictFrom
				}
			}
		}
	}
	if open {
		out = append(out, window{from, forever})
	}
	return out
}

// inWindow reports whether o lies within one of ws.
func inWindow(o op, ws []window) bool {
	for _, w := range ws {
		if !o.Start.Before(w.from) && !o.End.After(w.to) {
			return true
		}
	}
	return false
}

func toHistory(ops []op) []history.Op {
	out := make([]history.Op, len(ops))
	for i, o := range ops {
		out[i] = history.Op{Client: o.who(), Start: o.Start, End: o.End, First: o.First, Last: o.Last}
	}
	return out
}

// checked is what the checks found in a run, and the figures of its history.
type checked struct {
	anomalies []anomaly
	strict    int      // answers checked as strict
	skipped   int64    // strict names' values never handed out
	unexplain int64    // of them, those nothing explains
	modelOps  int      // operations porcupine checked
	visuals   []string // porcupine visualizations written
}

// checkHistory runs every check but the accounts over ops and attempts;
// sf are the store's faults that checkSkipped needs. A failing
// porcupine check writes its visualization to dir.
func checkHistory(names []seqName, ops []op, attempts []attempt, sf storeFaults, t0 time.Time, dir func() string) checked {
	var res checked
	add := func(check, name string, n int64, examples []string) {
		ex := ""
		if len(examples) > 0 {
			ex = examples[0]
		}
		res.anomalies = append(res.anomalies, anomaly{Check: check, Name: name, Count: n, Example: ex})
	}
	for _, n := range names {
		var answers, admin []op
		for _, o := range ops {
			switch {
			case o.Name != n.name:
			case o.Kind == opNext && o.OK:
				answers = append(answers, o)
			case o.Via == viaAdmin:
				admin = append(admin, o)
			}
		}

		// No value twice, anywhere.
		if r := history.Check(toHistory(answers), history.Options{}); r.Duplicates > 0 || r.Invalid > 0 {
			add("unique", n.name, r.Duplicates+int64(r.Invalid), r.Examples)
		}

		// In order per seqd process, and per caching client.
		byProcess := map[string][]op{}
		for _, o := range answers {
			switch {
			case o.Via == viaGoCache:
				byProcess[o.Client] = append(byProcess[o.Client], o)
			case o.Gen >= 0:
				k := fmt.Sprintf("seqd-%d gen %d", o.Instance, o.Gen)
				byProcess[k] = append(byProcess[k], o)
			}
		}
		for _, k := range slices.Sorted(func(yield func(string) bool) {
			for k := range byProcess {
				if !yield(k) {
					return
				}
			}
		}) {
			if r := history.Check(toHistory(byProcess[k]), history.Options{}); r.OrderViolations > 0 {
				add("per-process order ("+k+")", n.name, r.OrderViolations, r.Examples)
			}
		}

		// A strict name's values: none skipped that no failure or Set explains.
		if n.kind == kindStrict {
			var as []attempt
			for _, a := range attempts {
				if a.Name == n.name {
					as = append(as, a)
				}
			}
			sk := checkSkipped(as, admin, sf, t0)
			res.skipped += sk.explained + sk.unexplained
			res.unexplain += sk.unexplained
			if sk.unexplained > 0 {
				add("strict values skipped, every request answered", n.name, sk.unexplained, sk.examples)
			}
		}

		// Strict answers: above every answer that ended before them, and
		// linearizable with the admin's value PUTs and reads.
		ws := strictWindows(n.kind, admin, t0)
		var strict, model []op
		for _, o := range answers {
			if o.Via != viaGoCache && inWindow(o, ws) {
				strict = append(strict, o)
				model = append(model, o)
			}
		}
		res.strict += len(strict)
		if v := history.CheckAbove(toHistory(answers), toHistory(strict)); len(v) > 0 {
			add("strict above all before", n.name, int64(len(v)), v)
		}
		for _, o := range admin {
			if o.OK && (o.Kind == opSet || o.Kind == opRead) {
				model = append(model, o)
			}
		}
		res.modelOps += len(model)
		pops := porcupineOps(model, n.kind == kindStrict, t0)
		result, info := porcupine.CheckOperationsVerbose(seqModel, pops, porcupineTimeout)
		if result != porcupine.Ok {
			path := filepath.Join(dir(), "porcupine-"+n.name+".html")
			example := fmt.Sprintf("%s: %d operations; visualization in %s", result, len(pops), path)
			if err := porcupine.VisualizePath(seqModel, info, path); err != nil {
				example += fmt.Sprintf(" (not written: %v)", err)
			} else {
				res.visuals = append(res.visuals, path)
			}
			add("linearizable (porcupine)", n.name, 1, []string{example})
		}
	}
	return res
}

// accounts is a cached name's stored counts after the run.
type accounts struct {
	Seq                         int64
	Reserved, Served, Returned  int64
	Unaccounted                 int64
	MaxHandedOut, LossBound     int64
	Name                        string
	APIReserved, APIServed      int64
	APIReturned, APIUnaccounted int64
	APIRead                     bool
}

// checkAccounts checks a name's counts: the API's add up, none is negative,
// unaccounted stays within lossBound, and the stored value is at or above every
// value handed out.
func checkAccounts(a accounts) []anomaly {
	var out []anomaly
	bad := func(format string, args ...any) {
		out = append(out, anomaly{Check: "accounts", Name: a.Name, Count: 1, Example: fmt.Sprintf(format, args...)})
	}
	if a.APIRead && a.APIReserved != a.APIServed+a.APIReturned+a.APIUnaccounted {
		bad("GET says reserved %d ≠ served %d + returned %d + unaccounted %d", a.APIReserved, a.APIServed, a.APIReturned, a.APIUnaccounted)
	}
	if a.Reserved < 0 || a.Served < 0 || a.Returned < 0 || a.Unaccounted < 0 {
		bad("stored reserved %d, served %d, returned %d: unaccounted %d; none may be negative", a.Reserved, a.Served, a.Returned, a.Unaccounted)
	}
	if a.Unaccounted > a.LossBound {
		bad("unaccounted %d above what the run's faults and skips could lose (%d)", a.Unaccounted, a.LossBound)
	}
	if a.Seq < a.MaxHandedOut {
		bad("stored value %d below %d, handed out", a.Seq, a.MaxHandedOut)
	}
	return out
}

// mkdirReport makes dir, or a new temporary directory if dir is "".
func mkdirReport(dir string, seed uint64) (string, error) {
	if dir == "" {
		return os.MkdirTemp("", fmt.Sprintf("seqd-robustness-%d-", seed))
	}
	dir = filepath.Join(dir, fmt.Sprintf("seed-%d", seed))
	return dir, os.MkdirAll(dir, 0o755)
}

// skipSlack is how long after a failed request ended its write may still
// reach the store and take values: a coalesced write runs by its latest
// caller's deadline (seqd's 2 s), and waits for the write before it (as
// long). blockedSlack adds a blockConnection failpoint's hold (at most 3.7 s),
// for a request that failed while one was on.
const (
	skipSlack    = 5 * time.Second
	blockedSlack = skipSlack + 4*time.Second
)

// storeFaults are the spans of the faults that change what a failed request
// may have taken (checkSkipped).
type storeFaults struct {
	restarts []window // a store restart, up to skipSlack after it
	blocked  []window // a blockConnection failpoint on
}

// storeFaultsOf reads them from a run's schedule.
func storeFaultsOf(schedule []fault) storeFaults {
	var sf storeFaults
	for _, f := range schedule {
		switch f.Kind {
		case "store-restart":
			sf.restarts = append(sf.restarts, window{f.At, f.Undone.Add(skipSlack)})
		case "blockConnection":
			sf.blocked = append(sf.blocked, window{f.At, f.Undone})
		}
	}
	return sf
}

// slack is how long after f ended its write may still take values.
func (sf storeFaults) slack(f attempt) time.Duration {
	for _, w := range sf.blocked {
		if f.Start.Before(w.to) && f.End.After(w.from) {
			return blockedSlack
		}
	}
	return skipSlack
}

// skipped is what checkSkipped found on one name.
type skipped struct {
	explained, unexplained int64 // values skipped
	examples               []string
}

// checkSkipped counts the values of a strict name that seqd never handed out,
// and those of them that nothing explains. A strict name's values are handed
// out one after another: a value is skipped only by a request that took it
// and never said so (a request not answered 200: a 503, a timeout, a lost
// answer), or by a Set that moved the sequence past it. A gap between two
// answers is explained by the Sets that ran between them, up to the highest
// value they set, and by the values asked for by the requests that failed
// between them (their writes may land up to skipSlack after they end, or
// blockedSlack while a blockConnection failpoint holds commands);
// whatever is left is unexplained: a write that ran twice, or values lost
// with every request answered. attempts are every request for values of the
// name as it went to seqd, admin the admin's operations on it.
//
// A gap during a store restart (sf.restarts) is explained whole: the dev store
// keeps its record of retryable writes in memory, where mongod keeps it with
// the write, so a write whose reply the restart lost runs again when the
// driver retries it on the new process.
func checkSkipped(attempts []attempt, admin []op, sf storeFaults, t0 time.Time) skipped {
	var res skipped
	var ok, failed []attempt
	for _, a := range attempts {
		if a.ok() {
			ok = append(ok, a)
		} else {
			failed = append(failed, a)
		}
	}
	slices.SortFunc(ok, func(a, b attempt) int { return cmp.Compare(a.First, b.First) })
	var sets []op
	for _, o := range admin {
		if o.Kind == opSet && !o.Backwards {
			sets = append(sets, o)
		}
	}
	prev, prevAt := int64(0), attempt{Start: t0.Add(-time.Hour)}
	for _, a := range ok {
		if a.First > prev+1 {
			lo, hi := prev+1, a.First-1
			from, to := prevAt.Start, a.End // the values went between these
			covered := prev
			for _, o := range sets {
				end := o.End
				if !o.OK {
					end = end.Add(skipSlack)
				}
				if o.Start.Before(to) && end.After(from) {
					covered = max(covered, min(o.Value, hi))
				}
			}
			var budget int64
			for _, f := range failed {
				if f.Start.Before(to) && f.End.Add(sf.slack(f)).After(from) {
					budget += f.Count
				}
			}
			for _, w := range sf.restarts {
				if w.from.Before(to) && w.to.After(from) {
					budget = hi - covered
				}
			}
			rest := hi - covered
			res.explained += covered - prev + min(rest, budget)
			if rest > budget {
				res.unexplained += rest - budget
				res.examples = append(res.examples, fmt.Sprintf(
					"values %d..%d (%d) never handed out between answers %d..%d (sent +%v) and %d..%d (answered +%v); the Sets between explain up to %d, the requests that failed between asked for %d",
					lo, hi, hi-lo+1, prevAt.First, prevAt.Last, prevAt.Start.Sub(t0).Round(time.Millisecond),
					a.First, a.Last, a.End.Sub(t0).Round(time.Millisecond), covered, budget))
			}
		}
		if a.Last > prev {
			prev, prevAt = a.Last, a
		}
	}
	return res
}

// checkSnowflakes checks the snowflake ids of a run: none received twice, over
// every instance and restart (each process holds a worker id of its own), and
// each seqd process's in real-time order: an answer that ended before another
// began, from the same process, holds smaller ids.
func checkSnowflakes(ops []op) []anomaly {
	var out []anomaly
	seen := map[int64]string{}
	var dups int64
	var dupExample string
	byProcess := map[string][]op{}
	for _, o := range ops {
		if o.Kind != opSnowflake || !o.OK {
			continue
		}
		for i, id := range o.IDs {
			if prev, ok := seen[id]; ok {
				dups++
				if dupExample == "" {
					dupExample = fmt.Sprintf("id %d to %s, and before to %s", id, o.who(), prev)
				}
			}
			seen[id] = o.who()
			if i > 0 && id <= o.IDs[i-1] {
				out = append(out, anomaly{Check: "snowflake order", Count: 1, Example: fmt.Sprintf("%s got %v: not increasing", o.who(), o.IDs)})
			}
		}
		if o.Gen >= 0 {
			k := fmt.Sprintf("seqd-%d gen %d", o.Instance, o.Gen)
			byProcess[k] = append(byProcess[k], o)
		}
	}
	if dups > 0 {
		out = append(out, anomaly{Check: "snowflake unique", Count: dups, Example: dupExample})
	}
	for k, answers := range byProcess {
		slices.SortFunc(answers, func(a, b op) int { return a.Start.Compare(b.Start) })
		// Each answer must be above every answer of the process that ended
		// before it began: keep the largest id of those, by end time.
		byEnd := slices.Clone(answers)
		slices.SortFunc(byEnd, func(a, b op) int { return a.End.Compare(b.End) })
		var maxDone int64 = -1
		j := 0
		var bad int64
		example := ""
		for _, o := range answers {
			for j < len(byEnd) && byEnd[j].End.Before(o.Start) {
				maxDone = max(maxDone, slices.Max(byEnd[j].IDs))
				j++
			}
			if o.IDs[0] <= maxDone {
				bad++
				if example == "" {
					example = fmt.Sprintf("%s: %s got %d, not above %d, answered before it began", k, o.who(), o.IDs[0], maxDone)
				}
			}
		}
		if bad > 0 {
			out = append(out, anomaly{Check: "snowflake order", Count: bad, Example: example})
		}
	}
	return out
}

// TestCheckSnowflakesCatches feeds checkSnowflakes histories it must refuse:
// an id twice across instances, and a process's answer below one it gave
// before the request began.
func TestCheckSnowflakesCatches(t *testing.T) {
	t0 := time.Now()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	answer := func(inst, from, to int, ids ...int64) op {
		return op{Kind: opSnowflake, OK: true, Instance: inst, Gen: 0, Start: at(from), End: at(to), IDs: ids, Client: "c"}
	}
	for _, tc := range []struct {
		name  string
		ops   []op
		check string
	}{
		{"twice", []op{answer(0, 0, 1, 10, 11), answer(1, 0, 1, 11)}, "snowflake unique"},
		{"back in time", []op{answer(0, 0, 1, 10, 11), answer(0, 2, 3, 9)}, "snowflake order"},
		{"within an answer", []op{answer(0, 0, 1, 11, 10)}, "snowflake order"},
	} {
		got := checkSnowflakes(tc.ops)
		if len(got) == 0 || got[0].Check != tc.check {
			t.Errorf("%s: %+v, want a %q anomaly", tc.name, got, tc.check)
		}
	}
	// Overlapping answers of one process may come in either order.
	if got := checkSnowflakes([]op{answer(0, 0, 5, 20), answer(0, 1, 2, 10)}); len(got) != 0 {
		t.Errorf("overlapping answers: %+v, want none", got)
	}
}
