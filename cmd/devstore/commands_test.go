package main

import (
	"bufio"
	"net"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// serverStatus counts each command's answers and failures in metrics.commands,
// as FerretDB did with its Prometheus counters (ferretdb/README.md).
func TestServerStatusCountsCommands(t *testing.T) {
	s := startStore(t)
	ctx := testContext(t)
	db := connect(t, s.uri()).Database("counting")
	for range 3 {
		if err := db.RunCommand(ctx, bson.D{{Key: "count", Value: "things"}}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		// A bad value: count names a collection with a string.
		if err := db.RunCommand(ctx, bson.D{{Key: "count", Value: 7}}).Err(); err == nil {
			t.Fatal("count: 7 answered ok, want an error")
		}
	}

	var status struct {
		Metrics struct {
			Commands map[string]struct{ Total, Failed int64 }
		}
	}
	if err := db.RunCommand(ctx, bson.D{{Key: "serverStatus", Value: 1}}).Decode(&status); err != nil {
		t.Fatal(err)
	}
	// The front sends FerretDB nothing else named count.
	if got := status.Metrics.Commands["count"]; got.Total != 5 || got.Failed != 2 {
		t.Errorf("metrics.commands.count = %+v, want {Total:5 Failed:2}", got)
	}
}

// A command whose name is not valid UTF-8 gets CommandNotFound, as any
// unknown command does, and the connection stays open. (FerretDB's Prometheus
// counter refused the name with a panic, which closed the connection.)
func TestCommandNameNotUTF8(t *testing.T) {
	s := startStore(t)
	c := dialFront(t, s.addr)
	msg := appendMsg(nil, 0, bsoncore.NewDocumentBuilder().
		AppendInt32("pi\xffng", 1).AppendString("$db", "admin").Build())
	if _, err := c.Write(msg); err != nil {
		t.Fatal(err)
	}
	body := readBody(t, c)
	if code := body.Lookup("code").AsInt64(); body.Lookup("ok").AsFloat64() != 0 || code != 59 {
		t.Errorf("answer %v, want CommandNotFound (59)", body)
	}
	if err := ping(c); err != nil {
		t.Errorf("ping after it: %v", err)
	}
}

// readBody reads c's next message within 10 s and returns its body, failing the
// test if it is no OP_MSG.
func readBody(t *testing.T, c net.Conn) bsoncore.Document {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	defer c.SetReadDeadline(time.Time{})
	reply, err := readMessage(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	body, ok := msgBody(reply)
	if !ok {
		t.Fatal("the answer is no OP_MSG")
	}
	return body
}
