package main

import (
	"bufio"
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// The Go driver, connected with ?replicaSet=rs0, discovers a replica set with a
// writable primary, and so sends txnNumber with findAndModify.
func TestDriverSeesAReplicaSetAndRetryableWrites(t *testing.T) {
	s := startStore(t)
	var mu sync.Mutex
	var kinds []string
	txnNumbers := 0
	opts := options.Client().
		SetServerMonitor(&event.ServerMonitor{TopologyDescriptionChanged: func(e *event.TopologyDescriptionChangedEvent) {
			mu.Lock()
			defer mu.Unlock()
			kinds = append(kinds, e.NewDescription.Kind)
		}}).
		SetMonitor(&event.CommandMonitor{Started: func(_ context.Context, e *event.CommandStartedEvent) {
			if e.CommandName != "findAndModify" {
				return
			}
			if _, err := e.Command.LookupErr("txnNumber"); err == nil {
				mu.Lock()
				txnNumbers++
				mu.Unlock()
			}
		}})
	c := connect(t, "mongodb://"+s.addr+"/?replicaSet=rs0", opts)
	ctx := testContext(t)
	if v, err := increment(ctx, c.Database("rs").Collection("counters"), "n"); err != nil || v != 1 {
		t.Fatalf("increment: %d, %v", v, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(kinds) == 0 || kinds[len(kinds)-1] != "ReplicaSetWithPrimary" {
		t.Errorf("topology kinds %v, want ReplicaSetWithPrimary last", kinds)
	}
	if txnNumbers != 1 {
		t.Errorf("%d findAndModify commands carried txnNumber, want 1", txnNumbers)
	}
}

// wireClient speaks OP_MSG to the store on a connection of its own, as a driver
// whose connection breaks would.
type wireClient struct {
	t    *testing.T
	conn net.Conn
	in   *bufio.Reader
}

func dialWire(t *testing.T, addr string) *wireClient {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &wireClient{t: t, conn: conn, in: bufio.NewReader(conn)}
}

// run sends cmd and returns the reply's body.
func (w *wireClient) run(cmd bson.D) bson.Raw {
	w.t.Helper()
	body, err := bson.Marshal(cmd)
	if err != nil {
		w.t.Fatal(err)
	}
	w.conn.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := w.conn.Write(appendMsg(nil, 0, body)); err != nil {
		w.t.Fatal(err)
	}
	reply, err := readMessage(w.in, nil)
	if err != nil {
		w.t.Fatal(err)
	}
	doc, ok := msgBody(reply)
	if !ok {
		w.t.Fatalf("reply is no OP_MSG: %x", reply)
	}
	return bson.Raw(doc)
}

var testSession = bson.D{{Key: "id", Value: bson.Binary{Subtype: 4, Data: []byte("0123456789abcdef")}}}

// incrementWithTxn is a driver's findAndModify $inc with lsid and txnNumber.
func incrementWithTxn(txn int64) bson.D {
	return bson.D{
		{Key: "findAndModify", Value: "counters"},
		{Key: "query", Value: bson.D{{Key: "_id", Value: "n"}}},
		{Key: "update", Value: bson.D{{Key: "$inc", Value: bson.D{{Key: "seq", Value: int64(1)}}}}},
		{Key: "upsert", Value: true},
		{Key: "new", Value: true},
		{Key: "lsid", Value: testSession},
		{Key: "txnNumber", Value: txn},
		{Key: "$db", Value: "rs"},
	}
}

func seqIn(t *testing.T, reply bson.Raw) int64 {
	t.Helper()
	seq, ok := reply.Lookup("value", "seq").AsInt64OK()
	if !ok {
		t.Fatalf("reply has no value.seq: %v", reply)
	}
	return seq
}

// A findAndModify whose reply was lost (the connection broke after the write
// ran) and that the driver sends again with the same lsid and txnNumber on a new
// connection increments once, and the retry gets the first execution's document.
// An older txnNumber is refused with TransactionTooOld.
func TestRetriedWriteRunsOnce(t *testing.T) {
	s := startStore(t)
	first := dialWire(t, s.addr)
	if got := seqIn(t, first.run(incrementWithTxn(1))); got != 1 {
		t.Fatalf("first execution: seq %d, want 1", got)
	}
	first.conn.Close() // the reply "lost"

	retry := dialWire(t, s.addr)
	if got := seqIn(t, retry.run(incrementWithTxn(1))); got != 1 {
		t.Errorf("retry: seq %d, want 1, the first execution's", got)
	}
	if got := seqIn(t, retry.run(incrementWithTxn(2))); got != 2 {
		t.Errorf("next txnNumber: seq %d, want 2", got)
	}
	old := retry.run(incrementWithTxn(1))
	if code, _ := old.Lookup("code").AsInt64OK(); code != codeTransactionTooOld {
		t.Errorf("older txnNumber: %v, want code %d", old, codeTransactionTooOld)
	}
	c := connect(t, s.uri())
	if got := seqOf(t, c.Database("rs").Collection("counters"), "n"); got != 2 {
		t.Errorf("seq = %d after two writes and two retries, want 2", got)
	}
}

// The mutant store runs a retried write again: the test above would see it.
func TestMutantStoreRunsRetriesAgain(t *testing.T) {
	s := startStore(t, "-mutant-rerun-retries")
	w := dialWire(t, s.addr)
	w.run(incrementWithTxn(1))
	if got := seqIn(t, w.run(incrementWithTxn(1))); got != 2 {
		t.Errorf("mutant retry: seq %d, want 2: it must run again", got)
	}
}

// A transaction is refused with IllegalOperation, saying why.
func TestTransactionsRefused(t *testing.T) {
	s := startStore(t)
	w := dialWire(t, s.addr)
	cmd := append(incrementWithTxn(1), bson.E{Key: "startTransaction", Value: true}, bson.E{Key: "autocommit", Value: false})
	reply := w.run(cmd)
	if code, _ := reply.Lookup("code").AsInt64OK(); code != codeIllegalOperation {
		t.Errorf("transaction: %v, want code %d", reply, codeIllegalOperation)
	}
}

func hasLabel(reply bson.Raw, label string) bool {
	labels, ok := reply.Lookup("errorLabels").ArrayOK()
	if !ok {
		return false
	}
	vals, _ := labels.Values()
	for _, v := range vals {
		if s, _ := v.StringValueOK(); s == label {
			return true
		}
	}
	return false
}

// A failpoint's retryable error code gets RetryableWriteError on a retryable
// write unless the failpoint names the labels itself, even none.
func TestRetryableErrorsLabelled(t *testing.T) {
	s := startStore(t)
	w := dialWire(t, s.addr)
	for _, tc := range []struct {
		name  string
		data  bson.D
		txn   bool
		label bool
	}{
		{"no labels given", bson.D{{Key: "errorCode", Value: 91}}, true, true},
		{"no txnNumber", bson.D{{Key: "errorCode", Value: 91}}, false, false},
		{"not a retryable code", bson.D{{Key: "errorCode", Value: 11000}}, true, false},
		{"empty labels", bson.D{{Key: "errorCode", Value: 91}, {Key: "errorLabels", Value: bson.A{}}}, true, false},
		{"write concern error", bson.D{{Key: "writeConcernError", Value: bson.D{{Key: "code", Value: 91}, {Key: "errmsg", Value: "x"}}}}, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := append(bson.D{{Key: "failCommands", Value: bson.A{"findAndModify"}}}, tc.data...)
			w.run(bson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: bson.D{{Key: "times", Value: 1}}},
				{Key: "data", Value: data}, {Key: "$db", Value: "admin"}})
			cmd := incrementWithTxn(int64(time.Now().UnixNano()))
			if !tc.txn {
				cmd = append(cmd[:5], cmd[7:]...)
			}
			reply := w.run(cmd)
			if got := hasLabel(reply, labelRetryableWriteError); got != tc.label {
				t.Errorf("reply %v: labelled %v, want %v", reply, got, tc.label)
			}
		})
	}
}

