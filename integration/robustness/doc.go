//go:build integration

// Package robustness tests seqd the way etcd's tests/robustness tests etcd: a
// cluster (the store and three seqd processes) takes random traffic while faults
// from a seeded random schedule hit it, and every recorded history is checked
// against what seqd promises, with a linearizability checker
// (anishathalye/porcupine) where the promise is linearizability.
//
//	make robustness                          # 10 runs of 60 s, seeds from the clock
//	make robustness SEED=1234 DURATION=60s   # one run, again
//	make robustness STORE=standalone         # on a standalone dev store
//	make robustness-mutants                  # each mutant must be caught
//
// # The cluster
//
// The store is the suite's backend (integration/backend): MONGODB_URI, mongo:8.0
// in Docker, or the dev store, which is the only one the suite can restart, and
// answers as a one-node replica set (rs0). With -robustness.store=standalone a
// run is on a dev store of its own started with an empty -repl-set, where the
// driver retries no write and nothing steps down; with both, runs take turns
// (make test runs both). Three seqd processes (SEQD_BLOCK_LEASE=2s,
// SEQD_MODE_REFRESH=200ms, so that switches are quick; SEQD_WRITES_IN_FLIGHT 1,
// 2 and 3) reach it each through a relay of its own (integration/relay), with
// directConnection=true, as ?replicaSet=rs0 would have the driver go around the
// relay to the address the store names. On a replica set the driver sends each
// write with lsid and txnNumber and retries it once after a network error or a
// NotWritablePrimary (TestDroppedWriteReplyRetried checks that it does through
// a relay).
//
// # Traffic
//
// Clients take values over HTTP (GET and POST /seq/{name}/next, count 1 to 10)
// from any instance, through the Go client (package client) bound to one
// instance, and through the Go client with its cache. One admin moves values
// forward (PUT {"value": v}, v at or above the value read just before: never a
// forced Set back, which hands values out again by design), switches modes
// (strict ↔ cached) and changes block bounds, and reads sequences (GET). Names
// are of three kinds: strict (never cached), switching, and cached from the start.
// Two more clients take snowflake ids (GET /snowflake, count 1 to 10) from any
// instance; each instance leases its worker id for SEQD_BLOCK_LEASE.
//
// # Faults
//
// One at a time, from a schedule drawn from the seed: the failCommand failpoint
// (closeConnection; errors 91 and 10107; writeConcernError 64 on commands that
// ran; blockConnection past seqd's deadline), kill -9 of a seqd and its restart,
// SIGTERM (a give-back) and restart, a store restart (crash or clean: the dev
// store only), one seqd cut off from the store and healed, SIGSTOP / SIGCONT
// of a seqd for longer than its lease, and two that a replica set meets:
//
//   - a stepdown, {replSetStepDown: 1 to 5 s, force: true}: the primary
//     refuses writes and interrupts those in flight, then is elected again. It
//     lands during the traffic (block fetches, strict writes), during drains
//     (stepdown-drain: the admin switches its cached names to strict just
//     before), during give-backs (stepdown-giveback: a seqd's SIGTERM up to
//     half a second before or after it) and while a seqd is paused past its
//     lease (stepdown-pause: the admin switches to strict as the pause starts,
//     the others drain and answer strict, the primary steps down, and the
//     paused seqd wakes while it is down, unable to renew a lease or to see
//     the switch). Replica sets only.
//   - dropped write replies (drop-replies): one seqd's relay lets the next 1
//     to 5 writes, or each write with probability 0.1 to 1 for 1 to 5 s,
//     reach the store, reads the store's reply, and closes the connection
//     instead of passing it on. The driver retries the write with the same
//     lsid and txnNumber, whose reply the relay passes, and the store must
//     answer from its record of the first execution, not run it again: the
//     request succeeds, and nothing may be lost. On a standalone store the
//     request fails.
//
// Each has a precondition (can it run on this cluster?) and an undo, run before
// the next fault (a stepdown's is to wait for a writable primary). A partition
// or a pause also has the admin switch its cached switching names to strict at
// once, so that switches meet an instance that cannot see them.
//
// # Checks, on every run
//
//   - No value twice, over every name, client, instance and restart; no
//     snowflake id twice either, and each seqd process's snowflake answers in
//     real-time order (an answer that ended before another began holds smaller
//     ids).
//   - Each seqd process's answers strictly increase (cached mode's promise),
//     and each caching Go client's.
//   - Strict answers are linearizable, with admin operations: porcupine checks,
//     per name, the answers known to be strict and the value PUTs and reads
//     against a model of one sequence (model_test.go). Which answers are strict
//     the server does not say; the suite knows from its admin's operations: a
//     strict name's answers always; a switching name's between the end of a
//     drain (the PUT's strict_from, and its answer's time plus the longest lease
//     × 1.02) and the next PUT that might make it cached. The Go client's cache
//     answers are never strict.
//   - A strict answer is above every answer that ended before it started,
//     cached or not (history.CheckAbove).
//   - No strict name's value is skipped that a failure or a Set does not
//     explain. Every request for values is recorded as it went to seqd (the
//     clients' http.RoundTripper: the Go client's attempts before a retry
//     after a 503, and a caching client's blocks, are in it). A strict name's
//     values are handed out one after another, so a gap between two answers is
//     explained only by requests that failed between them (a 503, a timeout, a
//     lost answer: each may have taken the values it asked for, its write up
//     to 5 s after it ended) and by Sets sent between them (up to the value
//     they set); the rest is an anomaly: a write that ran twice, or values
//     taken with every request answered 200. A gap across a store restart is
//     let through: the dev store keeps its record of retryable writes in
//     memory, where mongod keeps it with the write.
//   - The stored counts add up: reserved = served + returned + unaccounted, none
//     negative, unaccounted within what the run's faults and skips can lose, and
//     the stored value at or above every value handed out.
//
// # A failing run
//
// prints its seed (printed first in any case), the fault schedule as it ran, the
// anomalies, and the path of a report directory: the history and the requests
// for values (attempts) as JSON lines, the schedule, each seqd's output, and porcupine's HTML visualization of each
// failing name (the smallest failing partition).
//
// # Mutants
//
// A suite proves it can fail: seqd built with -tags seqdmutants reads
// SEQD_MUTANT and breaks one promise on purpose (counters/mutants_on.go): no-lease
// (blocks served whatever their lease), no-fence (a give-back that ignores the
// floor a Set left), early-answer (the coalescer answers before its write
// returns). The store has one too: store-rerun-retries, the dev store with
// -mutant-rerun-retries, runs a retried write again, so that a dropped reply
// costs a strict name the values of the first execution, with every request
// answered. TestRobustnessMutants runs each until the checks catch it:
//
//	make robustness-mutants RUNS=5 DURATION=30s MUTANTS=store-rerun-retries
package robustness
