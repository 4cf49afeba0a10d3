package counters

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/readpref"

	"github.com/seqd/seqd"
)

// The mode refresh confirms leases with one read of a small document, the
// change vector, and reads the documents of the names whose slot in it moved.
// The package comment ("Leases") gives the argument.

// ModesCollection holds the change vector of a Counter's cached sequences:
// one document, {_id: "changes", incarnation: ObjectId, slots: {k0: n, k1: n, …}},
// whose slot h(name) is bumped after every write that ends the leases on
// name's blocks.
const ModesCollection = "counters.modes"

// changesID is the _id of the change vector.
const changesID = "changes"

// changeSlots is the number of slots of the change vector. A name's change
// makes every instance re-read the names it holds in the same slot: about
// 1/changeSlots of them. The document stays under 4 kB.
const changeSlots = 256

// changeSlot is name's slot in the change vector.
func changeSlot(name string) int {
	h := fnv.New32a()
	h.Write([]byte(name))
	return int(h.Sum32() % changeSlots)
}

// slotField is the field of slot i, inside "slots".
func slotField(i int) string { return "k" + strconv.Itoa(i) }

// changes is the change vector as read: its incarnation (a new one if the
// document was deleted and made again) and the count of each slot.
type changes struct {
	incarnation bson.ObjectID
	slots       [changeSlots]int64
}

// fence bumps name's slot of the change vector, and returns when its
// acknowledgement came back. Whoever counts a drain, or any wait on the
// leases of name's blocks, counts it from a fence sent after it saw the
// change: a refresh that confirmed a lease without re-reading name read the
// vector before the fence, so that lease ends before the wait does. It runs
// outside any session ctx carries: a caller's transaction that aborted would
// undo it.
func (c *Counter) fence(ctx context.Context, name string) (time.Time, error) {
	ctx, cancel := outsideSession(ctx, c.cache.writeTimeout)
	defer cancel()
	update := bson.D{
		{Key: "$inc", Value: bson.D{{Key: "slots." + slotField(changeSlot(name)), Value: int64(1)}}},
		{Key: "$setOnInsert", Value: bson.D{{Key: "incarnation", Value: bson.NewObjectID()}}},
	}
	err := c.retry.do(ctx, func() (bool, error) {
		_, err := c.cache.modes.UpdateOne(ctx, bson.D{{Key: "_id", Value: changesID}}, update, options.UpdateOne().SetUpsert(true))
		return mongo.IsDuplicateKeyError(err), err // two first upserts raced: the loser tries again
	})
	if err != nil {
		return time.Time{}, fmt.Errorf("counters: fence %q: %w", name, err)
	}
	return time.Now(), nil
}

// outsideSession returns a context with ctx's deadline (or now+timeout), ended
// with ctx, that carries no session.
func outsideSession(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(timeout)
	}
	wctx, cancel := context.WithDeadline(context.Background(), deadline)
	stop := context.AfterFunc(ctx, cancel)
	return wctx, func() { stop(); cancel() }
}

// confirmReads are the collections the mode refresh reads: with read concern
// linearizable on a replica set or mongos, local on a standalone server, which
// refuses linearizable and has no other node that could accept a write.
type confirmReads struct {
	modes, counters *mongo.Collection
	standalone      bool
}

// confirmReads asks the server (hello) what it is and returns the
// collections to read with.
func (c *Counter) confirmReads(ctx context.Context) (confirmReads, error) {
	var hello struct {
		SetName string `bson:"setName"`
		Msg     string `bson:"msg"`
	}
	err := c.coll.Database().RunCommand(ctx, bson.D{{Key: "hello", Value: 1}}, options.RunCmd().SetReadPreference(readpref.Primary())).Decode(&hello)
	if err != nil {
		return confirmReads{}, err
	}
	db := c.coll.Database()
	if hello.SetName == "" && hello.Msg != "isdbgrid" {
		local := c.cache.localReads
		return confirmReads{
			modes:      db.Collection(ModesCollection, local),
			counters:   db.Collection(CounterCollection, local),
			standalone: true,
		}, nil
	}
	return confirmReads{
		modes:    db.Collection(ModesCollection, c.cache.linearizable),
		counters: db.Collection(CounterCollection, c.cache.linearizable),
	}, nil
}

// readTimeout bounds each read of the refresh, on the client and, through
// maxTimeMS, on the server: an answer later than the lease confirms nothing,
// and a linearizable read left waiting on a primary cut off from its majority
// must not outlive the refresher's wait for it.
func (k *cache) readTimeout() time.Duration {
	return min(k.writeTimeout, k.lease/2)
}

