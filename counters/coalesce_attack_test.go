package counters

// Hostile tests of the coalescer with up to depth (K) writes of a name in
// flight: real-time order, no value twice, the bound on writes in flight and
// the solo barrier, and liveness (every caller answered, every queue removed,
// no goroutine left), with writes that overtake one another, fail, time out,
// are abandoned, exhaust the name, or would overflow the batch sum.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seqd/seqd/internal/history"
)

// attackWait bounds every wait of these tests that is not bounded by the
// test's own context: a wait that runs out is a failure, never a step.
const attackWait = 10 * time.Second

// waitCtx returns a context that ends with the test or after attackWait.
func waitCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), attackWait)
	t.Cleanup(cancel)
	return ctx
}

// recv waits for a call's result, within attackWait.
func recv(t *testing.T, out <-chan call, what string) call {
	t.Helper()
	select {
	case c := <-out:
		return c
	case <-waitCtx(t).Done():
		t.Fatalf("%s: no answer within %v", what, attackWait)
		return call{}
	}
}

// nextWrite waits for the next write to reach f, within attackWait, and checks its size.
func nextWrite(t *testing.T, f *fakeStore, n int64) *fakeWrite {
	t.Helper()
	select {
	case w := <-f.writes:
		if w.n != n {
			t.Fatalf("write of %d values, want %d", w.n, n)
		}
		return w
	case <-waitCtx(t).Done():
		t.Fatalf("no write of %d values within %v", n, attackWait)
		return nil
	}
}

// startSolo runs a solo write of n values for name over f (a block fetch, say)
// and returns once it has joined the queue or started as lead.
func startSolo(ctx context.Context, h *harness, f *fakeStore, name string, n int64) <-chan call {
	out := make(chan call, 1)
	go func() {
		r, err := h.c.solo(ctx, name, n, f.reserve)
		out <- call{r, err}
	}()
	<-h.joined
	return out
}

// queueState is what the coalescer holds for name now.
func queueState(c *coalescer, name string) (exists bool, inFlight, waiting int, soloOut, soloWaiting bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	q := c.queues[name]
	if q == nil {
		return false, 0, 0, false, false
	}
	for _, w := range q.waiting {
		soloWaiting = soloWaiting || w.solo != nil
	}
	return true, q.inFlight, len(q.waiting), q.soloOut, soloWaiting
}

// TestAttackSoloLeavingUnblocksCallersBehindIt: with two writes allowed and one
// in flight, a solo write (a block fetch) queues behind it, and a caller queues
// behind the solo write, as it must. The solo caller gives up. Now the caller
// has nobody ahead of it and fewer than two writes are in flight: its batch
// must go out ("a batch goes out as soon as it has callers and fewer than K
// writes are in flight"), not wait for the unrelated write in flight to return.
func TestAttackSoloLeavingUnblocksCallersBehindIt(t *testing.T) {
	f := newFakeStore(true)
	h := newPipelineHarness(t, f, 2)
	ctx := context.Background()

	a := h.start(ctx, "s", 1)
	wa := nextWrite(t, f, 1) // held: one write of two in flight
	soloCtx, leave := context.WithCancel(ctx)
	s := startSolo(soloCtx, h, f, "s", 10) // waits for a's write, as it must
	c := h.start(ctx, "s", 2)              // waits behind the solo write, as it must
	noWrite(t, f)

	leave()
	if got := recv(t, s, "solo caller"); !errors.Is(got.err, context.Canceled) {
		t.Fatalf("solo caller got %v, %v; want context.Canceled", got.r, got.err)
	}
	// Nothing else runs now: a's write is held, c waits for its answer. So
	// whatever the coalescer does about c it has started in leave; a fix that
	// sends c's write from a goroutine of its own gets two seconds for it.
	var wc *fakeWrite
	wait := time.NewTimer(2 * time.Second)
	defer wait.Stop()
	select {
	case wc = <-f.writes:
	case <-wait.C:
	}
	_, inFlight, waiting, soloOut, soloWaiting := queueState(h.c, "s")
	stalled := inFlight < h.c.depth && waiting > 0 && !soloOut && !soloWaiting
	if wc == nil {
		t.Errorf("after the solo caller left: %d of %d writes in flight, %d caller waiting with nobody ahead of it, stalled=%v; "+
			"want its write out now, not once the unrelated write in flight returns", inFlight, h.c.depth, waiting, stalled)
	}

	wa.release <- nil
	expectRange(t, recv(t, a, "a"), 1, 1)
	if wc == nil {
		wc = nextWrite(t, f, 2) // only now does c's write go out
	}
	wc.release <- nil
	if got := recv(t, c, "c"); got.err != nil {
		t.Errorf("c got %v", got.err)
	}
}

