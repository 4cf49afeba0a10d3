package snowflake

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// WorkerCollection is the collection, beside seqd's counters, that holds one
// document per worker id taken:
//
//	{_id: <worker id>, layout: "twitter", holder: "<random token>" or "" when
//	 given back, version: <bumped by every write>, lastMs: <Unix ms>,
//	 leaseMs: <the longest lease a holder took>}
//
// No id of that worker id and layout has a millisecond above lastMs.
const WorkerCollection = "workers"

// ErrLayoutMismatch: the workers collection holds worker ids of another
// layout. Ids of two layouts can be equal, so a deployment keeps one layout
// for good; seqd changes none of those documents.
var ErrLayoutMismatch = errors.New("snowflake: the workers collection is another layout's")

// LeaseOptions configures a Lessor.
type LeaseOptions struct {
	// Lease is how long the Generator makes ids after a write that took or
	// renewed its worker id was sent, on this process's monotonic clock. It
	// is renewed every third of it. Default 15 s.
	Lease time.Duration
	// Workers limits the worker ids taken to 0..Workers−1; 0 means all the
	// layout has.
	Workers int
	// Timeout bounds each store operation, on the server too (the driver
	// sends what is left of it as maxTimeMS); default a third of Lease.
	Timeout time.Duration
	// Clock options for the Generator (WithClock), for tests.
	Generator []Option
}

// Lessor keeps a Generator supplied with a worker id leased from MongoDB. It
// takes a free worker id, renews its lease every third of it, and the
// Generator makes ids only while the lease holds (New returns ErrNoWorker
// otherwise). The rules, those of seqd's cached blocks:
//
//   - A lease runs for Lease from when the write that took or renewed it was
//     sent, on the holder's monotonic clock; an answer that comes later
//     confirms nothing more.
//   - Another process takes a held worker id only after it has read the same
//     version of its document and then waited the longest lease any holder
//     took plus 2 %, on its own monotonic clock, and only with a write
//     conditional on that version: so the holder's lease has run out (clocks
//     need to agree only on how long a second is, within 2 %), and a renewal
//     that got in first makes the take fail.
//   - Each take and renewal records lastMs, a millisecond the holder's ids do
//     not pass until the next renewal (its clock's, plus the lease, plus
//     MaxBorrow). A new holder starts above the lastMs it read, so it never
//     makes an id at or below one made before under that worker id, whatever
//     the clocks say; this rule alone keeps ids unique, the lease keeps the
//     new holder from waiting for the old one's milliseconds.
//   - Close gives the worker id back, recording the last millisecond used.
//
// Free worker ids are taken lowest lastMs first, so that a process whose
// clock was set back takes one it need not wait for when there is one.
type Lessor struct {
	g       *Generator
	coll    *mongo.Collection
	layout  Layout
	lease   time.Duration
	workers int
	timeout time.Duration
	token   string

	mu      sync.Mutex       // one store operation at a time: tick and Close
	held    *grant           // the grant of the worker id held, nil for none
	version int64            // its document's version after our last write
	seen    map[int]sighting // documents of held worker ids, as first read at a version

	stop context.CancelFunc
	done chan struct{}
}

// sighting is when this process first read a worker document at a version.
type sighting struct {
	version int64
	at      time.Time // carries a monotonic part
}

// workerDoc is a worker document as stored.
type workerDoc struct {
	ID      int    `bson:"_id"`
	Layout  string `bson:"layout"`
	Holder  string `bson:"holder"`
	Version int64  `bson:"version"`
	LastMs  int64  `bson:"lastMs"`
	LeaseMs int64  `bson:"leaseMs"`
}

// NewLessor returns a Lessor of a Generator in layout whose worker ids are
// leased from db's WorkerCollection. It tries once to take a worker id, within
// ctx, and goes on trying (and renewing) in the background until Close; the
// Generator fails with ErrNoWorker while it holds none.
func NewLessor(ctx context.Context, db *mongo.Database, layout Layout, opts LeaseOptions) (*Lessor, error) {
	if opts.Lease <= 0 {
		opts.Lease = 15 * time.Second
	}
	if opts.Workers <= 0 || opts.Workers > layout.Workers() {
		opts.Workers = layout.Workers()
	}
	if opts.Timeout <= 0 {
		opts.Timeout = opts.Lease / 3
	}
	var tok [12]byte
	rand.Read(tok[:])
	l := &Lessor{
		g: newGenerator(layout, opts.Generator...), coll: db.Collection(WorkerCollection),
		layout: layout, lease: opts.Lease, workers: opts.Workers, timeout: opts.Timeout,
		token: hex.EncodeToString(tok[:]), seen: map[int]sighting{}, done: make(chan struct{}),
	}
	if err := l.tick(ctx); errors.Is(err, ErrLayoutMismatch) {
		return nil, err
	}
	bg, stop := context.WithCancel(context.Background())
	l.stop = stop
	go l.run(bg)
	return l, nil
}