// readChanges reads the change vector. A missing one reads as all zeros, and
// missing is true: no lease may be confirmed from it, since two reads of a
// missing vector say nothing of the fences that created and deleted it between
// them. It then makes the vector (no slot moved), so that later rounds can
// confirm from it again; whether that write succeeds changes nothing here.
func (c *Counter) readChanges(r confirmReads) (v changes, missing bool, err error) {
	ctx, cancel := context.WithTimeout(c.cache.refreshCtx, c.cache.readTimeout())
	defer cancel()
	doc, err := r.modes.FindOne(ctx, bson.D{{Key: "_id", Value: changesID}}).Raw()
	if errors.Is(err, mongo.ErrNoDocuments) {
		c.cache.modes.UpdateOne(ctx, bson.D{{Key: "_id", Value: changesID}},
			bson.D{{Key: "$setOnInsert", Value: bson.D{{Key: "incarnation", Value: bson.NewObjectID()}}}},
			options.UpdateOne().SetUpsert(true))
		return v, true, nil
	}
	if err != nil {
		return v, false, err
	}
	v.incarnation, _ = doc.Lookup("incarnation").ObjectIDOK()
	slots, _ := doc.Lookup("slots").DocumentOK()
	elems, _ := bson.Raw(slots).Elements()
	for _, el := range elems {
		i, err := strconv.Atoi(el.Key()[min(1, len(el.Key())):])
		if n, ok := el.Value().AsInt64OK(); ok && err == nil && i >= 0 && i < changeSlots {
			v.slots[i] = n
		}
	}
	return v, false, nil
}

// readModesChunk bounds the names of one find, far below BSON's 16 MB for a
// command and an answer.
const readModesChunk = 5000

// readModes reads the documents of names, only the fields that say whether
// each is still cached as its allocator was made, and returns those seqd can
// use. Each find carries maxTimeMS: it is a command of its own (the driver's
// Find sends none), with the collection's read concern and the primary.
func (c *Counter) readModes(r confirmReads, names []string) (map[string]counterState, error) {
	ctx, cancel := context.WithTimeout(c.cache.refreshCtx, c.cache.readTimeout())
	defer cancel()
	level := "linearizable"
	if r.standalone {
		level = "local"
	}
	stored := make(map[string]counterState, len(names))
	for len(names) > 0 {
		chunk := names[:min(len(names), readModesChunk)]
		names = names[len(chunk):]
		cmd := bson.D{
			{Key: "find", Value: CounterCollection},
			{Key: "filter", Value: bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: chunk}}}}},
			{Key: "projection", Value: modesProjection},
			{Key: "batchSize", Value: len(chunk)},
			{Key: "readConcern", Value: bson.D{{Key: "level", Value: level}}},
		}
		cur, err := c.coll.Database().RunCommandCursor(ctx, cmd, options.RunCmd().SetReadPreference(readpref.Primary()))
		if err != nil {
			return nil, err
		}
		var docs []bson.Raw
		if err := cur.All(ctx, &docs); err != nil {
			return nil, err
		}
		for _, d := range docs {
			name, _ := d.Lookup("_id").StringValueOK()
			if s, err := parseCounter(name, d); err == nil {
				stored[name] = s
			}
		}
	}
	return stored, nil
}

// modesProjection projects a counter document on what the mode refresh reads.
var modesProjection = bson.D{
	{Key: fieldSeq, Value: 1}, {Key: fieldMode, Value: 1}, {Key: fieldMinBlock, Value: 1}, {Key: fieldMaxBlock, Value: 1},
	{Key: fieldGen, Value: 1}, {Key: fieldLeaseMs, Value: 1},
}

// refresher is the mode refresh's own state, kept by its goroutine.
type refresher struct {
	reads     confirmReads
	haveReads bool
	seen      changes // the vector as last read
	haveSeen  bool
	failed    time.Time // when a failure was last logged
}