// TestAttackSoloCancelledBehindWritesRemovesQueue: a solo caller alone in the
// queue, behind two writes in flight, gives up; once both writes return the
// queue is gone and nothing was written for it.
func TestAttackSoloCancelledBehindWritesRemovesQueue(t *testing.T) {
	for _, order := range []string{"a then b", "b then a"} {
		t.Run(order, func(t *testing.T) {
			f := newFakeStore(true)
			h := newPipelineHarness(t, f, 2)
			ctx := context.Background()
			a := h.start(ctx, "q", 1)
			wa := nextWrite(t, f, 1)
			b := h.start(ctx, "q", 1)
			wb := nextWrite(t, f, 1)
			soloCtx, leave := context.WithCancel(ctx)
			s := startSolo(soloCtx, h, f, "q", 5)
			leave()
			if got := recv(t, s, "solo"); !errors.Is(got.err, context.Canceled) {
				t.Fatalf("solo got %v, %v", got.r, got.err)
			}
			first, second := wa, wb
			if order == "b then a" {
				first, second = wb, wa
			}
			first.release <- nil
			second.release <- nil
			ra, rb := recv(t, a, "a"), recv(t, b, "b")
			if ra.err != nil || rb.err != nil || ra.r == rb.r {
				t.Errorf("a %v %v, b %v %v", ra.r, ra.err, rb.r, rb.err)
			}
			noWrite(t, f)
			if exists, _, _, _, _ := queueState(h.c, "q"); exists {
				t.Errorf("queue left after every write returned")
			}
		})
	}
}

// loggedStore wraps f: every write logs its start and end, and whether it is
// solo, and the wrapper checks the solo barrier and the bound on writes in
// flight as the writes reach the store.
type loggedStore struct {
	t     *testing.T
	f     *fakeStore
	depth int

	mu     sync.Mutex
	log    []string
	normal int
	solo   int
}

func (l *loggedStore) wrap(solo bool) reserveFunc {
	return func(ctx context.Context, name string, n int64, build func(int, int64) any) (int64, int64, error) {
		l.mu.Lock()
		kind := "write"
		if solo {
			kind = "solo"
			if l.normal > 0 || l.solo > 0 {
				l.t.Errorf("solo write of %d starts beside %d writes and %d solo writes", n, l.normal, l.solo)
			}
			l.solo++
		} else {
			if l.solo > 0 {
				l.t.Errorf("write of %d starts beside a solo write", n)
			}
			l.normal++
			if l.normal > l.depth {
				l.t.Errorf("%d writes in flight, want at most %d", l.normal, l.depth)
			}
		}
		l.log = append(l.log, fmt.Sprintf("start %s %d", kind, n))
		l.mu.Unlock()
		defer func() {
			l.mu.Lock()
			if solo {
				l.solo--
			} else {
				l.normal--
			}
			l.log = append(l.log, fmt.Sprintf("end %s %d", kind, n))
			l.mu.Unlock()
		}()
		return l.f.reserve(ctx, name, n, build)
	}
}

