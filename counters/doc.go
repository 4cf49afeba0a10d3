// Package counters hands out monotonic integer sequences stored in MongoDB, for
// applications that want small ordered keys rather than ObjectIds.
//
// # Use
//
// Build one value per strategy and database, and share it in the process: calls for
// one name are then coalesced into few writes. Both strategies take the
// same Options, and every field may be left zero; these are the defaults:
//
//	c := counters.NewCounter(db, counters.Options{})    // one document per name in "counters"
//	o := counters.NewOptimistic(db, counters.Options{}) // a ledger "seq_<name>" per name, or your collection
//
//	counters.Options{
//		MaxRetries:     20,                      // duplicate key retries per call, then ErrContention; < 0: none
//		WriteTimeout:   10 * time.Second,        // bounds a coalesced write whose caller has no deadline
//		WriteConcern:   writeconcern.Majority(), // w:1 can hand out duplicates after a failover
//		NoCoalesce:     false,                   // true: a round trip per call, for comparison
//		WritesInFlight: 1,                       // a Counter's coalesced writes of one name in flight at once
//		Observer:       nil,                     // told about retries and Counter batches, for metrics
//		Blocks:         blocks.Options{},        // a Counter's cached sequences: block sizes, prefetch, cooldown
//		ModeRefresh:    time.Second,             // how often a Counter confirms the leases of its cached names
//		BlockLease:     15 * time.Second,        // how long blocks are served after the store last confirmed them
//		Logger:         nil,                     // slog.Default(): told of a mode refresh that fails, and what Close gave back
//		Clock:          time.Now,                // which period a numbered sequence is in, for this process
//	}
//
// A name is 1 to 64 characters of [A-Za-z0-9_.-] (ValidName); a new name starts at 1.
// s is either c or o.
//
//	c.Next(ctx, name) (int64, error)            the next value
//	c.NextN(ctx, name, n) (Range, error)        n contiguous values First…Last, in one write
//	o.Next(ctx, name) (int64, error)            the next value, recorded in the ledger with its time
//	o.Insert(ctx, coll, doc) (int64, error)     inserts doc with _id max(_id)+1 and returns that _id
//	s.Current(ctx, name) (Sequence, error)      the sequence as stored (last value, mode), taking nothing
//	s.Set(ctx, name, v, force) error            the next value will be v+1
//	s.List(ctx, opts) (Page, error)             a page of sequences by name: ListOptions{Prefix, After, Limit}
//	c.SetMode(ctx, name, mode, min, max) error  strict or cached, with cached blocks' bounds (0, 0: Options.Blocks')
//	c.SetNumbering(ctx, name, nb) error         a period, time zone and format: Numbering{"year", "Europe/Berlin", "INV-{yyyy}-{seq:6}"}
//	c.SetNumberingValue(ctx, name, nb, v, force) error  the numbering and a value in one write (the current period's value)
//	c.NextNumbered(ctx, name, n) (Numbered, error)  NextN's values, their period's key and their formatted text
//	c.PeriodValue(ctx, name, key) (int64, error)    the last value of a period: the current one, or one of the latest 32
//	c.BlockStatus(name) (blocks.Status, bool)   this process's blocks for name, in cached mode
//	c.Close(ctx) error                          gives back unused cached values; then strict only
//
// A value is handed out once; Guarantees below says under which conditions, and
// where gaps come from. Every error names the operation and the sequence, and wraps
// at most one of these, so errors.Is works. The first three, and
// ErrInTransaction, are refused before any round trip.
//
//	ErrInvalidName     a name (or Insert's collection) that ValidName refuses
//	ErrInvalidCount    n < 1, or n > 1 for Optimistic: one value per call
//	ErrInvalidValue    Set below 0, or Insert of something that is not a document
//	ErrInvalidMode     SetMode with a mode other than strict or cached, or bad block bounds;
//	                   a Numbering that does not parse; cached with a numbering
//	ErrNotFound        Current of a name never used
//	ErrBackwards       Set below the current value without force
//	ErrExhausted       fewer than n values left up to math.MaxInt64: a sequence never wraps
//	ErrContention      the retries after duplicate keys ran out; try again later
//	ErrUnavailable     the backend could not be reached or confirm in time; the call
//	                   may have taken effect: a gap, never a duplicate
//	ErrInvalidCounter  the stored record is not one seqd can use; it is left unchanged
//	                   (also: a "counters" collection with a default collation)
//	ErrInTransaction   the context carries a session with a transaction running
//
// Both types implement Sequencer, for code that picks a strategy at run time.
// The two keep different records, so they suit different loads.
//
// # Counter: one document per sequence
//
// Counter (StrategyCounter) keeps {_id: name, seq: last} in the "counters" collection
// and reserves n values with one findAndModify:
//
//	filter  {_id: name, seq: {$lte: MaxInt64 - n}}
//	update  {$inc: {seq: n}}      upsert, return the new document
//
// The caller gets seq-n+1 … seq. The server applies the $inc atomically, so callers
// in any number of processes get disjoint ranges. A new name starts at 1 because the
// first $inc upserts {_id: name, seq: n}.
//
// When several clients create a name at the same moment, their upserts race, and
// the server answers the losers with a duplicate key error (E11000). mongod
// retries such an upsert itself only when its filter is nothing but equalities on
// the fields of a unique index (write_ops_exec.cpp); seqd's filters add the
// conditions on seq and the other fields, so on mongod every lost race comes back
// as E11000, and the retries are seqd's own. Counter then reads the document and
// tries again, at most Options.MaxRetries times, with jittered backoff, and tells
// Options.Observer of each retry (seqd's metric
// seqd_duplicate_key_retries_total). Past that bound it returns ErrContention.
// Other errors are returned as they are.
//
// The $lte bound turns exhaustion into an error, not an overflow. If fewer than n
// values remain, the filter matches nothing. The upsert then tries to insert a
// second document with the same _id and collides. The read that follows finds the
// sequence full, and Counter returns ErrExhausted. A sequence never wraps and never
// goes negative. It can end exactly at math.MaxInt64.
//
// # Cached mode
//
// A Counter's sequence has a mode, stored in its document so every instance
// agrees: strict (the default, as above) or cached. c.SetMode(ctx, name,
// ModeCached, min, max) stores it, creating the sequence at 0 if it is new; the
// document then reads
//
//	{_id: name, seq: N, mode: "cached", minBlock: a, maxBlock: b, reserved: R, served: S, returned: G,
//	 gen: g, leaseMs: l}
//
// gen counts the changes into and out of cached mode and of a cached
// sequence's bounds; leaseMs is the longest lease (below) any instance has
// taken on the sequence's blocks. In cached mode a Counter reserves blocks of
// values with one findAndModify each,
//
//	filter  {_id: name, mode: "cached", gen: g, seq: {$lte: MaxInt64 - n}}
//	update  {$inc: {seq: n, reserved: n, served: d}, $max: {leaseMs: lease}}
//
// and hands them out from memory, through one allocator per name (package
// blocks): it fetches the next block before the current one runs out, adapts the
// block size to the rate within the sequence's bounds (or Options.Blocks'), and
// serves NextN(n) with n contiguous values, skipping a block's rest that cannot
// hold them. d is what the instance served since its last report. A block fetch
// waits in the name's queue like any write, so it stays in order with the
// strict writes of the same Counter.
//
// The guarantees:
//
//   - strict: every value from a write; linearizable across instances; gapless
//     while writes succeed.
//   - cached: unique across all instances and clients; strictly increasing per
//     instance (an answer that starts after another answer of the same instance
//     returned is larger); a crash loses at most the unused rest of the blocks
//     that instance held; no order across instances.
//   - Across a switch from cached to strict, strict stays linearizable with
//     every answer before it, whichever instance gave that answer: a strict
//     answer is larger than every answer that ended before it started.
//   - Exception everywhere: a forced Set that moves a sequence back hands values
//     out again.
//
// Here an instance is one Counter: share one per process and database.
//
// # Leases
//
// An instance serves a name from its blocks only while its lease lasts:
// Options.BlockLease (15 s by default) from the latest request that confirmed
// the name cached in the gen its allocator was made in, timed on the monotonic
// clock from when that request was sent. A block fetch confirms it (it
// matches only in that gen), and so does the mode refresh: while a Counter
// serves names from blocks, one goroutine confirms their leases every
// ModeRefresh (1 s by default), and stops serving the names it finds changed
// (gone strict or draining, other bounds, unusable or gone); it ends with the
// last such name, or at Close. Checking the lease costs a clock read and two
// atomic loads per value. A confirmation by a read counts for at most the
// document's leaseMs, which every fetch raises to its instance's lease and
// nothing lowers, so a drain that waits leaseMs waits out every lease.
//
// The refresh's cost does not grow with the names. It reads one document,
// the change vector, {_id: "changes", incarnation: id, slots: {k0: n, …}} in
// the collection ModesCollection, whose slot h(name) (FNV-1a mod 256) is
// bumped by a fence:
//
//	update {_id: "changes"}  {$inc: {"slots.k<h(name)>": 1}, $setOnInsert: {incarnation: new id}}  upsert
//
// It then reads, with one find, the documents of the names whose slot moved
// since its last read of the vector, of the names added since, and of every
// name if the incarnation changed (the vector was deleted and made again).
// A name read shows it cached in its gen or not, as before; every other
// name's lease is confirmed by the vector alone, from when the vector's read
// was sent. A fence is sent after every write that ends leases on a name's
// blocks: a drain (SetMode to strict), new bounds, cached again after a drain.
// And whoever counts a drain's wait counts it from the acknowledgement of a
// fence it sent after it read (or wrote) the document draining: the
// instance that switched, and any other that saw the switch.
//
// Why that suffices. Say instance B's refresh confirms the lease of name x by
// a read of the vector V1 sent at t1, and x's slot is as B last read it, in a
// read V0 that came before B's last read R of x's document, which showed x
// cached in gen g. Let a switch write x's document draining (gen g+1) at w,
// and another instance finish the drain at f, having waited drainWait from
// the acknowledgement a of a fence F sent after it read the draining
// document, so after w. R came before w (it showed gen g), so F came after
// R, hence after V0: V0 does not count F. V1 counts no F either (the slot is
// unchanged and slots only grow within one incarnation: a vector deleted and
// made again has a new one, and a missing vector confirms nothing, since two
// reads of it missing say nothing of a fence between them), so V1 was
// linearized before F was applied:
// t1 < a. B's lease then ends at t1 + lease ≤ a + drainWait ≤ f: before any
// strict value. Should the switching instance stop between its write and its
// fence, nothing is lost: nobody may finish the drain before fencing. Reads
// and fences are linearizable (read concern linearizable, write concern
// majority), so "before" is real time across instances; a fence that fails
// lets nobody count. Changes that seqd did not make (a document edited or
// deleted by another client) fence nothing: a block fetch finds them.
//
// Every read of the refresh is bounded, on the server too (maxTimeMS), by
// the smaller of WriteTimeout and half the lease: a linearizable read waits
// on a primary cut off from its majority with no limit of its own. On a
// standalone server (hello shows no setName and no mongos), which refuses
// linearizable reads (NotAReplicaSet), the refresh reads with read concern
// local: with one node, no other can accept a write, so a plain read shows
// every acknowledged write. A refresh that fails confirms nothing; it is
// logged (Options.Logger, at most once a minute) and told to the Observer if
// it implements LeaseObserver, as are leases that ran out.
//
// Past its lease (the store down, the instance cut off from it, or paused
// longer than the lease) an instance stops serving its blocks: its callers
// take the strict path, which in cached mode makes a new allocator whose
// blocks come from new fetches, or fail with ErrUnavailable if the store does
// not answer. So the lease is how long a cached sequence rides out a store
// outage, and how long a switch out of cached mode waits.
//
// # Switching
//
// SetMode to cached takes effect in its own Counter at once; another instance
// learns it at its next strict write, from the returned document, or within
// its ModeRefresh. A block fetch waits in the name's queue like any write,
// after the strict writes queued before it, goes out once none is in flight, and
// no write goes out while it is; a strict batch whose turn comes
// once the name is served from blocks writes nothing: its callers are served
// from the blocks. Callers who write alone (Options.NoCoalesce, or inside a
// session) are not queued, so their strict write can be in flight while the
// first block is fetched: if, when it returns, the name is served from blocks
// and not because of this write's own answer, its values become a gap and its
// callers are served from the blocks.
//
// Leaving cached mode drains. SetMode to strict on a cached sequence writes
//
//	{mode: "draining", strictFrom: date, $inc: {gen: 1}}
//
// No instance fetches or serves a block once it has seen it (the fetch's
// filter names the old gen, and the refresh retires the allocator), and no
// strict write matches a draining document, so no value is handed out until
// every lease confirmed before the switch has run out: an instance that saw
// the document draining waits the longest lease (the larger of leaseMs and its
// own) and 2% for clocks whose rates differ, counted from when its read of the
// draining document came back, then writes mode "strict". The instance that
// switched does so on its own; a caller of any instance that waited as long
// does too. Meanwhile NextN waits, if its context's deadline leaves 250 ms
// after the drain, and otherwise fails at once with an error that wraps
// ErrDraining and ErrUnavailable and says how long to wait. The switch
// completes within the lease plus a round trip. strictFrom, which Current
// shows as Sequence.StrictFrom, is the switching instance's estimate on its own
// wall clock; the drain itself is timed on each instance's monotonic clock, so
// it assumes clocks that run at the same rate within 2%, not clocks that agree.
//
// Close (at SIGTERM) closes every allocator, waiting for a fetch in flight, and
// gives back the contiguous unused tail that ends at the highest value the
// instance reserved, with one conditional update per name, sent in unordered
// bulk writes of 50, then the updates that report what each served, and logs
// what it gave back in one line:
//
//	filter  {_id: name, seq: tailLast, forced: f, floor: {$lte: tailFirst-1} or absent}
//	update  {$set: {seq: tailFirst-1}, $inc: {returned: k, served: d}}
//
// Set stores the value it sets as floor, and a forced Set counts itself in
// forced (the filter names the count the instance's last fetch returned, and
// the tail holds only blocks reserved with that count: a block reserved before
// a forced Set is a gap). If
// another instance has reserved past the tail, a strict value was written, a
// Set named a value at or above the tail's first, or any forced Set came since,
// nothing matches (that update alone, in a bulk write) and only d is reported: a give-back never
// moves a sequence below a value set, nor below anything reserved or handed
// out after its block. A block fetch that the store applied has its report of d
// counted before its answer is read, so served never counts a value twice. So restarting the only instance loses nothing. The counts are
// accounting, summed over instances: reserved = served + returned + what
// instances hold now + what was lost (skipped, or held by an instance that
// stopped without Close). Current and List show them (Sequence.Blocks). After
// Close the Counter serves every name in strict mode.
//
// When the store is down, an allocator serves the values it holds while its
// lease lasts, then its callers fail with ErrUnavailable, and for
// Options.Blocks.Cooldown after a failed fetch they fail at once.
//
// Set moves where the next block starts. It does not reach the blocks instances
// hold: each instance, this one included, serves them before values above a
// raised value (they are below it, so still unique), and after a forced Set back
// it serves them too.
//
// Optimistic has no modes.
//
// A document whose mode is not "strict" or "cached", whose minBlock or
// maxBlock is not an integer from 0 to 1,000,000, or whose reserved, served or
// returned is not an integer (a block fetch adds to them), is not one seqd can use:
// every call on it returns ErrInvalidCounter, and every write's filter leaves it
// unchanged. One check is made only on reading: that minBlock ≤ maxBlock, or both
// are 0, since the development store cannot compare two fields in a filter. A
// strict write to a document that fails only that check still applies, and then
// returns ErrInvalidCounter.
//
// # Numbered sequences: periods and formats
//
// Numbers people read (invoices, orders, tickets) often restart each year,
// month or day, and are read formatted: INV-2026-000042. SetNumbering gives
// a strict Counter sequence a Numbering: a period (year, month, day, hour or
// minute), the IANA time zone whose wall clock its periods follow (UTC by
// default), and a format (package period has the tokens and the rules at
// daylight saving changes). Every period starts at 1. NextNumbered answers
// the values with their period's key ("2026-11") and formatted text; NextN
// takes the same values without them.
//
// The document stores the numbering and the start of the period seq counts
// in (periodStart, milliseconds since the epoch), and a write compares that
// start with the period its Counter's clock (Options.Clock) reads, S:
//
//	join     filter {_id: name, period: p, zone: z, periodStart: {$gte: S}, nextPeriodStart: absent, seq: {$lte: MaxInt64 - n}}
//	         update {$inc: {seq: n}}
//	start    filter {_id: name, period: p, zone: z, periodStart: P, nextPeriodStart: N, seq: v}   (P < S or absent; N, v as read)
//	         update {$set: {seq: n, periodStart: max(S, N), "periods.<key of P>": v}, $inc: {forced: 1},
//	                 $unset: {nextPeriodStart}}  (and $unset the oldest past 32)
//	announce filter {_id: name, period: p, zone: z, periodStart: P, nextPeriodStart: absent}
//	         update {$set: {nextPeriodStart: S}}
//
// The join is tried first; when it matches nothing, the document is read: a
// stored period at or after S was begun meanwhile (join again), another
// numbering was set (learn it and write again), else the start is written
// over the document as read, and if it changed meanwhile, all over again. A
// start can miss for as long as instances whose clocks are still in period
// P keep joining it; after one miss the writer announces S instead, which no
// join matches, and the next pass (its own, or any instance's that finds the
// announcement: the announcer may be gone) starts the announced period over
// a seq that nobody moves any more. The start counts itself in forced, as a
// forced Set does: it moves seq back, and no give-back of a block reserved
// before it may match after it. So the stored period only moves forward, and:
//
//   - Within a period, a numbered sequence keeps every promise of strict mode
//     (unique, linearizable across instances, gapless while writes succeed).
//   - Periods never go back for a name. Once any instance has handed out a
//     value of a period, no instance hands out one of an earlier period: an
//     instance whose clock is behind joins the newest period stored. An
//     answer that starts after another answer of the same name ended has a
//     larger (period, value) pair.
//   - A batch (NextN, or the callers one coalesced write serves) never spans
//     two periods: one write, one period. Callers of one Counter share its
//     clock; a write reads it once, when it is sent.
//   - The clock assumption: instances' clocks may disagree. A period begins
//     when the first instance whose clock has passed its start takes a value;
//     until then the others' values belong to the period before, even if
//     their clocks are later. Values are numbered by the period in which they
//     were taken, not by any other date the application keeps.
//   - Gaps: as in strict mode, a write that fails after the store applied it,
//     or a caller who left after its write was sent, leaves its values unused.
//     A gap at a period's end cannot be filled afterwards: the next value of
//     that period would be of an earlier period than the stored one.
//
// Set on a numbered sequence sets the value of the current period, the
// clock's or a newer one stored: a start at the value when the clock's period
// is newer than the stored one (or none began yet), announced first when a
// period is stored, so that instances still in it cannot starve the start;
// else $max (or, forced, $set) of seq over the stored period, also while a
// newer one is announced (it is not stored yet). It is SetNumberingValue's
// write with the numbering the document has. A SetNumbering
// write matches only the period start it read, so that a period begun
// meanwhile makes it read again, and refuse another period or time zone.
//
// SetNumberingValue sets a numbering and a value in SetNumbering's one write,
// whose filter also matches seq: not above the value (none when forced) for
// the stored period or no period, or, for a period that begins, the seq read
// (the stored period's end, announced first). Moving a numbering
// that stands at 4211 this year to seqd hands out no number between the two,
// a value refused leaves the numbering as it was, and instances taking
// values meanwhile do not starve it. With no numbering, on a cached sequence
// it is a Set.
//
// The last values of the latest 32 finished periods stay in the document
// (periods), for PeriodValue and GET /seq/{name}?period=KEY. Once values of
// a period were handed out, SetNumbering refuses another period or time zone
// (ErrInvalidMode): it would number a period from 1 again, under a key
// already used; a new format alone changes only what answers carry. A Counter learns a name's numbering
// from its document, and every write's filter checks it: a write of a name
// whose numbering another instance changed matches nothing, reads the new
// one and writes again.
//
// A numbered sequence is strict: SetNumbering refuses a cached sequence and
// SetMode refuses cached for a numbered one (ErrInvalidMode); on one
// switched to strict and still draining, SetNumbering waits for the drain's
// end, as Next does (ErrDraining if its context ends first). Cached values
// come from blocks each instance holds, in no order across instances, so an
// instance could answer a period older than one another instance has begun.
// Optimistic has no numbering.
//
// # Optimistic: the document is the record
//
// Optimistic (StrategyOptimistic) is the manual's "optimistic loop". It reads
// max(_id) and inserts max+1. On E11000, another writer took that value, so it
// reads again and retries, bounded by the same rule as Counter. Insert uses the loop
// to number an application's own documents. It needs no second collection, and no
// counter document has to be kept in step: the value is the document's key. For
// named sequences, Next inserts one ledger document per value,
// {_id: value, issuedAt: date}, into the collection "seq_<name>". That ledger
// records when each value was issued.
// max(_id) counts the _ids that are numbers from 0 up, of any numeric type (int,
// long, double, decimal), rounded down: after a decimal 7.5 comes 8. A largest
// _id above math.MaxInt64 is one seqd cannot continue from: ErrInvalidCounter,
// naming it, and nothing is written.
//
// Callers of one Optimistic do not compete with each other: like Counter's, they
// are coalesced, per collection (a ledger is the collection "seq_<name>", so Next
// and Insert into that collection share a queue). The callers queued behind a
// write are served together by the next one: it reads max(_id) once and inserts
// max+1 … max+k with one ordered insertMany, a document per caller, in arrival
// order. Collisions, and so retries and ErrContention, happen only between
// processes. If another process took one of the values, the ordered insert stops
// there: the callers of the documents before it get their values, and the rest
// go, first in line, into the next write. A duplicate key in another unique index
// of the application's fails only the caller whose document it is.
//
// The loop has two costs. First, across processes it does not scale: every write
// costs a read and an insert, and writers in different processes collide and
// retry, so throughput falls as processes are added, and enough of them get
// ErrContention. Second, the maximum document is the only record. If that document
// is deleted, its value is handed out again.
//
// So the choice is:
//
//   - Counter for sequences that many writers share, and for reserving ranges (NextN).
//   - Optimistic for inserts from one process, or a few at a low rate, where a
//     gapless integer _id in the document itself matters more than throughput,
//     and only when the document with the highest _id is never deleted. Optimistic reserves one value per call: NextN
//     with n > 1 returns ErrInvalidCount.
//
// # Coalescing
//
// Within one Counter, concurrent Next and NextN calls for the same name are
// coalesced; within one Optimistic, concurrent Next and Insert calls for the same
// collection. What follows says it for Counter; Optimistic's batches insert
// documents instead of adding to seq. A process should share one Counter and one
// Optimistic per database, so below "process" means that Counter. A caller who
// finds a write of its name due joins it; the write reserves the sum of its
// callers' counts with one $inc and gives each caller its own sub-range, in
// arrival order. A Counter keeps up to Options.WritesInFlight writes of a name in
// flight (default 1): a batch goes out as soon as it has callers and fewer are in
// flight, and takes every caller waiting then. Optimistic sends one write per
// name at a time, since its writes would collide.
//
// More writes in flight keep a store busy while the next batch forms, but split
// the callers among more, smaller writes: callers who call again as soon as they
// are answered spread over one more group than there are writes in flight, so
// that k writes in flight gain at most min(k, r)·2/(k+1), r being the store's
// round trip over the time a write holds the document. On the development store,
// which runs writes one at a time and spends most of its round trip on them (r
// near 1), 64 goroutines on one name got 0.75× the values/s with 2 in flight and
// 0.50× with 3; with its replies held 1 ms (devstore -reply-delay 1ms, r about 2),
// 1.10× with 2 and 1.12× with 3 (BenchmarkCounterWritesInFlight, whose comment
// has the command). Hence the default of 1; a replica set across a network, where
// r is larger, is where more pays.
//
// Each caller's values come from a write sent after its call began. A call that
// begins after another has returned therefore gets values from a write sent after
// that one was applied, and the store's atomic $inc gives it larger values:
// real-time order holds with any number of writes in flight. Answers of one
// process may complete out of value order only between concurrent calls.
//
// A write abandoned at its deadline, or because every caller it served has left,
// may still be running on the server after it is no longer counted in flight
// (harmless: each write is atomic on the server, so it costs a gap, never a
// duplicate). A busy name therefore costs one round trip per batch, not one per
// caller. The values a process hands out for a name are unique. They have gaps
// where a write failed or was abandoned or a caller left, as below.
//
// A caller whose context ends stops waiting at once:
//
//   - If it had not yet joined a write, it leaves the queue and reserves nothing.
//   - If its write was already sent, the write goes on for the other callers and
//     this caller's values are lost. They become a gap in the sequence.
//
// One caller's cancellation must not fail the rest of its batch. So the batch write
// runs on a fresh context, not one derived from any caller's: a caller's context
// also carries its MongoDB session, and a batch must not run inside one caller's
// session. That context has its own deadline: the latest deadline among the
// batch's callers, or now+Options.WriteTimeout if a caller has none and that is
// later. A later deadline would help nobody, because every caller would have
// stopped waiting. The write is cancelled once every caller in the batch has given
// up. An error from the write goes to every caller in the batch.
//
// A batch never asks for more than math.MaxInt64 values in total. Callers that would
// push the sum past that wait for the next batch. If a batch asks for more values
// than remain, its callers are served one at a time, so that those that still fit
// get their values and only the rest get ErrExhausted. Once a write has shown that
// k values do not fit, every caller of that name asking for k or more gets
// ErrExhausted at once, without a write, for as long as callers of the name keep
// the queue alive. (A Set with force that moves the sequence back meanwhile is
// noticed once the queue has drained.)
//
// Per-name state exists only while a name has a write pending or in flight. The
// name's queue goes away, and its goroutines end, as soon as nothing is waiting or
// in flight, so idle names cost nothing. Options.NoCoalesce turns coalescing off, for both strategies:
// each call then makes its own round trip on the caller's context. This is meant for benchmarks and for
// operators who want to compare the two modes.
//
// # Sessions and transactions
//
// A call whose context carries a session (mongo.NewSessionContext) and no
// transaction is accepted: its round trips run in that session, and its strict
// writes go alone, joining no batch, so that the session holds its own writes
// and no other caller's (values served from a cached sequence's blocks take no
// round trip at all). A call whose session has a transaction
// running (started and not yet committed or aborted) is refused at once with
// ErrInTransaction, for three reasons. A duplicate key error, which Counter and
// Optimistic expect and retry, aborts the server's transaction, and the read
// that follows fails with NoSuchTransaction. A write in a transaction holds the
// counter document until the caller commits, so every other instance and
// caller of that name waits or conflicts for as long. And what the call did is
// undone if the transaction aborts: a give-back, or a block's report. Take
// values before the transaction, or after; a value taken and then not used is
// a gap, never a duplicate.
//
// # Collation
//
// Counter's _ids are names, compared byte by byte. A "counters" collection
// created beforehand with a default collation would compare them by that
// collation in every command (with strength 2, "Orders" and "orders" would
// share one counter, and List's pages would follow the collation's order).
// seqd cannot pass collation "simple" with each command, since the development
// store refuses the option, so a Counter's first call reads the collection's
// options (listCollections), and if they name a collation other than simple,
// every call returns ErrInvalidCounter and nothing is written. A collection that
// does not exist yet is created by the first write, without a collation; one
// created with a collation after that first check is not seen. Optimistic's
// _ids are numbers, which no collation changes.
//
// # Durability
//
// Every write uses write concern majority unless Options.WriteConcern says
// otherwise. With w:1 the primary acknowledges a write before any secondary has it.
// If the primary fails over at that point, the new primary never saw the $inc.
// The write is rolled back when the old primary rejoins, and the same numbers are
// handed out a second time. With majority, the write is acknowledged only once a
// majority of the set has it, so any failover that keeps a majority keeps the write.
//
// Retryable writes, the driver's default on replica sets, resend a findAndModify
// once after a network error or failover, under the same transaction number. The
// server applies it at most once and returns the original result. So a client that
// sees an error may leave a gap, because its write may have been applied, but it
// never gets a duplicate. On a standalone server there is no replication, and
// majority means the same as w:1.
//
// Reads go to the primary whatever the client's readPreference says. The reads
// that decide the next write (the counter read after E11000, the optimistic
// max(_id)) must see the latest write; from a lagging secondary they would turn
// into retries, ErrContention or an unexplained duplicate key. Current and List
// read with read concern majority, so they never show a value that a failover
// could roll back and hand out again.
//
// # Guarantees
//
// Counter in strict mode is a linearizable counter per name across processes and clients, given a
// server that applies findAndModify atomically and majority writes: mongod does,
// and so does seqd's development store, whose front runs write commands one at a
// time. No value is handed out twice, and a call that returned before another
// began holds the smaller values. Optimistic relies only on the unique _id index.
// There is one exception: Set with force can move a sequence backwards on purpose,
// and then it hands out values again. Gaps are possible. They come from a caller
// that gave up after its write was sent, from an error after the server had
// applied the write, and from Set moving forward.
//
// # Errors
//
// An error reads, for example, `counters: next "orders": sequence exhausted`.
// Trouble reaching the backend wraps ErrUnavailable as well as the driver's error,
// so that both match errors.Is. That covers a context that ended
// while waiting for the server, timeouts, network errors, server selection failures,
// a disconnected client, and server errors that mean the backend cannot confirm
// now: a primary stepping down or a node shutting down, a mongos that cannot reach
// a shard (codes 6, 7, 89, 9001), ExceededTimeLimit (262), and any write concern
// error (64, 100 and the rest). Such an operation may have taken effect, which
// leaves a gap, never a duplicate.
package counters