// refresh confirms, every ModeRefresh, the leases of the names this Counter
// serves from blocks. It reads the change vector (sent at t); a name whose
// document it read after an earlier read of the vector, and whose slot has
// not moved since, has its lease confirmed from t. The others (new names,
// names in slots that moved, every name when the vector was made again) have
// their documents read: each still cached in the same gen and bounds has its
// lease confirmed from t, and the rest (gone strict or draining, other bounds,
// unusable or gone) are retired, all at once, so that a slow give-back of one
// name does not hold back the switch of another. A read that fails confirms
// nothing; it is logged, at most once a minute, and told to the Observer. It
// ends when no name is left, or at Close, and then closes done.
func (c *Counter) refresh(done chan struct{}) {
	k := &c.cache
	defer close(done)
	t := time.NewTicker(k.every)
	defer t.Stop()
	var r refresher
	for {
		select {
		case <-k.refreshCtx.Done():
			return
		case <-t.C:
		}
		k.mu.Lock()
		if len(k.names) == 0 {
			k.refreshDone = nil
			k.mu.Unlock()
			return
		}
		es := make([]*cachedName, 0, len(k.names))
		for _, e := range k.names {
			es = append(es, e)
		}
		k.mu.Unlock()

		start := time.Now()
		confirmed, changed, err := c.refreshOnce(&r, es)
		k.leaseObserver.Refresh(len(es), confirmed, time.Since(start), err)
		if err != nil {
			if time.Since(r.failed) >= time.Minute || r.failed.IsZero() {
				r.failed = time.Now()
				k.logger.Warn("counters: mode refresh failed: leases on cached blocks are not confirmed and run out unless block fetches confirm them",
					"names", len(es), "err", err)
			}
			var se mongo.ServerError
			if errors.As(err, &se) && se.HasErrorCode(codeNotAReplicaSet) {
				r.haveReads = false // ask the server again what it is
			}
		}
		var wg sync.WaitGroup
		for _, e := range changed {
			wg.Go(func() {
				// Not bounded by Close: a give-back cut short would lose its values.
				ctx, cancel := context.WithTimeout(context.Background(), k.writeTimeout)
				defer cancel()
				c.retire(ctx, e)
			})
		}
		wg.Wait()
	}
}

// codeNotAReplicaSet is the error of a linearizable read on a standalone server.
const codeNotAReplicaSet = 123

// refreshOnce is one round of refresh over es: it returns how many leases it
// confirmed, the names to retire, and the error of a read that failed.
func (c *Counter) refreshOnce(r *refresher, es []*cachedName) (confirmed int, changed []*cachedName, err error) {
	k := &c.cache
	if !r.haveReads {
		ctx, cancel := context.WithTimeout(k.refreshCtx, k.readTimeout())
		r.reads, err = c.confirmReads(ctx)
		cancel()
		if err != nil {
			return 0, nil, fmt.Errorf("hello: %w", err)
		}
		r.haveReads = true
	}
	sent := time.Now()
	v, missing, err := c.readChanges(r.reads)
	if err != nil {
		return 0, nil, fmt.Errorf("reading %s: %w", ModesCollection, err)
	}
	var moved [changeSlots]bool
	all := !r.haveSeen || missing || v.incarnation != r.seen.incarnation
	for i := range moved {
		moved[i] = all || v.slots[i] != r.seen.slots[i]
	}
	r.seen, r.haveSeen = v, true

	var reread []*cachedName
	for _, e := range es {
		if moved[e.slot] {
			e.verified = false
		}
		if !e.verified {
			reread = append(reread, e)
			continue
		}
		e.confirm(sent, min(k.lease, time.Duration(e.leaseMs.Load())*time.Millisecond))
		confirmed++
	}
	if len(reread) == 0 {
		return confirmed, nil, nil
	}
	names := make([]string, len(reread))
	for i, e := range reread {
		names[i] = e.name
	}
	stored, err := c.readModes(r.reads, names)
	if err != nil {
		// They stay unverified, and are read at the next round.
		return confirmed, nil, fmt.Errorf("reading %d sequences: %w", len(names), err)
	}
	for _, e := range reread {
		s, ok := stored[e.name]
		if ok && s.mode == seqd.ModeCached && s.gen == e.gen && s.minBlock == e.minBlock && s.maxBlock == e.maxBlock {
			e.leaseMs.Store(max(e.leaseMs.Load(), s.leaseMs))
			e.confirm(sent, min(k.lease, time.Duration(s.leaseMs)*time.Millisecond))
			e.verified = true
			confirmed++
			continue
		}
		if ok && s.draining {
			ctx, cancel := context.WithTimeout(k.refreshCtx, k.writeTimeout)
			c.drainSeen(ctx, e.name, s) // a fence that fails: whoever finishes the drain fences first
			cancel()
		}
		e.stale.Store(true) // from now on no caller takes a value from its blocks
		changed = append(changed, e)
	}
	return confirmed, changed, nil
}
