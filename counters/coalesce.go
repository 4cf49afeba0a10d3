package counters

import (
	"context"
	"errors"
	"math"
	"slices"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
)

// A reserveFunc reserves n values of name in one round trip and returns the values
// it got: first … first+count-1. count is n, except for an Optimistic write that
// another process overtook: it may then get a first part of the n, at least one
// value. The coalescer serves that many of the batch's callers and queues the rest
// again, in front.
//
// build, when not nil, makes the document that stores value id for the batch's i-th
// value (Optimistic, whose callers reserve one value each and may bring their own
// documents). A *docError is the fault of that document alone: the values before
// it are the count returned, its caller gets the wrapped error, and the callers
// after it are queued again.
type reserveFunc func(ctx context.Context, name string, n int64, build func(i int, id int64) any) (first, count int64, err error)

// docError is an error that concerns one caller's document, not the batch.
type docError struct{ err error }

func (e *docError) Error() string { return e.err.Error() }
func (e *docError) Unwrap() error { return e.err }

// A coalescer merges concurrent reservations for the same name into batches, one
// write each, with up to depth writes of a name in flight at once. The package
// comment describes its behaviour. It is separate from Counter and Optimistic, which
// both use it, so that tests can give it a fake reserveFunc. It is also their one
// way to the reserveFunc when a call writes alone: with Options.NoCoalesce, or
// inside a session.
//
// A batch goes out as soon as it has callers and fewer than depth writes of its
// name are in flight, and takes every caller waiting then, in arrival order. The
// first write of an idle name runs on its caller's goroutine (lead); a write
// that ends starts the next batch on its own goroutine, or on a new one if it was
// a caller's. A solo write waits until no write of its name is in flight, and no
// write starts until it has returned. A name with callers waiting or writes in
// flight has a queue; the write that leaves it with neither removes it in the
// same critical section.
type coalescer struct {
	reserve reserveFunc
	timeout time.Duration // deadline for a batch with a caller that has none
	off     bool          // every call writes alone (Options.NoCoalesce)
	depth   int           // writes of one name in flight at once, at least 1
	batched func(callers int)
	// maxCallers, when not 0, bounds the callers one write serves; the rest wait
	// for the next.
	maxCallers int

	mu     sync.Mutex
	queues map[string]*queue
	wg     sync.WaitGroup // one count per queue: Wait returns once no write is in flight

	// queued, if not nil, is called after a caller has joined name's queue. It is a
	// hook for tests, so they can know the arrival order without sleeping.
	queued func(name string)
}

// newCoalescer returns a coalescer over reserve, with up to depth writes of a
// name in flight, that tells batched, if not nil, about every write that served
// callers. opts must have its defaults.
func newCoalescer(reserve reserveFunc, batched func(callers int), opts Options, depth int) *coalescer {
	return &coalescer{
		reserve: reserve,
		timeout: opts.WriteTimeout,
		off:     opts.NoCoalesce,
		depth:   max(depth, 1),
		batched: batched,
		queues:  make(map[string]*queue),
	}
}

// A queue holds the callers of one name that have not joined a write yet, and
// counts its writes in flight. Its fields are guarded by coalescer.mu.
type queue struct {
	waiting  []*waiter // in arrival order
	inFlight int       // writes sent and not yet returned
	soloOut  bool      // the write in flight is a solo one

	// tooMany, when not 0, is a count that a write proved the name cannot take,
	// with that write's error: a caller asking for as many or more gets the error
	// at once, without a write of its own. It lives as long as the queue, that is
	// while callers of the name keep coming. Guarded by coalescer.mu.
	tooMany   int64
	exhausted error
	// forgot counts forget's calls: a write sent before the latest one read
	// the name before it was moved back, and proves nothing about it now.
	forgot int64
}

