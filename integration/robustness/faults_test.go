//go:build integration

package robustness

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/seqd/seqd/integration/backend"
)

// A fault is one entry of a run's schedule: a kind, what it hits, how long it
// holds before its undo, and, once run, when it ran and how it went.
type fault struct {
	Kind   string        `json:"kind"`
	Target int           `json:"target"` // the instance, or -1 for the store
	Detail string        `json:"detail,omitempty"`
	Hold   time.Duration `json:"hold"`
	Quiet  time.Duration `json:"quiet"` // the wait before it

	At     time.Time `json:"at,omitzero"`
	Undone time.Time `json:"undone,omitzero"`
	Err    string    `json:"err,omitempty"`
}

func (f fault) String() string {
	target := "store"
	if f.Target >= 0 {
		target = fmt.Sprintf("seqd-%d", f.Target)
	}
	s := fmt.Sprintf("%-16s %-8s hold %-7v", f.Kind, target, f.Hold.Round(time.Millisecond))
	if f.Detail != "" {
		s += " " + f.Detail
	}
	if f.Err != "" {
		s += " ERROR: " + f.Err
	}
	return s
}

// A faultKind is a named fault with its precondition, and its injection, which
// undoes it after f.Hold.
type faultKind struct {
	name      string
	weight    int // how often a schedule draws it, against the others
	available func(e *env) bool
	draw      func(rng *rand.Rand, f *fault) // the parameters, from the seed
	run       func(ctx context.Context, t *testing.T, e *env, f *fault) error
}

// env is what the faults act on.
type env struct {
	c           *cluster
	tr          *traffic
	failCommand bool // the store accepts the failCommand failpoint
	replSet     bool // the store is a replica set member: it can step down
}

var storeCommands = []string{"findAndModify", "update", "find"}

// commands draws a non-empty subset of the commands seqd sends the store.
func commands(rng *rand.Rand) []string {
	for {
		var cmds []string
		for _, c := range storeCommands {
			if rng.IntN(2) == 0 {
				cmds = append(cmds, c)
			}
		}
		if len(cmds) > 0 {
			return cmds
		}
	}
}

// failpoint is a failCommand fault: data for the drawn commands, on for the hold.
func failpoint(name string, data func(rng *rand.Rand) bson.D) faultKind {
	return faultKind{
		name:      name,
		weight:    1, // five kinds of failpoint: five in all
		available: func(e *env) bool { return e.failCommand },
		draw: func(rng *rand.Rand, f *fault) {
			cmds := commands(rng)
			f.Target, f.Hold = -1, time.Duration(300+rng.IntN(2000))*time.Millisecond
			f.Detail = strings.Join(cmds, ",") + " " + extJSON(data(rng))
		},
		run: func(ctx context.Context, t *testing.T, e *env, f *fault) error {
			cmds, spec, _ := strings.Cut(f.Detail, " ")
			var d bson.D
			if err := bson.UnmarshalExtJSON([]byte(spec), false, &d); err != nil {
				return err
			}
			d = append(bson.D{{Key: "failCommands", Value: strings.Split(cmds, ",")}}, d...)
			if err := waitStore(ctx, e.c.store); err != nil {
				return err
			}
			fp := e.c.store.FailCommand(t, "alwaysOn", d)
			pause(ctx, f.Hold)
			return fp.Off(context.WithoutCancel(ctx))
		},
	}
}

