// Package uuidv7 generates and encodes version 7 UUIDs (RFC 9562) that never
// repeat within a process and sort by the time they were made.
//
// The name says what it makes: a UUID package that makes only version 7, so
// that a program can import it next to github.com/google/uuid or
// github.com/gofrs/uuid (both named uuid) without renaming either. It parses
// and stores UUIDs of every version.
//
// # Why
//
// MongoDB's guide names three ways to make an _id: ObjectIds, counters, and
// UUIDs that the application makes itself and stores as BSON binary, not as a
// hex string. A version 7 UUID leads with the Unix milliseconds, so, like an
// ObjectId, ids made later sort later and inserts land at the right edge of the
// _id index; it has 122 bits where an ObjectId has 96, and every system that
// speaks UUIDs reads it. The common Go generator, google/uuid's NewV7, takes a
// mutex and reads crypto/rand for every id; New here is one atomic add, and
// ids from a process still never repeat.
//
// # Layout
//
// A UUID is 16 bytes, compared bytewise (as MongoDB compares BSON binary of
// one length and subtype):
//
//	bits   0–47   unix_ts_ms: Unix milliseconds, big-endian
//	bits  48–51   version: 0111
//	bits  52–63   counter, high 12 bits (RFC 9562's rand_a)
//	bits  64–65   variant: 10
//	bits  66–69   counter, low 4 bits (the first bits of rand_b)
//	bits  70–127  58 random bits, drawn for each id
//
// This is RFC 9562 §6.2 Method 1, a fixed-length dedicated counter, 16 bits
// long, in rand_a and the top of rand_b. The random bits come from the Go
// runtime's per-thread ChaCha8 generator (math/rand/v2), seeded by the
// operating system when the process starts: a few nanoseconds per id, where
// crypto/rand costs a system call or a lock. A UUID is an identifier, not a
// secret (RFC 9562 §8): ids of one process are predictable from each other.
//
// # Guarantees
//
// A Generator keeps the milliseconds and counter of the last id it handed out
// in one 64-bit word (unix_ts_ms<<16 | counter) and moves it forward with one
// atomic operation per call (internal/clockseq, the core objectid and snowflake
// use too). From that:
//
//   - Unique: a Generator never returns the same id twice, at any rate and from
//     any number of goroutines. New and Fill use one Generator per process.
//   - Ordered: ids from one Generator are strictly increasing, bytewise, in the
//     order the calls take effect (for concurrent callers, the order of their
//     atomic operations). A batch from Fill is a run of consecutive counter
//     values. The random bits play no part in either promise.
//   - Each new millisecond starts the counter at random below 2^15 (§6.2's
//     seeding, which also leaves at least 2^15 ids for the millisecond).
//   - Overflow: when the counter would pass 0xffff, the next id takes the next
//     millisecond, counter 0, whether or not the clock has got there: the
//     counter borrows from the timestamp, as package objectid's borrows from
//     its second. Timestamps therefore run ahead of the clock only past 2^15
//     ids in one millisecond (33 million a second), and by at most
//     floor(k / 2^16) + 1 ms, where k is the number of ids made since the
//     timestamp last caught up with the clock; they rejoin the clock when it
//     catches up.
//   - Clock steps: the timestamp never goes back. If the wall clock steps back,
//     ids keep the last millisecond and count on, borrowing as above, until
//     the clock passes it again. Times before 1970 count as millisecond 0.
//   - Range: New and Fill panic rather than stamp an id past
//     9999-12-31T23:59:59.999Z, the last time RFC 3339 can write (the 48-bit
//     field itself ends in the year 10889). A clock reading past it makes that
//     one call panic and changes nothing.
//   - Always version 7, variant 10.
//
// # Across processes
//
// Ids of two processes are equal only if they have the same millisecond, the
// same counter and the same 58 random bits. Two ids made in one millisecond by
// different processes have the same counter with probability at most 2^-15
// (each process starts the millisecond's counter at random) and the same
// random bits with probability 2^-58: at most 2^-73 for the pair. So N
// processes making r ids a second each, evenly over the milliseconds, collide
// on average at most N(N−1)/2 · r² / (1000 · 2^73) times a second:
//
//	  2 processes × 1,000,000 ids/s   once in about 300,000 years
//	100 processes ×   100,000 ids/s   once in about 6,000 years
//	100 processes × 1,000,000 ids/s   once in about 60 years
//
// That is what any UUIDv7 allows: 48 of its 122 free bits go to the
// millisecond, which every process shares. (google/uuid's NewV7 fills rand_a
// with the sub-millisecond time instead: 62 random bits, and a same-time pair
// is 2^-74 likely to collide if the processes' calls are spread evenly within
// the millisecond.) A random version 4 UUID has all 122 bits random, and, with
// them, no order. Near 10^9 ids a second over all processes (once in about 7
// months), prefer it, or a counter, whose uniqueness rests on no chance at all.
//
// # Clock
//
// A Generator stamps ids with the wall clock's Unix milliseconds for little
// more than half what time.Now costs: time.Now reads two clocks, wall and
// monotonic, while a Generator reads the wall clock once a second and adds the
// monotonic clock's progress in between. A step of the wall clock therefore
// reaches the timestamps within a second. WithClock replaces the clock, for
// tests.
//
// # Encoding
//
// Text and JSON use the canonical form, 8-4-4-4-12 lowercase hex digits;
// Parse, UnmarshalText and UnmarshalJSON share one decoder that accepts either
// case and nothing else (no braces, no urn:uuid:, no missing hyphens). Every
// decoding error wraps ErrInvalidUUID. In BSON a UUID is binary subtype 4, which
// mongosh shows as UUID("…") and the Node driver reads as a UUID.
//
// Because the timestamp leads, Min and Max turn a time range into an _id range
// that MongoDB serves from the _id index.
package uuidv7