// A waiter is one caller.
type waiter struct {
	ctx context.Context
	n   int64
	doc func(id int64) any // its document, for Optimistic; nil for Counter
	// solo, when not nil, is this caller's own write, made in its turn and alone:
	// a batch holds such a caller and nobody else. Counter's block fetches and
	// give-backs are solo, so that they stay in order with the name's other writes.
	solo  reserveFunc
	batch *batch       // the write it joined, or nil; guarded by coalescer.mu
	done  chan outcome // buffered, so that the flusher never blocks on a caller who left
}

type outcome struct {
	r    Range
	note any // what the write told its callers (setNote)
	err  error
}

// noteKey keys, in the context a write runs on, where it may leave a note
// for every caller it serves: a periodic sequence's write says which period
// its values belong to. A value, not a return of reserveFunc, so that the
// writes that have nothing to say (Optimistic's, block fetches) stay as they
// are.
type noteKey struct{}

// withNote returns ctx with room for a note at *note.
func withNote(ctx context.Context, note *any) context.Context {
	return context.WithValue(ctx, noteKey{}, note)
}

// setNote leaves v for the callers of the write that runs on ctx.
func setNote(ctx context.Context, v any) {
	if p, ok := ctx.Value(noteKey{}).(*any); ok {
		*p = v
	}
}

// A batch is one write and the callers it serves.
type batch struct {
	waiters []*waiter
	sum     int64
	ctx     context.Context
	cancel  context.CancelFunc
	note    any   // set by the write (setNote), read after it returned
	present int   // callers still waiting for the result; guarded by coalescer.mu
	forgot  int64 // the queue's forgot when the write was sent
}

// do reserves n values of name, sharing a write with concurrent callers. doc, when
// not nil, makes the caller's document for its value; see reserveFunc.
//
// A caller inside a session writes alone, on its own context: its write belongs
// to its session and must not carry other callers' values. (Counter and
// Optimistic refuse a call inside a transaction before it comes here.)
func (c *coalescer) do(ctx context.Context, name string, n int64, doc func(id int64) any) (Range, error) {
	o := c.join(ctx, name, &waiter{ctx: ctx, n: n, doc: doc, done: make(chan outcome, 1)})
	return o.r, o.err
}

// doNote is do that also returns the note the write left (setNote), or nil.
func (c *coalescer) doNote(ctx context.Context, name string, n int64) (Range, any, error) {
	o := c.join(ctx, name, &waiter{ctx: ctx, n: n, done: make(chan outcome, 1)})
	return o.r, o.note, o.err
}

// solo runs write for name in the queue's order, alone: after the writes for
// name that are pending or in flight, and before those of callers who come
// later. write gets n and returns what it reserved, as a reserveFunc does; with
// Options.NoCoalesce or inside a session it runs at once, as every call does.
func (c *coalescer) solo(ctx context.Context, name string, n int64, write reserveFunc) (Range, error) {
	o := c.join(ctx, name, &waiter{ctx: ctx, n: n, solo: write, done: make(chan outcome, 1)})
	return o.r, o.err
}

// writesAlone reports whether a call on ctx makes its write alone, at once,
// outside the name's queue.
func (c *coalescer) writesAlone(ctx context.Context) bool {
	return c.off || mongo.SessionFromContext(ctx) != nil
}

// join queues w for name and waits for its outcome.
func (c *coalescer) join(ctx context.Context, name string, w *waiter) outcome {
	n := w.n
	if c.writesAlone(ctx) {
		var note any
		first, count, err := c.writer(w)(withNote(ctx, &note), name, n, builder([]*waiter{w}))
		return c.single(w, first, count, note, err)
	}
	if err := ctx.Err(); err != nil {
		return outcome{err: err}
	}
	c.mu.Lock()
	q, ok := c.queues[name]
	if !ok {
		q = &queue{}
		c.queues[name] = q
		c.wg.Add(1)
	}
	if q.tooMany != 0 && n >= q.tooMany && w.solo == nil {
		err := q.exhausted
		c.mu.Unlock()
		return outcome{err: err}
	}
	if len(q.waiting) == 0 && c.mayStart(q, w) {
		c.sent(q, w)
		forgot := q.forgot
		c.mu.Unlock()
		return c.lead(ctx, name, q, w, forgot)
	}
	q.waiting = append(q.waiting, w)
	c.mu.Unlock()
	if c.queued != nil {
		c.queued(name)
	}

	select {
	case o := <-w.done:
		return o
	case <-ctx.Done():
	}
	c.leave(name, q, w)
	select {
	case o := <-w.done:
		// The write finished while we were leaving. Take the values rather than
		// leave a gap.
		return o
	default:
		return outcome{err: ctx.Err()}
	}
}