// Generator returns the Generator the Lessor supplies.
func (l *Lessor) Generator() *Generator { return l.g }

// LeaseStatus is what a Lessor holds.
type LeaseStatus struct {
	Held   bool
	Worker int
	Until  time.Time // when the lease runs out, on this process's clock
	LastMs int64     // ids stay at or below this millisecond until the next renewal
}

// Status returns the worker id held and until when.
func (l *Lessor) Status() LeaseStatus {
	gr := l.g.grant.Load()
	if gr == nil || gr.revoked.Load() {
		return LeaseStatus{}
	}
	return LeaseStatus{
		Held: true, Worker: int(gr.worker), LastMs: int64(gr.lastMs.Load()),
		Until: leaseEpoch.Add(time.Duration(gr.until.Load())),
	}
}

// run renews the lease, or takes a worker id while none is held, every third
// of the lease, until stopped.
func (l *Lessor) run(ctx context.Context) {
	defer close(l.done)
	t := time.NewTicker(l.lease / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			l.tick(ctx) // errors show as ErrNoWorker from the Generator, and are tried again
		}
	}
}

// tick renews the worker id held, or tries to take one.
func (l *Lessor) tick(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held != nil {
		err := l.renew(ctx)
		if !errors.Is(err, errLost) {
			return err
		}
	}
	return l.take(ctx)
}

// errLost: the worker document no longer shows this Lessor as its holder at
// the version it wrote.
var errLost = errors.New("snowflake: worker id lost")

// ceiling is the lastMs a write sent now records: no id passes it before the
// next renewal, which is due within a lease. It never goes below from (what
// the document holds), but it is counted from the clock and the generator, not
// from from: counted from from, each renewal would add a lease to the last,
// and a successor of a holder that died would wait for milliseconds nobody used.
func (l *Lessor) ceiling(from int64) int64 {
	state := int64(l.g.seq.Load() >> l.layout.seqBits)
	return max(from, max(state, int64(l.g.seq.Now()))+(l.lease+MaxBorrow).Milliseconds())
}

// renew extends the lease held, under l.mu.
func (l *Lessor) renew(ctx context.Context) error {
	gr := l.held
	ctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	lastMs := l.ceiling(int64(gr.lastMs.Load()))
	sent := time.Now()
	res, err := l.coll.UpdateOne(ctx,
		bson.D{{Key: "_id", Value: int(gr.worker)}, {Key: "holder", Value: l.token}, {Key: "version", Value: l.version}},
		bson.D{
			{Key: "$set", Value: bson.D{{Key: "version", Value: l.version + 1}, {Key: "lastMs", Value: lastMs}}},
			{Key: "$max", Value: bson.D{{Key: "leaseMs", Value: l.lease.Milliseconds()}}},
		})
	if err != nil {
		return fmt.Errorf("snowflake: renew worker id %d: %w", gr.worker, err)
	}
	if res.MatchedCount == 0 {
		l.drop()
		return errLost
	}
	l.version++
	l.confirm(gr, sent, lastMs)
	return nil
}

// confirm raises gr's ceiling to lastMs and its lease to sent+lease, once the
// write that recorded them is acknowledged.
func (l *Lessor) confirm(gr *grant, sent time.Time, lastMs int64) {
	if uint64(lastMs) > gr.lastMs.Load() {
		gr.lastMs.Store(uint64(lastMs))
	}
	if until := int64(sent.Sub(leaseEpoch) + l.lease); until > gr.until.Load() {
		gr.until.Store(until)
	}
}

// drop revokes the grant held, under l.mu.
func (l *Lessor) drop() {
	if l.held != nil {
		l.held.revoked.Store(true)
		l.g.grant.CompareAndSwap(l.held, nil)
		l.held = nil
	}
}

