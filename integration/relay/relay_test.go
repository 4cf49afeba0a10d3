//go:build integration

package relay

import (
	"bufio"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/wiremessage"
)

// opMsg is an OP_MSG with body as its one section.
func opMsg(reqID, respTo int32, body bsoncore.Document) []byte {
	idx, m := wiremessage.AppendHeaderStart(nil, reqID, respTo, wiremessage.OpMsg)
	m = wiremessage.AppendMsgFlags(m, 0)
	m = wiremessage.AppendMsgSectionType(m, wiremessage.SingleDocument)
	m = append(m, body...)
	return bsoncore.UpdateLength(m, idx, int32(len(m[idx:])))
}

func command(name string) bsoncore.Document {
	return bsoncore.NewDocumentBuilder().AppendString(name, "c").AppendString("$db", "d").Build()
}

// echoServer answers every OP_MSG with {ok: 1, n: <its request ID>}, and sends
// the command names it received on got.
func echoServer(t *testing.T) (addr string, got <-chan string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	names := make(chan string, 100)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				in := bufio.NewReader(c)
				var msg []byte
				for {
					if msg, err = readMessage(in, msg); err != nil {
						return
					}
					_, reqID, _, _, rem, _ := wiremessage.ReadHeader(msg)
					_, rem, _ = wiremessage.ReadMsgFlags(rem)
					_, rem, _ = wiremessage.ReadMsgSectionType(rem)
					body, _, _ := wiremessage.ReadMsgSectionSingleDocument(rem)
					names <- body.Index(0).Key()
					reply := bsoncore.NewDocumentBuilder().AppendInt32("ok", 1).AppendInt32("n", reqID).Build()
					if _, err := c.Write(opMsg(reqID+1000, reqID, reply)); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String(), names
}

// retryable is the write cmd as a driver sends a retryable write: with lsid
// and txnNumber.
func retryable(cmd string, session byte, txnNumber int64) bsoncore.Document {
	lsid := bsoncore.NewDocumentBuilder().AppendBinary("id", 4, []byte{session, 1, 2, 3}).Build()
	return bsoncore.NewDocumentBuilder().AppendString(cmd, "c").AppendDocument("lsid", lsid).
		AppendInt64("txnNumber", txnNumber).AppendString("$db", "d").Build()
}

// roundTrip sends cmd on c and returns the reply's n, or the error of reading it.
func roundTrip(t *testing.T, c net.Conn, reqID int32, cmd string) (int32, error) {
	t.Helper()
	return roundTripDoc(t, c, reqID, command(cmd))
}

func roundTripDoc(t *testing.T, c net.Conn, reqID int32, doc bsoncore.Document) (int32, error) {
	t.Helper()
	cmd := doc.Index(0).Key()
	if _, err := c.Write(opMsg(reqID, 0, doc)); err != nil {
		return 0, err
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	reply, err := readMessage(bufio.NewReader(c), nil)
	if err != nil {
		return 0, err
	}
	body, ok := msgBody(reply)
	if !ok {
		t.Fatalf("reply to %s is not an OP_MSG", cmd)
	}
	return body.Lookup("n").Int32(), nil
}

func msgBody(msg []byte) (bsoncore.Document, bool) {
	_, _, _, opcode, rem, ok := wiremessage.ReadHeader(msg)
	if !ok || opcode != wiremessage.OpMsg {
		return nil, false
	}
	_, rem, _ = wiremessage.ReadMsgFlags(rem)
	_, rem, _ = wiremessage.ReadMsgSectionType(rem)
	doc, _, ok := wiremessage.ReadMsgSectionSingleDocument(rem)
	return doc, ok
}

func dial(t *testing.T, r *Relay) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", r.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestDropWriteReplies: the write reaches the server, its reply never reaches
// the client, whose connection is closed; other commands' replies pass, and
// once n replies are dropped, writes' replies pass too.
func TestDropWriteReplies(t *testing.T) {
	addr, got := echoServer(t)
	r := Start(t, addr)
	r.DropWriteReplies(1)

	c := dial(t, r)
	if n, err := roundTrip(t, c, 1, "find"); err != nil || n != 1 {
		t.Fatalf("find through a relay dropping write replies: n %d, %v; want its reply", n, err)
	}
	<-got
	if n, err := roundTrip(t, c, 2, "findAndModify"); !errors.Is(err, io.EOF) {
		t.Fatalf("findAndModify: n %d, err %v; want the connection closed with no reply", n, err)
	}
	if cmd := <-got; cmd != "findAndModify" {
		t.Fatalf("the server got %q, want findAndModify: the write must run", cmd)
	}
	if d := r.WriteRepliesDropped(); d != 1 {
		t.Fatalf("WriteRepliesDropped = %d, want 1", d)
	}

	c = dial(t, r)
	if n, err := roundTrip(t, c, 3, "update"); err != nil || n != 3 {
		t.Fatalf("update after the one drop asked: n %d, %v; want its reply", n, err)
	}
}

// TestDropWriteRepliesFor: with probability 1 every write reply is dropped
// until StopDropping.
func TestDropWriteRepliesFor(t *testing.T) {
	addr, got := echoServer(t)
	r := Start(t, addr)
	r.DropWriteRepliesFor(1, time.Minute)
	for i, cmd := range []string{"insert", "update", "delete", "findAndModify"} {
		c := dial(t, r)
		if _, err := roundTrip(t, c, int32(i+1), cmd); !errors.Is(err, io.EOF) {
			t.Fatalf("%s: err %v; want the connection closed with no reply", cmd, err)
		}
		<-got
	}
	r.StopDropping()
	c := dial(t, r)
	if n, err := roundTrip(t, c, 9, "insert"); err != nil || n != 9 {
		t.Fatalf("insert after StopDropping: n %d, %v; want its reply", n, err)
	}
	if d := r.WriteRepliesDropped(); d != 4 {
		t.Fatalf("WriteRepliesDropped = %d, want 4", d)
	}
}

// TestDropWriteRepliesNotARetry: a retry of a write whose reply was dropped
// (the same lsid and txnNumber) gets its reply, so that the driver's one retry
// succeeds; another write's reply is dropped.
func TestDropWriteRepliesNotARetry(t *testing.T) {
	addr, got := echoServer(t)
	r := Start(t, addr)
	r.DropWriteRepliesFor(1, time.Minute)
	first := retryable("findAndModify", 7, 42)
	if _, err := roundTripDoc(t, dial(t, r), 1, first); !errors.Is(err, io.EOF) {
		t.Fatalf("findAndModify: err %v; want the connection closed with no reply", err)
	}
	<-got
	if n, err := roundTripDoc(t, dial(t, r), 2, first); err != nil || n != 2 {
		t.Fatalf("its retry: n %d, %v; want its reply", n, err)
	}
	<-got
	for _, other := range []bsoncore.Document{retryable("findAndModify", 7, 43), retryable("findAndModify", 8, 42)} {
		if _, err := roundTripDoc(t, dial(t, r), 3, other); !errors.Is(err, io.EOF) {
			t.Fatalf("another write %v: err %v; want its reply dropped", other, err)
		}
		<-got
	}
	if d := r.WriteRepliesDropped(); d != 3 {
		t.Fatalf("WriteRepliesDropped = %d, want 3", d)
	}
}