// lead makes the write for a caller who found nobody waiting for name and room for
// a write, on the caller's own goroutine: when callers come one at a time this
// spares a goroutine and two hand-offs between threads per call. Callers who arrive
// meanwhile queue as usual; once this write is done, the batches they form run on
// goroutines of their own. The write runs on a fresh context, as a batch's does,
// with the caller's deadline (or now+timeout), and is cancelled when the caller
// gives up.
// forgot is the queue's forgot when the write was counted in flight.
func (c *coalescer) lead(ctx context.Context, name string, q *queue, w *waiter, forgot int64) outcome {
	if c.queued != nil {
		c.queued(name)
	}
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(c.timeout)
	}
	wctx, cancel := context.WithDeadline(context.Background(), deadline)
	stop := context.AfterFunc(ctx, cancel)
	var note any
	first, count, err := c.writer(w)(withNote(wctx, &note), name, w.n, builder([]*waiter{w}))
	stop()
	cancel()

	c.mu.Lock()
	c.noteExhausted(q, w.n, err, forgot)
	if b := c.returned(name, q); b != nil {
		go c.flush(name, q, b)
	}
	c.mu.Unlock()

	if err != nil && ctx.Err() != nil {
		return outcome{err: ctx.Err()}
	}
	return c.single(w, first, count, note, err)
}

// single answers w, whose write served it alone: count values from first, or err.
// A caller gets all n values it asked for: only Optimistic writes can come up
// short, and its callers ask for one. A solo write may return fewer, and its
// caller gets what it returned.
func (c *coalescer) single(w *waiter, first, count int64, note any, err error) outcome {
	if err != nil {
		if de, ok := err.(*docError); ok {
			err = de.err
		}
		return outcome{err: err}
	}
	if w.solo != nil {
		return outcome{r: Range{First: first, Last: first + count - 1}, note: note}
	}
	if c.batched != nil {
		c.batched(1)
	}
	return outcome{r: Range{First: first, Last: first + w.n - 1}, note: note}
}

// writer returns the write that serves w: its own, or the coalescer's.
func (c *coalescer) writer(w *waiter) reserveFunc {
	if w.solo != nil {
		return w.solo
	}
	return c.reserve
}

// builder returns the reserveFunc's build for a batch of waiters, or nil if they
// bring no documents.
func builder(ws []*waiter) func(i int, id int64) any {
	if ws[0].doc == nil {
		return nil
	}
	return func(i int, id int64) any { return ws[i].doc(id) }
}

// forget drops what a write proved about name's capacity: a forced Set may have
// moved it back, so that bigger counts fit again.
func (c *coalescer) forget(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if q := c.queues[name]; q != nil {
		q.tooMany, q.exhausted = 0, nil
		q.forgot++
	}
}

// noteExhausted records on q that a write of n values failed with err, if err is
// ErrExhausted: callers asking for n or more are then answered at once. forgot is
// q.forgot when the write was sent: a forget since then makes its error stale.
// c.mu must be held.
func (c *coalescer) noteExhausted(q *queue, n int64, err error, forgot int64) {
	var p periodExhausted
	if errors.As(err, &p) || forgot != q.forgot {
		return // the next period starts at 1, or the name was moved back since: not for the queue's life
	}
	if errors.Is(err, ErrExhausted) && (q.tooMany == 0 || n < q.tooMany) {
		q.tooMany, q.exhausted = n, err
	}
}