// extJSON writes d as the Detail of a failpoint fault, which run parses back.
func extJSON(d bson.D) string {
	b, err := bson.MarshalExtJSON(d, false, false)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// faultKinds are the faults a schedule draws from.
var faultKinds = []faultKind{
	failpoint("closeConnection", func(*rand.Rand) bson.D {
		return bson.D{{Key: "closeConnection", Value: true}}
	}),
	failpoint("error91", func(*rand.Rand) bson.D { // ShutdownInProgress
		return bson.D{{Key: "errorCode", Value: 91}}
	}),
	failpoint("error10107", func(*rand.Rand) bson.D { // NotWritablePrimary
		return bson.D{{Key: "errorCode", Value: 10107}}
	}),
	failpoint("writeConcern64", func(*rand.Rand) bson.D { // the command ran; its answer says it may not last
		return bson.D{{Key: "writeConcernError", Value: bson.D{
			{Key: "code", Value: 64}, {Key: "codeName", Value: "WriteConcernFailed"},
			{Key: "errmsg", Value: "waiting for replication timed out"},
		}}}
	}),
	failpoint("blockConnection", func(rng *rand.Rand) bson.D { // past seqd's 2 s deadline: the command runs late
		return bson.D{{Key: "blockConnection", Value: true}, {Key: "blockTimeMS", Value: 2200 + rng.IntN(1500)}}
	}),
	{
		name:      "kill",
		weight:    2,
		available: func(*env) bool { return true },
		draw: func(rng *rand.Rand, f *fault) {
			f.Target, f.Hold = rng.IntN(instances), time.Duration(100+rng.IntN(2000))*time.Millisecond
		},
		run: func(ctx context.Context, t *testing.T, e *env, f *fault) error {
			in := e.c.insts[f.Target]
			in.kill()
			pause(ctx, f.Hold)
			return in.start(context.WithoutCancel(ctx))
		},
	},
	{
		name:      "sigterm",
		weight:    2,
		available: func(*env) bool { return true },
		draw: func(rng *rand.Rand, f *fault) {
			f.Target, f.Hold = rng.IntN(instances), time.Duration(rng.IntN(1500))*time.Millisecond
		},
		run: func(ctx context.Context, t *testing.T, e *env, f *fault) error {
			in := e.c.insts[f.Target]
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
			defer cancel()
			err := in.stop(sctx)
			pause(ctx, f.Hold)
			if serr := in.start(context.WithoutCancel(ctx)); serr != nil {
				return serr
			}
			if err != nil {
				return fmt.Errorf("SIGTERM: %w", err)
			}
			return nil
		},
	},
	{
		name:      "store-restart",
		weight:    2,
		available: func(e *env) bool { return e.c.store.CanRestart() },
		draw: func(rng *rand.Rand, f *fault) {
			f.Target = -1
			f.Detail = "clean"
			if rng.IntN(2) == 0 {
				f.Detail = "crash"
			}
		},
		run: func(ctx context.Context, t *testing.T, e *env, f *fault) error {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
			defer cancel()
			if err := e.c.store.Restart(rctx, f.Detail == "crash"); err != nil {
				return err
			}
			return waitStore(rctx, e.c.store)
		},
	},
	{
		name:      "partition",
		weight:    4,
		available: func(e *env) bool { return e.c.insts[0].relay != nil },
		draw: func(rng *rand.Rand, f *fault) {
			f.Target, f.Hold = rng.IntN(instances), lease+time.Duration(500+rng.IntN(3500))*time.Millisecond
		},
		run: func(ctx context.Context, t *testing.T, e *env, f *fault) error {
			r := e.c.insts[f.Target].relay
			r.Cut()
			e.nudge()
			pause(ctx, f.Hold)
			r.Heal()
			return nil
		},
	},
	{
		name:      "pause",
		weight:    4,
		available: func(*env) bool { return true },
		draw: func(rng *rand.Rand, f *fault) {
			f.Target, f.Hold = rng.IntN(instances), lease+time.Duration(500+rng.IntN(2500))*time.Millisecond
		},
		run: func(ctx context.Context, t *testing.T, e *env, f *fault) error {
			in := e.c.insts[f.Target]
			if err := in.signal(syscall.SIGSTOP); err != nil {
				return err
			}
			e.nudge()
			pause(ctx, f.Hold)
			return in.signal(syscall.SIGCONT)
		},
	},
	{
		// Lands where the traffic is: block fetches and strict writes.
		name:      "stepdown",
		weight:    2,
		available: func(e *env) bool { return e.replSet },
		draw: func(rng *rand.Rand, f *fault) {
			f.Target, f.Hold = -1, stepDownSecs(rng)
		},
		run: func(ctx context.Context, t *testing.T, e *env, f *fault) error {
			return stepDownFor(ctx, e, f.Hold)
		},
	},
	{
		// The admin switches its cached switching names to strict, and the
		// primary steps down while they drain.
		name:      "stepdown-drain",
		weight:    1,
		available: func(e *env) bool { return e.replSet },
		draw: func(rng *rand.Rand, f *fault) {
			after := time.Duration(rng.IntN(1500)) * time.Millisecond
			f.Target, f.Hold, f.Detail = -1, stepDownSecs(rng), "after "+after.String()
		},
		run: func(ctx context.Context, t *testing.T, e *env, f *fault) error {
			after, err := time.ParseDuration(strings.TrimPrefix(f.Detail, "after "))
			if err != nil {
				return err
			}
			e.nudge()
			pause(ctx, after)
			return stepDownFor(ctx, e, f.Hold)
		},
	},
	{
		// A seqd gives back its blocks on SIGTERM while the primary steps
		// down: a little before the stepdown, or a little after it.
		name:      "stepdown-giveback",
		weight:    1,
		available: func(e *env) bool { return e.replSet },
		draw: func(rng *rand.Rand, f *fault) {
			offset := time.Duration(rng.IntN(1000)-500) * time.Millisecond
			f.Target, f.Hold, f.Detail = rng.IntN(instances), stepDownSecs(rng), "sigterm at "+offset.String()
		},
		run: func(ctx context.Context, t *testing.T, e *env, f *fault) error {
			offset, err := time.ParseDuration(strings.TrimPrefix(f.Detail, "sigterm at "))
			if err != nil {
				return err
			}
			in := e.c.insts[f.Target]
			stopped := make(chan error, 1)
			sigterm := func() { // ends within its 15 s, waited for below
				sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
				defer cancel()
				stopped <- in.stop(sctx)
			}
			if offset < 0 {
				go sigterm()
				pause(ctx, -offset)
				err = stepDown(ctx, e.c.store, int(f.Hold/time.Second))
			} else {
				err = stepDown(ctx, e.c.store, int(f.Hold/time.Second))
				pause(ctx, offset)
				go sigterm()
			}
			serr := <-stopped
			pause(ctx, time.Until(f.At.Add(f.Hold)))
			if err == nil {
				err = waitPrimary(ctx, e.c.store)
			}
			if rerr := in.start(context.WithoutCancel(ctx)); rerr != nil {
				return rerr
			}
			if serr != nil {
				return fmt.Errorf("SIGTERM: %w", serr)
			}
			return err
		},
	},
	{
		// A seqd is paused past its lease while the admin switches its cached
		// names to strict; the others drain and answer strict, then the
		// primary steps down, and the paused seqd wakes while it is down: its
		// leases have run out and it cannot learn of the switch, so it must
		// not serve its old blocks.
		name:      "stepdown-pause",
		weight:    4, // as often as a pause
		available: func(e *env) bool { return e.replSet },
		draw: func(rng *rand.Rand, f *fault) {
			at := drainWait + time.Duration(200+rng.IntN(800))*time.Millisecond
			f.Target, f.Hold = rng.IntN(instances), lease+time.Duration(1000+rng.IntN(2000))*time.Millisecond
			secs := min(5, int((f.Hold-at)/time.Second)+1+rng.IntN(2)) // past the wake
			f.Detail = fmt.Sprintf("stepdown at %dms for %ds", at.Milliseconds(), secs)
		},
		run: func(ctx context.Context, t *testing.T, e *env, f *fault) error {
			var ms, secs int
			if _, err := fmt.Sscanf(f.Detail, "stepdown at %dms for %ds", &ms, &secs); err != nil {
				return err
			}
			at := time.Duration(ms) * time.Millisecond
			in := e.c.insts[f.Target]
			if err := in.signal(syscall.SIGSTOP); err != nil {
				return err
			}
			e.nudge()
			pause(ctx, at)
			err := stepDown(ctx, e.c.store, secs)
			down := time.Now()
			pause(ctx, time.Until(f.At.Add(f.Hold)))
			if cerr := in.signal(syscall.SIGCONT); cerr != nil {
				return cerr
			}
			if err != nil {
				return err
			}
			pause(ctx, time.Until(down.Add(time.Duration(secs)*time.Second)))
			return waitPrimary(ctx, e.c.store)
		},
	},
	{
		// The store runs a write and its answer is lost on the way: the
		// driver retries it with the same transaction number, and the store
		// must answer from its record of the first (the relay passes the
		// retry's answer). Either the next few writes' replies, or each with
		// a probability for a while.
		name:      "drop-replies",
		weight:    6, // costs a correct store nothing: every request still succeeds
		available: func(e *env) bool { return e.c.insts[0].relay != nil },
		draw: func(rng *rand.Rand, f *fault) {
			f.Target, f.Hold = rng.IntN(instances), time.Duration(1000+rng.IntN(4000))*time.Millisecond
			if rng.IntN(2) == 0 {
				f.Detail = fmt.Sprintf("next %d", 1+rng.IntN(5))
			} else {
				f.Detail = fmt.Sprintf("p %.1f", []float64{0.1, 0.3, 0.5, 1}[rng.IntN(4)])
			}
		},
		run: func(ctx context.Context, t *testing.T, e *env, f *fault) error {
			r := e.c.insts[f.Target].relay
			before := r.WriteRepliesDropped()
			var n int
			var p float64
			switch {
			case strings.HasPrefix(f.Detail, "next "):
				if _, err := fmt.Sscanf(f.Detail, "next %d", &n); err != nil {
					return err
				}
				r.DropWriteReplies(n)
			default:
				if _, err := fmt.Sscanf(f.Detail, "p %g", &p); err != nil {
					return err
				}
				r.DropWriteRepliesFor(p, f.Hold)
			}
			pause(ctx, f.Hold)
			r.StopDropping()
			f.Detail += fmt.Sprintf(": %d dropped", r.WriteRepliesDropped()-before)
			return nil
		},
	},
}

// stepDownSecs draws how long a stepdown lasts: 1 to 5 s, whole seconds as
// replSetStepDown takes them.
func stepDownSecs(rng *rand.Rand) time.Duration {
	return time.Duration(1+rng.IntN(5)) * time.Second
}

// stepDownFor steps the primary down for hold and waits until it is primary
// again.
func stepDownFor(ctx context.Context, e *env, hold time.Duration) error {
	if err := stepDown(ctx, e.c.store, int(hold/time.Second)); err != nil {
		return err
	}
	pause(ctx, hold)
	return waitPrimary(ctx, e.c.store)
}

// schedule draws the faults of a run of duration d from rng: after a quiet
// spell of 0.5 to 3 s, a fault whose precondition holds, until the planned
// time (quiet spells and holds) covers d.
func schedule(rng *rand.Rand, e *env, d time.Duration) []fault {
	var kinds []faultKind // each as many times as its weight
	for _, k := range faultKinds {
		for range k.weight {
			if k.available(e) {
				kinds = append(kinds, k)
			}
		}
	}
	var out []fault
	for planned := time.Duration(0); planned < d && len(out) < 1000; {
		k := kinds[rng.IntN(len(kinds))]
		f := fault{Kind: k.name, Quiet: time.Duration(500+rng.IntN(2500)) * time.Millisecond}
		k.draw(rng, &f)
		planned += f.Quiet + f.Hold + time.Second // a restart takes about a second
		out = append(out, f)
	}
	return out
}

func kindNamed(name string) faultKind {
	for _, k := range faultKinds {
		if k.name == name {
			return k
		}
	}
	panic("no fault kind " + name)
}

// runSchedule runs the faults one after another, each undone before the next,
// until the schedule or the run's time (until) is over, and returns them with
// their times.
func runSchedule(ctx context.Context, t *testing.T, e *env, faults []fault, until time.Time) []fault {
	var ran []fault
	for _, f := range faults {
		pause(ctx, f.Quiet)
		if ctx.Err() != nil || time.Now().After(until) {
			break
		}
		f.At = time.Now()
		if err := kindNamed(f.Kind).run(ctx, t, e, &f); err != nil {
			f.Err = err.Error()
		}
		f.Undone = time.Now()
		ran = append(ran, f)
	}
	return ran
}

// waitStore waits until the suite's own client reaches the store: after a
// restart, the first command on each of its old connections fails.
func waitStore(ctx context.Context, st *backend.Backend) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	var err error
	for ctx.Err() == nil {
		pctx, pcancel := context.WithTimeout(ctx, 2*time.Second)
		err = st.Client.Database("admin").RunCommand(pctx, bson.D{{Key: "ping", Value: 1}}).Err()
		pcancel()
		if err == nil {
			return nil
		}
		pause(ctx, 100*time.Millisecond)
	}
	return fmt.Errorf("the store does not answer: %w", err)
}

// nudge tells the admin that an instance is cut off (traffic.nudge).
func (e *env) nudge() {
	select {
	case e.tr.nudge <- struct{}{}:
	default:
	}
}
