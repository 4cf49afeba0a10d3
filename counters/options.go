package counters

import (
	"log/slog"
	"time"

	"github.com/seqd/seqd/blocks"

	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/readconcern"
	"go.mongodb.org/mongo-driver/v2/mongo/readpref"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"
)

// Where the strategies keep their records.
const (
	// CounterCollection holds a Counter's documents, {_id: name, seq: last}.
	CounterCollection = "counters"

	// LedgerPrefix starts the name of an Optimistic sequence's ledger collection.
	LedgerPrefix = "seq_"
)

// Defaults for the zero Options.
const (
	defaultMaxRetries   = 20
	defaultWriteTimeout = 10 * time.Second
	defaultModeRefresh  = time.Second
	defaultBlockLease   = 15 * time.Second
	defaultInFlight     = 1
)

// Observer is told about retries and writes, for metrics. The HTTP layer implements
// it with Prometheus, so that this package does not depend on it. Its methods are
// called from many goroutines at once and must not block.
type Observer interface {
	// Retry is called for every retry that a duplicate key error (E11000) causes.
	Retry(strategy string)
	// Batch is called for every successful Counter write with the number of
	// Next/NextN calls it served.
	Batch(callers int)
	// Block is called for every block fetch of a cached sequence, with the values
	// it reserved (0 when it failed), how long it took, and its error.
	Block(values int64, took time.Duration, err error)
}

// LeaseObserver is told about the leases on cached blocks, if the Observer
// implements it too. Its methods are called from many goroutines at once and
// must not block.
type LeaseObserver interface {
	// Refresh is called after every round of the mode refresh, with the names
	// it had to confirm, the leases it confirmed, how long it took, and the
	// error of a read that failed (then some or all were not confirmed).
	Refresh(names, confirmed int, took time.Duration, err error)
	// LeaseExpired is called when a caller finds that a name's lease ran out
	// before anything confirmed it: the name is served in strict mode until a
	// block fetch succeeds again.
	LeaseExpired()
}

// Options configure either strategy; every field applies to both. The zero value
// gives the defaults.
type Options struct {
	// WriteConcern applies to every write. The default is majority. The package
	// comment explains why w:1 can hand out duplicates.
	WriteConcern *writeconcern.WriteConcern

	// NoCoalesce gives every call its own round trip. This is meant for
	// benchmarks and operators; see the package comment.
	NoCoalesce bool

	// WritesInFlight is how many coalesced writes of one Counter name may be in
	// flight at once: a batch goes out as soon as it has callers and fewer are
	// in flight. 0 means 1: each write returns before the next goes out. More
	// pays only where the store's round trip is long beside the time it holds
	// the document (a distant replica set): callers who keep coming are then
	// split among more, smaller writes, and on a store that runs one write at a
	// time that costs more than the overlap gains. The package comment has the
	// measurements. Optimistic writes one at a time per name whatever it says:
	// its writes would collide.
	WritesInFlight int

	// MaxRetries bounds the retries after duplicate key errors in one call. Past the
	// bound the call returns ErrContention. 0 means 20, and a negative value means
	// no retries.
	MaxRetries int

	// WriteTimeout bounds a coalesced write when one of its callers has no
	// deadline. The write runs on a context that no single caller can cancel, so
	// it needs a bound of its own. 0 means 10s.
	WriteTimeout time.Duration

	// Observer, if not nil, is told about retries and batches.
	Observer Observer

	// Blocks tunes the allocators of a Counter's cached sequences. A sequence's
	// own bounds (SetMode) replace MinBlock and MaxBlock. The zero value gives
	// package blocks' defaults.
	Blocks blocks.Options

	// ModeRefresh is how often a Counter that serves sequences from blocks reads
	// their documents again, to learn that one went strict or got new bounds
	// from another instance. 0 means 1s.
	ModeRefresh time.Duration

	// Logger receives what no caller sees: a mode refresh that fails, at most
	// once a minute, and, at info, what Close gave back. nil means
	// slog.Default().
	Logger *slog.Logger

	// BlockLease is how long a Counter serves a cached sequence from its blocks
	// after its latest confirmation that the sequence is still cached (a block
	// fetch, or a mode refresh that read it), timed from when that request was
	// sent. It is how long a cached sequence rides out a store outage, and how
	// long a switch out of cached mode waits before strict values start. It
	// should be several ModeRefresh periods. 0 means 15s.
	BlockLease time.Duration

	// Clock tells a Counter which period a periodic sequence is in for this
	// process (Counter.SetNumbering): a write takes values of the period its
	// clock reads, or of a newer one already stored. nil means time.Now. It
	// is read once per write; tests set it to move an instance across a
	// period's start.
	Clock func() time.Time
}

