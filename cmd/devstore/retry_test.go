package main

import (
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

var okReply = okDocument(bsoncore.AppendInt32Element(nil, "n", 1))

// A retry that arrives while the first execution runs waits for it, then gets
// its reply; a failed execution is not recorded, and its retry runs.
func TestRetryTableWaitsForTheFirstExecution(t *testing.T) {
	tab := newRetryTable()
	first := tab.begin("s", 1)
	if first.run == nil {
		t.Fatalf("first execution: %+v, want run", first)
	}
	retry := tab.begin("s", 1)
	if retry.wait == nil {
		t.Fatalf("retry during the first execution: %+v, want wait", retry)
	}
	tab.finish("s", first.run, okReply)
	select {
	case <-retry.wait:
	default:
		t.Fatal("the retry still waits after the first execution ended")
	}
	if again := tab.begin("s", 1); string(again.reply) != string(okReply) {
		t.Errorf("retry after the first execution: %+v, want its reply", again)
	}

	failed := tab.begin("s", 2)
	tab.finish("s", failed.run, errorDocument(badValue("no"), nil))
	if again := tab.begin("s", 2); again.run == nil {
		t.Errorf("retry of a failed write: %+v, want run", again)
	}
	if old := tab.begin("s", 1); old.err == nil || old.err.code != codeTransactionTooOld {
		t.Errorf("older txnNumber: %+v, want TransactionTooOld", old)
	}
}

// Sessions unused for logicalSessionTimeoutMinutes are forgotten, and past the
// cap the least recently used idle ones are.
func TestRetryTableIsBounded(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	tab := newRetryTable()
	tab.now = func() time.Time { return now }
	tab.max = 2
	for _, id := range []string{"a", "b", "c"} {
		step := tab.begin(id, 1)
		tab.finish(id, step.run, okReply)
		now = now.Add(time.Second)
	}
	if _, ok := tab.sessions["a"]; ok || len(tab.sessions) != 2 {
		t.Errorf("sessions past the cap of 2: %v, want b and c", tab.sessions)
	}
	now = now.Add(logicalSessionTimeout + time.Minute)
	tab.begin("d", 1)
	if len(tab.sessions) != 1 {
		t.Errorf("%d sessions after the timeout, want only the new one", len(tab.sessions))
	}
}