// periodExhausted is an ErrExhausted of a periodic sequence's period: it
// lasts until the next period starts at 1, so noteExhausted does not keep it.
type periodExhausted struct{ error }

func (e periodExhausted) Unwrap() error { return e.error }

// refuse answers w with q's exhausted error if w asks for too many, and reports
// whether it did. c.mu must be held.
func (c *coalescer) refuse(q *queue, w *waiter) bool {
	if q.tooMany == 0 || w.n < q.tooMany || w.solo != nil {
		return false
	}
	w.done <- outcome{err: q.exhausted}
	return true
}

// leave takes a caller who has stopped waiting out of its queue. If it has already
// joined a write, leave cancels that write once no caller of it is left. A solo
// caller that leaves may have held back the callers behind it: what may start
// then starts, on goroutines of its own.
func (c *coalescer) leave(name string, q *queue, w *waiter) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if b := w.batch; b != nil {
		b.present--
		if b.present == 0 {
			b.cancel()
		}
		return
	}
	for i, x := range q.waiting {
		if x == w {
			q.waiting = append(q.waiting[:i], q.waiting[i+1:]...)
			break
		}
	}
	c.startAll(name, q)
}

// mayStart reports whether a write for w may be sent now: fewer than depth writes
// of q's name in flight and none of them solo, and none at all if w's is solo.
// c.mu must be held.
func (c *coalescer) mayStart(q *queue, w *waiter) bool {
	if w.solo != nil {
		return q.inFlight == 0
	}
	return q.inFlight < c.depth && !q.soloOut
}

// sent counts a write for w, about to be sent, as in flight. c.mu must be held.
func (c *coalescer) sent(q *queue, w *waiter) {
	q.inFlight++
	q.soloOut = w.solo != nil
}

// returned counts one of name's writes as returned and starts what may start now.
// It returns a batch for the caller to write, and runs any other on a goroutine of
// its own; nil if nothing may start. With nobody waiting and nothing in flight it
// removes the queue. c.mu must be held.
func (c *coalescer) returned(name string, q *queue) *batch {
	q.inFlight--
	q.soloOut = false
	mine := c.next(q)
	c.startAll(name, q)
	if mine == nil && q.inFlight == 0 && len(q.waiting) == 0 {
		delete(c.queues, name)
		c.wg.Done()
	}
	return mine
}

// startAll starts every batch of q that may start now, each on a goroutine of its
// own. c.mu must be held.
func (c *coalescer) startAll(name string, q *queue) {
	for b := c.next(q); b != nil; b = c.next(q) {
		go c.flush(name, q, b)
	}
}

// flush writes b, then each batch that its return lets start, until none may.
func (c *coalescer) flush(name string, q *queue, b *batch) {
	for b != nil {
		c.write(name, q, b)
		c.mu.Lock()
		b = c.returned(name, q)
		c.mu.Unlock()
	}
}

// next forms a batch from q's waiting callers, in arrival order, and counts it in
// flight, if a write may start and a caller is waiting for one; otherwise it
// returns nil. c.mu must be held.
func (c *coalescer) next(q *queue) *batch {
	if len(q.waiting) == 0 {
		return nil
	}
	b := &batch{}
	taken := 0
	for _, w := range q.waiting {
		if w.ctx.Err() != nil || c.refuse(q, w) {
			// Its caller is leaving, or its answer is known. Drop it now so that
			// it reserves nothing.
			taken++
			continue
		}
		if b.sum > math.MaxInt64-w.n || c.maxCallers > 0 && len(b.waiters) == c.maxCallers {
			break // the sum would overflow, or the batch is full: it waits for the next
		}
		if len(b.waiters) == 0 && !c.mayStart(q, w) {
			break // no write may go out for the first caller: none goes out
		}
		if len(b.waiters) > 0 && (w.solo != nil || b.waiters[0].solo != nil) {
			break // a solo write goes alone, in its turn
		}
		b.sum += w.n
		b.waiters = append(b.waiters, w)
		taken++
	}
	switch rest := q.waiting[taken:]; {
	case len(rest) == 0:
		q.waiting = nil
	case taken > 0:
		q.waiting = append([]*waiter(nil), rest...)
	}
	if len(b.waiters) == 0 {
		return nil
	}
	c.sent(q, b.waiters[0])
	c.start(b)
	b.forgot = q.forgot
	return b
}

