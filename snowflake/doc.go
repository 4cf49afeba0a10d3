// Package snowflake makes 64-bit integer ids ordered by time, without a round
// trip to a store: Twitter's Snowflake layout, with the worker id either
// assigned by the application (NewGenerator) or leased from MongoDB (Lessor),
// and a generator that never repeats an id at any rate or across clock steps.
//
// # Layouts
//
// An id is a non-negative int64; its bits, from the most significant:
//
//	           sign  time (ms since Epoch)  worker id   sequence
//	Twitter     1    41                     10          12
//	JS53        0    40                     5           8
//
// Epoch is 2026-01-01T00:00:00Z. Twitter, the default, has 1,024 worker ids,
// 4,096 ids per millisecond per worker (4 million a second), and lasts until
// 2095-09-07. JS53 keeps every id at or below 2^53 − 1, the largest integer a
// JavaScript number (and JSON read by JavaScript) holds exactly: 32 worker ids,
// 256 ids per millisecond per worker (256,000 a second), until 2060-11-03. A
// deployment chooses one layout for good: ids of the two layouts are not
// ordered with each other, and can be equal.
//
// # Guarantees
//
// A Generator keeps the millisecond and sequence of the last id it handed out
// in one 64-bit word (internal/clockseq, the core objectid and uuidv7 use too)
// and moves it forward with one atomic operation per call. From that:
//
//   - Unique and ordered: a Generator never returns the same id twice, and its
//     ids strictly increase in the order the calls take effect, at any rate and
//     from any number of goroutines. A batch from Fill is increasing too.
//   - Borrowing: past the last sequence of a millisecond, the next id takes the
//     next millisecond, sequence 0, whether or not the clock has got there. Ids
//     run at most MaxBorrow ahead of the clock: beyond it New waits for the
//     clock, up to MaxWait, and past that returns ErrClockBehind.
//   - Clock steps: the time field never goes back. If the wall clock steps
//     back, ids keep the last millisecond and count on, borrowing as above: a
//     step back by less than MaxBorrow+MaxWait costs a wait, a longer one
//     ErrClockBehind until the clock has caught up.
//   - Across processes: two Generators that never hold the same worker id at
//     once never make the same id. With a fixed worker id that is the
//     application's promise; a leased one is seqd's (see Lessor).
//   - Range: New fails with ErrExhausted rather than wrap past the layout's end.
//
// Decode splits an id into time, worker id and sequence; Min and Max turn a
// time into the id range of its millisecond, for range queries on the _id
// index.
package snowflake