// take takes a free worker id, under l.mu: one without a document, one given
// back, or one whose document this process has seen at one version for the
// longest lease plus 2 %.
func (l *Lessor) take(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	cur, err := l.coll.Find(ctx, bson.D{})
	if err != nil {
		return fmt.Errorf("snowflake: read worker ids: %w", err)
	}
	var docs []workerDoc
	if err := cur.All(ctx, &docs); err != nil {
		return fmt.Errorf("snowflake: read worker ids: %w", err)
	}
	read := time.Now()
	byID := map[int]workerDoc{}
	for _, d := range docs {
		if d.Layout != l.layout.name {
			return fmt.Errorf("%w: worker id %d is %q, this instance %q", ErrLayoutMismatch, d.ID, d.Layout, l.layout.name)
		}
		byID[d.ID] = d
	}
	var free []workerDoc
	for w := range l.workers {
		d, ok := byID[w]
		switch {
		case !ok:
			free = append(free, workerDoc{ID: w, Layout: l.layout.name, Version: -1})
		case d.Holder == "":
			free = append(free, d)
		default:
			s, ok := l.seen[w]
			if !ok || s.version != d.Version {
				l.seen[w] = sighting{version: d.Version, at: read}
				continue
			}
			if wait := max(l.lease, time.Duration(d.LeaseMs)*time.Millisecond); time.Since(s.at) >= wait+wait/50 {
				free = append(free, d)
			}
		}
	}
	slices.SortStableFunc(free, func(a, b workerDoc) int { return int(min(max(a.LastMs-b.LastMs, -1), 1)) })
	for _, d := range free {
		ok, err := l.claim(ctx, d)
		if err != nil || ok {
			return err
		}
	}
	return fmt.Errorf("%w: all %d worker ids are held", ErrNoWorker, l.workers)
}

// claim writes d's worker id as this Lessor's, conditional on d's version (an
// insert if there was no document), and hands it to the Generator.
func (l *Lessor) claim(ctx context.Context, d workerDoc) (bool, error) {
	lastMs := l.ceiling(d.LastMs)
	sent := time.Now()
	if d.Version < 0 {
		_, err := l.coll.InsertOne(ctx, workerDoc{ID: d.ID, Layout: l.layout.name, Holder: l.token, Version: 1, LastMs: lastMs, LeaseMs: l.lease.Milliseconds()})
		if mongo.IsDuplicateKeyError(err) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("snowflake: take worker id %d: %w", d.ID, err)
		}
		l.version = 1
	} else {
		res, err := l.coll.UpdateOne(ctx,
			bson.D{{Key: "_id", Value: d.ID}, {Key: "version", Value: d.Version}},
			bson.D{
				{Key: "$set", Value: bson.D{{Key: "holder", Value: l.token}, {Key: "version", Value: d.Version + 1}, {Key: "lastMs", Value: lastMs}}},
				{Key: "$max", Value: bson.D{{Key: "leaseMs", Value: l.lease.Milliseconds()}}},
			})
		if err != nil {
			return false, fmt.Errorf("snowflake: take worker id %d: %w", d.ID, err)
		}
		if res.MatchedCount == 0 {
			return false, nil
		}
		l.version = d.Version + 1
	}
	delete(l.seen, d.ID)
	// Ids under this worker id start above every id made under it before,
	// and above every id this Generator made under another.
	bits := l.layout.seqBits
	l.g.seq.AtLeast(max(uint64(d.LastMs)+1, l.g.seq.Load()>>bits+1) << bits)
	gr := &grant{worker: uint64(d.ID)}
	l.held = gr
	l.confirm(gr, sent, lastMs)
	l.g.grant.Store(gr)
	return true, nil
}

// Close stops renewing, stops the Generator, and gives the worker id back,
// recording the last millisecond used, within ctx. A Lessor that cannot give
// it back leaves it to be taken once its lease has run out.
func (l *Lessor) Close(ctx context.Context) error {
	l.stop()
	<-l.done
	l.mu.Lock()
	defer l.mu.Unlock()
	gr := l.held
	if gr == nil {
		return nil
	}
	l.drop()
	// Every id handed out under gr was reserved before its revocation (see
	// Generator.Fill), so below the state read now.
	lastMs := int64(l.g.seq.Load() >> l.layout.seqBits)
	ctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	_, err := l.coll.UpdateOne(ctx,
		bson.D{{Key: "_id", Value: int(gr.worker)}, {Key: "holder", Value: l.token}, {Key: "version", Value: l.version}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "holder", Value: ""}, {Key: "version", Value: l.version + 1}, {Key: "lastMs", Value: lastMs}}}})
	if err != nil {
		return fmt.Errorf("snowflake: give back worker id %d: %w", gr.worker, err)
	}
	return nil
}