// TestAttackExhaustedBatchBesideAnotherWrite: with two writes allowed, a batch
// that asks for more than remains is served one caller at a time while
// another write takes values beside it; a solo write queued meanwhile goes
// only after the batch's last single write and the other write; and the
// answers keep real-time order and `tooMany` answers later callers at once.
func TestAttackExhaustedBatchBesideAnotherWrite(t *testing.T) {
	f := newFakeStore(true)
	f.seq["e"] = math.MaxInt64 - 4 // 4 values left
	h := newPipelineHarness(t, f, 2)
	l := &loggedStore{t: t, f: f, depth: 2}
	h.c.reserve = l.wrap(false)
	ctx := context.Background()

	x := h.start(ctx, "e", 1)
	wx := nextWrite(t, f, 1) // 1 of 2
	y := h.start(ctx, "e", 1)
	wy := nextWrite(t, f, 1) // 2 of 2
	a := h.start(ctx, "e", 2)
	b := h.start(ctx, "e", 3)
	c := h.start(ctx, "e", 1)
	// the solo write queues behind a, b and c
	s := make(chan call, 1)
	go func() {
		r, err := h.c.solo(ctx, "e", 1, l.wrap(true))
		s <- call{r, err}
	}()
	<-h.joined
	wx.release <- nil // x takes MaxInt64-3; a, b, c go out together (6 > 3 left)
	expectRange(t, recv(t, x, "x"), math.MaxInt64-3, math.MaxInt64-3)
	wabc := nextWrite(t, f, 6)
	wabc.release <- nil      // does not fit: noted, then one at a time
	wa := nextWrite(t, f, 2) // a alone, held
	wy.release <- nil        // y takes MaxInt64-2, beside a's single write
	expectRange(t, recv(t, y, "y"), math.MaxInt64-2, math.MaxInt64-2)
	// y has returned; a later caller of 6 or more is answered at once
	if _, err := h.c.do(ctx, "e", 6, nil); !errors.Is(err, ErrExhausted) {
		t.Errorf("caller of 6 after a batch of 6 failed: %v, want ErrExhausted at once", err)
	}
	noWrite(t, f) // neither the solo write nor anyone else beside a's single write
	wa.release <- nil
	expectRange(t, recv(t, a, "a"), math.MaxInt64-1, math.MaxInt64)
	nextWrite(t, f, 3).release <- nil // b alone: does not fit
	if got := recv(t, b, "b"); !errors.Is(got.err, ErrExhausted) {
		t.Errorf("b got %v, %v", got.r, got.err)
	}
	nextWrite(t, f, 1).release <- nil // c alone: does not fit (refused only if 1 was proven)
	if got := recv(t, c, "c"); !errors.Is(got.err, ErrExhausted) {
		t.Errorf("c got %v, %v", got.r, got.err)
	}
	nextWrite(t, f, 1).release <- nil // the solo write, last
	if got := recv(t, s, "solo"); !errors.Is(got.err, ErrExhausted) {
		t.Errorf("solo got %v, %v", got.r, got.err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	last := l.log[len(l.log)-2:]
	if want := []string{"start solo 1", "end solo 1"}; !slices.Equal(last, want) {
		t.Errorf("log %q: the solo write was not last and alone", l.log)
	}
}

// TestAttackAbandonedWriteThenLaterCaller: with two writes in flight, every
// caller of the first leaves (it is cancelled), the second returns, and a
// caller who begins after that gets larger values and a write of its own,
// even while the abandoned write is still being torn down.
func TestAttackAbandonedWriteThenLaterCaller(t *testing.T) {
	f := newFakeStore(true)
	h := newPipelineHarness(t, f, 2)
	ctx := context.Background()

	gone, leave := context.WithCancel(ctx)
	a := h.start(gone, "ab", 1)
	wa := nextWrite(t, f, 1)
	b := h.start(ctx, "ab", 1)
	wb := nextWrite(t, f, 1)
	q1 := h.start(gone, "ab", 4) // waits, joins nothing
	q2 := h.start(ctx, "ab", 2)
	leave()
	for _, o := range []<-chan call{a, q1} {
		if got := recv(t, o, "leaver"); !errors.Is(got.err, context.Canceled) {
			t.Errorf("leaver got %v, %v", got.r, got.err)
		}
	}
	<-wa.ctx.Done() // the lead's write is cancelled: its caller left
	w2 := nextWrite(t, f, 2)
	wb.release <- nil
	rb := recv(t, b, "b")
	w2.release <- nil
	r2 := recv(t, q2, "q2")
	later := h.start(ctx, "ab", 1)
	nextWrite(t, f, 1).release <- nil
	rl := recv(t, later, "later")
	if rl.err != nil || rl.r.First <= max(rb.r.Last, r2.r.Last) {
		t.Errorf("later caller got %v, %v; earlier answers %v and %v", rl.r, rl.err, rb.r, r2.r)
	}
}

// TestAttackSumOverflowWithDepth: callers whose counts would push a batch past
// MaxInt64 wait for another batch; with writes to spare it goes at once.
func TestAttackSumOverflowWithDepth(t *testing.T) {
	f := newFakeStore(true)
	h := newPipelineHarness(t, f, 3)
	ctx := context.Background()
	x := h.start(ctx, "o", 1)
	wx := nextWrite(t, f, 1)
	y := h.start(ctx, "o", 1)
	wy := nextWrite(t, f, 1)
	z := h.start(ctx, "o", 1)
	wz := nextWrite(t, f, 1) // 3 of 3
	huge := h.start(ctx, "o", math.MaxInt64-1)
	two := h.start(ctx, "o", 2)
	three := h.start(ctx, "o", 3)
	wx.release <- nil
	recv(t, x, "x")
	wh := nextWrite(t, f, math.MaxInt64-1) // huge alone
	wy.release <- nil
	recv(t, y, "y")
	w5 := nextWrite(t, f, 5) // two and three together, at once
	wz.release <- nil
	recv(t, z, "z")
	w5.release <- nil
	expectRange(t, recv(t, two, "two"), 4, 5)
	expectRange(t, recv(t, three, "three"), 6, 8)
	wh.release <- nil
	if got := recv(t, huge, "huge"); !errors.Is(got.err, ErrExhausted) {
		t.Errorf("huge got %v, %v; want ErrExhausted (8 taken)", got.r, got.err)
	}
}

// --- randomized stress -------------------------------------------------------

// stressStore is a reserveFunc over in-memory counters whose writes overtake
// one another, fail before or after they apply, apply after their caller gave
// up (as a server does with an abandoned write), and check as they start the
// bound on writes in flight and the solo barrier. Every applied range records
// the logical time its write started.
type stressStore struct {
	depth int
	clock *atomic.Int64

	mu       sync.Mutex
	seq      map[string]int64
	normal   map[string]int
	solo     map[string]int
	applied  map[string][]appliedRange
	problems []string
}

type appliedRange struct {
	first, last int64
	started     int64 // logical time the write reached the store
}

var errStress = errors.New("stress: write failed")

func (s *stressStore) problem(format string, args ...any) {
	if len(s.problems) < 20 {
		s.problems = append(s.problems, fmt.Sprintf(format, args...))
	}
}

func (s *stressStore) write(solo bool) reserveFunc {
	return func(ctx context.Context, name string, n int64, _ func(int, int64) any) (int64, int64, error) {
		s.mu.Lock()
		started := s.clock.Add(1)
		if solo {
			if s.normal[name] > 0 || s.solo[name] > 0 {
				s.problem("%s: solo write starts beside %d writes and %d solo", name, s.normal[name], s.solo[name])
			}
			s.solo[name]++
		} else {
			if s.solo[name] > 0 {
				s.problem("%s: write starts beside a solo write", name)
			}
			s.normal[name]++
			if s.normal[name] > s.depth {
				s.problem("%s: %d writes in flight, want at most %d", name, s.normal[name], s.depth)
			}
		}
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			if solo {
				s.solo[name]--
			} else {
				s.normal[name]--
			}
			s.mu.Unlock()
		}()

		for range rand.IntN(16) {
			runtime.Gosched()
		}
		roll := rand.IntN(100)
		switch {
		case roll < 4:
			return 0, 0, errStress // failed before it applied
		case ctx.Err() != nil && roll < 60:
			return 0, 0, ctx.Err() // abandoned before it applied
		}
		s.mu.Lock()
		count := n
		if solo && roll >= 95 && n > 1 {
			count = n - 1 // a block fetch near the end, say: fewer than asked
		}
		if s.seq[name] > math.MaxInt64-count {
			s.mu.Unlock()
			return 0, 0, fmt.Errorf("%w: stress", ErrExhausted)
		}
		first := s.seq[name] + 1
		s.seq[name] += count
		s.applied[name] = append(s.applied[name], appliedRange{first, first + count - 1, started})
		s.mu.Unlock()
		for range rand.IntN(16) {
			runtime.Gosched()
		}
		switch {
		case roll < 8:
			return 0, 0, errStress // applied, answer lost: a gap
		case ctx.Err() != nil:
			return 0, 0, ctx.Err() // applied after its caller gave up: a gap
		}
		return first, count, nil
	}
}

// stressOp is one call of the stress test and what it got.
type stressOp struct {
	name     string
	n        int64
	solo     bool
	began    int64 // logical time
	start    time.Time
	end      time.Time
	r        Range
	err      error
	ctxErr   error // the caller's context's error when the call returned
	deadline time.Time
	seqAtEnd int64 // the store's value for name when the call returned
}

// stressDuration is how long each depth of TestAttackStress runs;
// SEQD_ATTACK_STRESS overrides it (a time.Duration).
func stressDuration(t *testing.T) time.Duration {
	if s := os.Getenv("SEQD_ATTACK_STRESS"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	if testing.Short() {
		return 200 * time.Millisecond
	}
	return time.Second
}

// TestAttackStress runs callers of a few names against stressStore with one to
// four writes in flight: plain calls, solo writes, calls cancelled at random
// points or with deadlines that end mid-write, names near MaxInt64 (the
// exhausted path and tooMany) and counts that overflow a batch's sum. It
// checks every answer: no value twice, real-time order (solo answers
// included), values only from a write that started after the call began, an
// ErrExhausted only when the name really cannot take the count, no other
// errors than the store's, the caller's context's and ErrExhausted; the bound
// on writes in flight and the solo barrier; and that every caller returns,
// every queue goes, and no goroutine is left.
func TestAttackStress(t *testing.T) {
	for _, depth := range []int{1, 2, 3, 4} {
		t.Run(fmt.Sprintf("depth=%d", depth), func(t *testing.T) { attackStress(t, depth) })
	}
}

func attackStress(t *testing.T, depth int) {
	goroutinesBefore := runtime.NumGoroutine()
	clock := new(atomic.Int64)
	s := &stressStore{depth: depth, clock: clock, seq: map[string]int64{}, normal: map[string]int{},
		solo: map[string]int{}, applied: map[string][]appliedRange{}}
	names := []string{"plain", "end", "huge"}
	began := time.Now()
	c := newCoalescer(s.write(false), nil, Options{WriteTimeout: time.Minute}, depth)

	deadline := time.Now().Add(stressDuration(t))
	var mu sync.Mutex
	var ops []stressOp
	var wg sync.WaitGroup
	for g := range 24 {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				kind := names[g%len(names)]
				if rand.IntN(4) == 0 {
					kind = names[rand.IntN(len(names))]
				}
				// a fresh name of its kind every 20ms, so that the names near
				// their end keep some room, and queues come and go
				name := fmt.Sprintf("%s%d", kind, time.Since(began)/(20*time.Millisecond))
				s.mu.Lock()
				if _, ok := s.seq[name]; !ok && kind == "end" {
					s.seq[name] = math.MaxInt64 - 3000
				}
				s.mu.Unlock()
				n := int64(rand.IntN(3) + 1)
				switch {
				case kind == "huge" && rand.IntN(3) == 0:
					n = math.MaxInt64/2 + int64(rand.IntN(3))
				case kind == "end" && rand.IntN(4) == 0:
					n = int64(rand.IntN(40) + 1)
				}
				solo := rand.IntN(12) == 0
				ctx, cancel := context.WithCancel(context.Background())
				switch rand.IntN(6) {
				case 0: // cancelled at some random point
					k := rand.IntN(64)
					go func() {
						for range k {
							runtime.Gosched()
						}
						cancel()
					}()
				case 1: // a deadline that may end mid-write
					ctx, cancel = context.WithTimeout(context.Background(), time.Duration(rand.IntN(200))*time.Microsecond)
				}
				op := stressOp{name: name, n: n, solo: solo, began: clock.Add(1), start: time.Now()}
				if solo {
					op.r, op.err = c.solo(ctx, name, n, s.write(true))
				} else {
					op.r, op.err = c.do(ctx, name, n, nil)
				}
				op.end = time.Now()
				op.ctxErr = ctx.Err()
				op.deadline, _ = ctx.Deadline()
				cancel()
				s.mu.Lock()
				op.seqAtEnd = s.seq[name]
				s.mu.Unlock()
				mu.Lock()
				ops = append(ops, op)
				mu.Unlock()
			}
		})
	}
	callersDone := make(chan struct{})
	go func() { wg.Wait(); close(callersDone) }()
	select {
	case <-callersDone:
	case <-time.After(stressDuration(t) + attackWait):
		buf := make([]byte, 1<<20)
		t.Fatalf("callers stranded: not all returned within %v after the run\n%s", attackWait, buf[:runtime.Stack(buf, true)])
	}
	flushersDone := make(chan struct{})
	go func() { c.wg.Wait(); close(flushersDone) }()
	select {
	case <-flushersDone:
	case <-time.After(attackWait):
		c.mu.Lock()
		left := len(c.queues)
		c.mu.Unlock()
		t.Fatalf("c.wg.Wait did not return within %v after every caller returned; %d queues left", attackWait, left)
	}
	c.mu.Lock()
	if len(c.queues) != 0 {
		t.Errorf("%d queues left", len(c.queues))
	}
	c.mu.Unlock()

	s.mu.Lock()
	for _, p := range s.problems {
		t.Error(p)
	}
	applied := s.applied
	s.mu.Unlock()
	for _, ranges := range applied { // applied in order already; sorted to be sure
		slices.SortFunc(ranges, func(a, b appliedRange) int { return cmpInt64(a.first, b.first) })
	}

	byName := map[string][]history.Op{}
	counts := map[string]int{}
	for i, op := range ops {
		switch {
		case op.err == nil:
			byName[op.name] = append(byName[op.name], history.Op{Client: fmt.Sprint("op", i, "/n=", op.n, "/solo=", op.solo),
				Start: op.start, End: op.end, First: op.r.First, Last: op.r.Last})
			if !op.solo && op.r.Count() != op.n {
				t.Errorf("%s: asked %d, got %v", op.name, op.n, op.r)
			}
			// the write that holds these values started after the call began
			ranges := applied[op.name]
			k := sort.Search(len(ranges), func(k int) bool { return ranges[k].last >= op.r.First })
			switch {
			case k == len(ranges) || ranges[k].first > op.r.First || ranges[k].last < op.r.Last:
				t.Errorf("%s: answer %v lies in no one write", op.name, op.r)
			case ranges[k].started < op.began:
				t.Errorf("%s: answer %v comes from a write that started before the call began", op.name, op.r)
			}
			counts["ok"]++
		case errors.Is(op.err, ErrExhausted):
			if !op.solo && op.seqAtEnd <= math.MaxInt64-op.n {
				t.Errorf("%s: ErrExhausted for %d with the name at %d (room for %d)", op.name, op.n, op.seqAtEnd, uint64(math.MaxInt64-op.seqAtEnd))
			}
			counts["exhausted"]++
		case errors.Is(op.err, errStress):
			counts["store error"]++
		case errors.Is(op.err, context.Canceled) || errors.Is(op.err, context.DeadlineExceeded):
			// A write's context may reach the caller's deadline a moment before the
			// caller's own context notices: the write context's timer fired first.
			atDeadline := errors.Is(op.err, context.DeadlineExceeded) && !op.deadline.IsZero() && !op.end.Before(op.deadline)
			if op.ctxErr == nil && !atDeadline {
				t.Errorf("%s: %v with the caller's context live", op.name, op.err)
			}
			counts["context"]++
		default:
			t.Errorf("%s: unexpected error %v", op.name, op.err)
		}
	}
	for name, h := range byName {
		if res := history.Check(h, history.Options{}); res.Err() != nil {
			t.Errorf("%s: %v", name, res)
		}
	}
	t.Logf("depth %d: %d calls %v", depth, len(ops), counts)

	// goroutines: every flusher and helper ends
	for deadline := time.Now().Add(attackWait); runtime.NumGoroutine() > goroutinesBefore; {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			stacks := string(buf[:runtime.Stack(buf, true)])
			if strings.Contains(stacks, "counters.(*coalescer)") {
				t.Fatalf("goroutines left: %d, before %d\n%s", runtime.NumGoroutine(), goroutinesBefore, stacks)
			}
			break
		}
		runtime.Gosched()
	}
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

