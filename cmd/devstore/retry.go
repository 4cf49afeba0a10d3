package main

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// retryTable keeps retryable writes as mongod keeps them (src/mongo/db/transaction/
// transaction_participant.cpp and the Retryable Writes specification,
// mongodb/specifications source/retryable-writes): a write command that carries
// lsid and txnNumber, outside a transaction, runs once. For each session it
// keeps the latest txnNumber and the reply of its execution:
//
//   - a higher txnNumber starts a new write;
//   - the same txnNumber, once its execution has been recorded, gets that reply
//     again without running (a findAndModify's reply holds its document, as
//     mongod's stored pre- or post-image does);
//   - the same txnNumber while its first execution still runs waits for it;
//   - a lower one is refused with TransactionTooOld (225).
//
// mongod records the statements it executed. A reply is recorded here when the
// command executed any: it succeeded with no writeErrors, or its answer counts
// a statement that wrote (n > 0, or an upsert) beside its writeErrors; its retry
// gets that reply again, so a statement that succeeded never runs twice (a
// clean stop of seqd gives back many names in one unordered update command).
// One that failed whole (ok 0, or writeErrors and nothing written) is not, and
// its retry runs again, as mongod runs the statements it has not executed. (A
// statement that failed beside others that wrote is not run again here, where
// mongod would run it again: it fails again unless its document changed.)
//
// Memory is bounded: a session unused for logicalSessionTimeoutMinutes is
// forgotten, as mongod reaps it, and past maxSessions the least recently used
// sessions with nothing running are forgotten first.
type retryTable struct {
	mu        sync.Mutex
	sessions  map[string]*txnRecord // by the lsid document's bytes
	max       int
	ttl       time.Duration
	now       func() time.Time
	lastSweep time.Time
	// rerun runs every retry again, as a store that keeps no record would
	// (-mutant-rerun-retries): a broken store, for suites to prove they see it.
	rerun bool
}

// A txnRecord is one session's latest retryable write.
type txnRecord struct {
	txnNumber int64
	running   chan struct{}     // while its execution runs; closed when it ends
	reply     bsoncore.Document // its execution's reply, once recorded
	lastUse   time.Time
}

// defaultMaxSessions is far more than the sessions of a few seqd processes
// (a driver reuses a session per pooled connection) and bounds the table to a
// few megabytes of stored replies.
const defaultMaxSessions = 10_000

func newRetryTable() *retryTable {
	return &retryTable{
		sessions: make(map[string]*txnRecord),
		max:      defaultMaxSessions,
		ttl:      logicalSessionTimeout,
		now:      time.Now,
	}
}

// codeTransactionTooOld is mongod's answer to a txnNumber below the session's latest.
const codeTransactionTooOld = 225

// A retryStep is what begin tells the front to do with a retryable write.
// Exactly one field is set.
type retryStep struct {
	run   chan struct{}     // run the write, then call finish with run
	reply bsoncore.Document // the recorded reply: answer it
	wait  <-chan struct{}   // the first execution runs: wait for this, then begin again
	err   *commandError     // refuse the write
}

// begin decides what a write with lsid and txnNumber does.
func (t *retryTable) begin(lsid string, txnNumber int64) retryStep {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	t.sweep(now)
	rec := t.sessions[lsid]
	if rec == nil {
		t.makeRoom()
		rec = &txnRecord{txnNumber: txnNumber}
		t.sessions[lsid] = rec
	}
	rec.lastUse = now
	switch {
	case txnNumber < rec.txnNumber:
		return retryStep{err: &commandError{code: codeTransactionTooOld, msg: fmt.Sprintf(
			"Retryable write with txnNumber %d is prohibited on session because a newer retryable write with txnNumber %d has already started on this session.",
			txnNumber, rec.txnNumber)}}
	case txnNumber > rec.txnNumber:
		// An older execution that still runs closes its own channel.
		rec.txnNumber, rec.reply = txnNumber, nil
	case t.rerun:
		rec.reply = nil
	case rec.reply != nil:
		return retryStep{reply: rec.reply}
	case rec.running != nil:
		return retryStep{wait: rec.running}
	}
	rec.running = make(chan struct{})
	return retryStep{run: rec.running}
}

// finish ends the execution that begin started with run, recording reply if
// it executed any statement (executed); reply is nil when the write did not reach FerretDB or
// no answer came back. It wakes the retries that wait for it.
func (t *retryTable) finish(lsid string, run chan struct{}, reply bsoncore.Document) {
	t.mu.Lock()
	defer t.mu.Unlock()
	close(run)
	rec := t.sessions[lsid]
	if rec == nil || rec.running != run {
		return // a newer write has begun, or the session was forgotten
	}
	if executed(reply) {
		rec.reply = slices.Clone(reply)
	}
	rec.running = nil
}

// executed reports whether a write command's reply says it executed any of
// its statements: ok, with no writeErrors or with a statement that wrote
// beside them. A writeConcernError does not undo a write.
func executed(reply bsoncore.Document) bool {
	if reply == nil {
		return false
	}
	if ok, _ := reply.Lookup("ok").AsFloat64OK(); ok != 1 {
		return false
	}
	if _, hasWriteErrors := reply.Lookup("writeErrors").ArrayOK(); !hasWriteErrors {
		return true
	}
	n, _ := reply.Lookup("n").AsInt64OK()
	_, upserted := reply.Lookup("upserted").ArrayOK()
	return n > 0 || upserted
}

// sweep forgets the sessions unused for t.ttl, at most once a minute. t.mu is held.
func (t *retryTable) sweep(now time.Time) {
	if now.Sub(t.lastSweep) < time.Minute {
		return
	}
	t.lastSweep = now
	for id, rec := range t.sessions {
		if rec.running == nil && now.Sub(rec.lastUse) >= t.ttl {
			delete(t.sessions, id)
		}
	}
}

// makeRoom forgets the least recently used idle sessions until one more fits.
// t.mu is held.
func (t *retryTable) makeRoom() {
	for len(t.sessions) >= t.max {
		var oldest string
		var found bool
		for id, rec := range t.sessions {
			if rec.running == nil && (!found || rec.lastUse.Before(t.sessions[oldest].lastUse)) {
				oldest, found = id, true
			}
		}
		if !found {
			return // every session has a write running: those are bounded by the connections
		}
		delete(t.sessions, oldest)
	}
}