// withDefaults returns o with the zero fields replaced by their defaults.
func (o Options) withDefaults() Options {
	if o.WriteConcern == nil {
		o.WriteConcern = writeconcern.Majority()
	}
	switch {
	case o.MaxRetries == 0:
		o.MaxRetries = defaultMaxRetries
	case o.MaxRetries < 0:
		o.MaxRetries = 0
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = defaultWriteTimeout
	}
	if o.WritesInFlight <= 0 {
		o.WritesInFlight = defaultInFlight
	}
	if o.ModeRefresh <= 0 {
		o.ModeRefresh = defaultModeRefresh
	}
	if o.BlockLease <= 0 {
		o.BlockLease = defaultBlockLease
	}
	if o.Observer == nil {
		o.Observer = nopObserver{}
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	return o
}

// collectionOptions are for the collections a strategy writes, and for the reads
// that decide what it writes next (the counter read after E11000, the optimistic
// max(_id)). Those reads go to the primary whatever the client's readPreference
// says: a secondary can lag, and a stale maximum or counter turns into needless
// retries, ErrContention, or a duplicate key seqd cannot explain.
func (o Options) collectionOptions() *options.CollectionOptionsBuilder {
	return options.Collection().SetWriteConcern(o.WriteConcern).SetReadPreference(readpref.Primary())
}

// peekOptions are for the reads that only show a value (Current and List): read
// concern majority, so that they never show a value that a failover could roll
// back and hand out again.
func (o Options) peekOptions() *options.CollectionOptionsBuilder {
	return o.collectionOptions().SetReadConcern(readconcern.Majority())
}

// confirmOptions are for the mode refresh's reads, which confirm the leases on
// cached blocks: read concern linearizable, so that a primary cut off from the
// rest of its replica set, not yet stepped down, cannot show a sequence still
// cached after a majority has switched it (the server confirms it is still
// primary before it answers).
func (o Options) confirmOptions() *options.CollectionOptionsBuilder {
	return o.collectionOptions().SetReadConcern(readconcern.Linearizable())
}

// confirmLocalOptions are for the mode refresh's reads on a standalone server,
// which refuses read concern linearizable: a plain read there is as strong,
// since no other node can accept a write.
func (o Options) confirmLocalOptions() *options.CollectionOptionsBuilder {
	return o.collectionOptions().SetReadConcern(readconcern.Local())
}

// logger is where a Counter reports what no caller sees.
func (o Options) logger() *slog.Logger {
	if o.Logger != nil {
		return o.Logger
	}
	return slog.Default()
}

// leaseObserver is the Observer as a LeaseObserver, or one that does nothing.
func (o Options) leaseObserver() LeaseObserver {
	if l, ok := o.Observer.(LeaseObserver); ok {
		return l
	}
	return nopObserver{}
}

// retrier is the retry loop with o's bound and Observer, for strategy.
func (o Options) retrier(strategy string) retrier {
	return retrier{max: o.MaxRetries, strategy: strategy, observer: o.Observer}
}

type nopObserver struct{}

func (nopObserver) Retry(string) {}
func (nopObserver) Batch(int)    {}

func (nopObserver) Block(int64, time.Duration, error) {}

func (nopObserver) Refresh(int, int, time.Duration, error) {}
func (nopObserver) LeaseExpired()                          {}