var errDocStress = errors.New("stress: duplicate key in another unique index")

// shortWrites wraps s's write as an Optimistic write: each caller asks for one
// value and brings a document; a write may get only a first part of its n
// values (another process overtook it), or stop at one caller's document
// (a *docError).
func (s *stressStore) shortWrites() reserveFunc {
	write := s.write(false)
	return func(ctx context.Context, name string, n int64, build func(int, int64) any) (int64, int64, error) {
		if build == nil {
			s.mu.Lock()
			s.problem("%s: a write of callers with documents has no build", name)
			s.mu.Unlock()
		}
		want := n
		var docErr error
		switch roll := rand.IntN(10); {
		case roll < 2 && n > 1:
			want = 1 + rand.Int64N(n-1) // overtaken after want values
		case roll < 4:
			i := rand.Int64N(n) // the i-th caller's document fails
			if i == 0 {
				return 0, 0, &docError{errDocStress}
			}
			want, docErr = i, &docError{errDocStress}
		}
		first, count, err := write(ctx, name, want, build)
		if err != nil {
			return first, count, err
		}
		if docErr != nil {
			return first, count, docErr
		}
		return first, count, nil
	}
}

// TestAttackStressShortWrites is TestAttackStress for the requeue path,
// Optimistic's: callers of one value with documents, at most 4 per write,
// writes that come up short or fail at one caller's document, cancellations
// and deadlines at random points. Optimistic keeps one write in flight; depth
// 2 shows whether the requeue path would survive more.
func TestAttackStressShortWrites(t *testing.T) {
	for _, depth := range []int{1, 2} {
		t.Run(fmt.Sprintf("depth=%d", depth), func(t *testing.T) {
			goroutinesBefore := runtime.NumGoroutine()
			clock := new(atomic.Int64)
			s := &stressStore{depth: depth, clock: clock, seq: map[string]int64{}, normal: map[string]int{},
				solo: map[string]int{}, applied: map[string][]appliedRange{}}
			c := newCoalescer(s.shortWrites(), nil, Options{WriteTimeout: time.Minute}, depth)
			c.maxCallers = 4
			doc := func(id int64) any { return id }

			deadline := time.Now().Add(stressDuration(t))
			var mu sync.Mutex
			var ops []stressOp
			var wg sync.WaitGroup
			for g := range 16 {
				wg.Go(func() {
					for time.Now().Before(deadline) {
						name := fmt.Sprint("ledger", g%2)
						ctx, cancel := context.WithCancel(context.Background())
						switch rand.IntN(6) {
						case 0:
							k := rand.IntN(64)
							go func() {
								for range k {
									runtime.Gosched()
								}
								cancel()
							}()
						case 1:
							ctx, cancel = context.WithTimeout(context.Background(), time.Duration(rand.IntN(200))*time.Microsecond)
						}
						op := stressOp{name: name, n: 1, began: clock.Add(1), start: time.Now()}
						op.r, op.err = c.do(ctx, name, 1, doc)
						op.end = time.Now()
						op.ctxErr = ctx.Err()
						op.deadline, _ = ctx.Deadline()
						cancel()
						mu.Lock()
						ops = append(ops, op)
						mu.Unlock()
					}
				})
			}
			callersDone := make(chan struct{})
			go func() { wg.Wait(); close(callersDone) }()
			select {
			case <-callersDone:
			case <-time.After(stressDuration(t) + attackWait):
				buf := make([]byte, 1<<20)
				t.Fatalf("callers stranded\n%s", buf[:runtime.Stack(buf, true)])
			}
			flushersDone := make(chan struct{})
			go func() { c.wg.Wait(); close(flushersDone) }()
			select {
			case <-flushersDone:
			case <-time.After(attackWait):
				t.Fatalf("c.wg.Wait did not return within %v", attackWait)
			}
			if len(c.queues) != 0 {
				t.Errorf("%d queues left", len(c.queues))
			}
			for _, p := range s.problems {
				t.Error(p)
			}
			byName := map[string][]history.Op{}
			counts := map[string]int{}
			for i, op := range ops {
				switch {
				case op.err == nil:
					byName[op.name] = append(byName[op.name], history.Op{Client: fmt.Sprint("op", i), Start: op.start, End: op.end, First: op.r.First, Last: op.r.Last})
					ranges := s.applied[op.name]
					k := sort.Search(len(ranges), func(k int) bool { return ranges[k].last >= op.r.First })
					switch {
					case k == len(ranges) || ranges[k].first > op.r.First || ranges[k].last < op.r.Last:
						t.Errorf("%s: answer %v lies in no one write", op.name, op.r)
					case ranges[k].started < op.began:
						t.Errorf("%s: answer %v comes from a write that started before the call began", op.name, op.r)
					}
					counts["ok"]++
				case errors.Is(op.err, errDocStress):
					counts["doc"]++
				case errors.Is(op.err, errStress):
					counts["store error"]++
				case errors.Is(op.err, context.Canceled) || errors.Is(op.err, context.DeadlineExceeded):
					atDeadline := errors.Is(op.err, context.DeadlineExceeded) && !op.deadline.IsZero() && !op.end.Before(op.deadline)
					if op.ctxErr == nil && !atDeadline {
						t.Errorf("%s: %v with the caller's context live", op.name, op.err)
					}
					counts["context"]++
				default:
					t.Errorf("%s: unexpected error %v", op.name, op.err)
				}
			}
			for name, h := range byName {
				if res := history.Check(h, history.Options{}); res.Err() != nil {
					t.Errorf("%s: %v", name, res)
				}
			}
			t.Logf("depth %d: %d calls %v", depth, len(ops), counts)
			for deadline := time.Now().Add(attackWait); runtime.NumGoroutine() > goroutinesBefore && time.Now().Before(deadline); {
				runtime.Gosched()
			}
			if n := runtime.NumGoroutine(); n > goroutinesBefore {
				buf := make([]byte, 1<<20)
				if stacks := string(buf[:runtime.Stack(buf, true)]); strings.Contains(stacks, "counters.(*coalescer)") {
					t.Fatalf("goroutines left: %d, before %d\n%s", n, goroutinesBefore, stacks)
				}
			}
		})
	}
}