// replSetStepDown makes the store a secondary for the seconds asked: writes are
// refused with NotWritablePrimary, labelled and with a newer topologyVersion, an
// awaitable hello is answered at once, and a driver's retryable write goes
// through once the store is primary again, with a new electionId.
func TestStepDown(t *testing.T) {
	s := startStore(t)
	w := dialWire(t, s.addr)
	hello := func() bson.Raw { return w.run(bson.D{{Key: "hello", Value: 1}, {Key: "$db", Value: "admin"}}) }
	before := hello()
	if ok, _ := before.Lookup("isWritablePrimary").BooleanOK(); !ok {
		t.Fatalf("hello before the stepdown: %v", before)
	}
	if reply := w.run(bson.D{{Key: "replSetStepDown", Value: 1}, {Key: "force", Value: true}, {Key: "$db", Value: "rs"}}); reply.Lookup("code").Int32() != codeUnauthorized {
		t.Errorf("replSetStepDown on another database: %v, want code %d", reply, codeUnauthorized)
	}

	// An awaitable hello, waiting for a change of topologyVersion.
	awaited := make(chan bson.Raw, 1)
	go func() {
		aw := dialWire(t, s.addr)
		awaited <- aw.run(bson.D{{Key: "hello", Value: 1}, {Key: "topologyVersion", Value: before.Lookup("topologyVersion").Document()},
			{Key: "maxAwaitTimeMS", Value: int64(20_000)}, {Key: "$db", Value: "admin"}})
	}()

	c := connect(t, "mongodb://"+s.addr+"/?replicaSet=rs0")
	coll := c.Database("rs").Collection("counters")
	ctx := testContext(t)
	if _, err := increment(ctx, coll, "n"); err != nil {
		t.Fatal(err)
	}
	if reply := w.run(bson.D{{Key: "replSetStepDown", Value: 2}, {Key: "force", Value: true}, {Key: "$db", Value: "admin"}}); reply.Lookup("ok").Double() != 1 {
		t.Fatalf("replSetStepDown: %v", reply)
	}
	select {
	case reply := <-awaited:
		if ok, _ := reply.Lookup("secondary").BooleanOK(); !ok {
			t.Errorf("awaitable hello after the stepdown: %v, want secondary", reply)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the awaitable hello was not answered at the stepdown")
	}
	refused := w.run(incrementWithTxn(1))
	if code, _ := refused.Lookup("code").AsInt64OK(); code != codeNotWritablePrimary || !hasLabel(refused, labelRetryableWriteError) {
		t.Errorf("write while stepped down: %v, want code %d labelled", refused, codeNotWritablePrimary)
	}
	if tv, ok := refused.Lookup("topologyVersion").DocumentOK(); !ok || tv.Lookup("counter").Int64() <= before.Lookup("topologyVersion", "counter").Int64() {
		t.Errorf("write while stepped down: %v, want a newer topologyVersion", refused)
	}
	if v, err := increment(ctx, coll, "n"); err != nil || v != 2 {
		t.Errorf("driver's write across the stepdown: %d, %v; want 2", v, err)
	}
	after := hello()
	if ok, _ := after.Lookup("isWritablePrimary").BooleanOK(); !ok || after.Lookup("electionId").ObjectID() == before.Lookup("electionId").ObjectID() {
		t.Errorf("hello after the election: %v, want primary with a new electionId (was %v)", after, before.Lookup("electionId"))
	}
}