// start gives b its context and makes its callers members of it. c.mu must be held.
//
// The context has no cancellation from any single caller, so no caller can fail the
// others. Its deadline is the latest among the callers. A caller without a deadline
// counts as now+timeout. Waiting any longer helps nobody. leave cancels the
// context once every caller has gone.
func (c *coalescer) start(b *batch) {
	var deadline time.Time
	unbounded := false
	for _, w := range b.waiters {
		if d, ok := w.ctx.Deadline(); ok {
			if d.After(deadline) {
				deadline = d
			}
		} else {
			unbounded = true
		}
		w.batch = b
	}
	if d := time.Now().Add(c.timeout); unbounded && d.After(deadline) {
		deadline = d
	}
	// A fresh context, not one derived from a caller's: a caller's values include
	// its MongoDB session, and a batch must not run inside one caller's transaction.
	b.ctx, b.cancel = context.WithDeadline(context.Background(), deadline)
	b.ctx = withNote(b.ctx, &b.note)
	b.present = len(b.waiters)
}

// write runs b's write and hands every caller its share of the result.
func (c *coalescer) write(name string, q *queue, b *batch) {
	first, count, err := c.writer(b.waiters[0])(b.ctx, name, b.sum, builder(b.waiters))
	b.cancel()
	if w := b.waiters[0]; w.solo != nil {
		w.done <- c.single(w, first, count, b.note, err)
		return
	}
	if errors.Is(err, ErrExhausted) {
		c.mu.Lock()
		c.noteExhausted(q, b.sum, err, b.forgot)
		c.mu.Unlock()
		if len(b.waiters) > 1 {
			// The batch as a whole does not fit, but its first callers may. Serve
			// them one at a time, still in arrival order; once a write proves that
			// k values do not fit, callers of k or more are answered at once.
			for _, w := range b.waiters {
				if single := c.alone(q, w); single != nil {
					c.write(name, q, single)
				}
			}
			return
		}
	}
	if err != nil && !isDocError(err) {
		count = 0
	}

	// The values go, in arrival order, to the callers they cover.
	served, values := 0, int64(0)
	for _, w := range b.waiters {
		if w.n > count-values {
			break
		}
		values += w.n
		served++
	}
	if served > 0 && c.batched != nil {
		c.batched(served)
	}
	for _, w := range b.waiters[:served] {
		w.done <- outcome{r: Range{First: first, Last: first + w.n - 1}, note: b.note}
		first += w.n
	}
	rest := b.waiters[served:]
	switch {
	case len(rest) == 0:
	case err == nil:
		c.requeue(q, rest)
	case isDocError(err):
		rest[0].done <- outcome{err: errors.Unwrap(err)}
		c.requeue(q, rest[1:])
	default:
		for _, w := range rest {
			w.done <- outcome{err: err}
		}
	}
}

func isDocError(err error) bool {
	_, ok := err.(*docError)
	return ok
}

// requeue puts callers that a short write did not serve back in front of name's
// queue, in their order, for the next write.
func (c *coalescer) requeue(q *queue, ws []*waiter) {
	if len(ws) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, w := range ws {
		w.batch = nil
	}
	q.waiting = append(slices.Clip(ws), q.waiting...)
}

// alone moves w into a batch of its own, or returns nil if w's caller has gone or
// has had its answer.
func (c *coalescer) alone(q *queue, w *waiter) *batch {
	c.mu.Lock()
	defer c.mu.Unlock()
	if w.ctx.Err() != nil || c.refuse(q, w) {
		return nil
	}
	b := &batch{waiters: []*waiter{w}, sum: w.n, forgot: q.forgot}
	c.start(b)
	return b
}
