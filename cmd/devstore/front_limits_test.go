package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/iotest"
	"time"

	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/wiremessage"
)

// These tests run the front alone, in front of a fake FerretDB that answers every
// message with {ok: 1} and counts the connections made to it.

// A testFront is a front with a fake FerretDB; set its limits, then serve.
type testFront struct {
	*front
	dials atomic.Int64 // connections made to the fake FerretDB
}

func newTestFront() *testFront {
	tf := &testFront{}
	tf.front = newFront(tf.dial, slog.New(slog.DiscardHandler))
	return tf
}

func (tf *testFront) dial(ctx context.Context) (net.Conn, error) {
	tf.dials.Add(1)
	front, ferret := net.Pipe()
	go fakeFerret(ferret)
	return front, nil
}

// fakeFerret answers every message on c with {ok: 1} until c is closed.
func fakeFerret(c net.Conn) {
	defer c.Close()
	r := bufio.NewReader(c)
	var msg []byte
	for {
		var err error
		if msg, err = readMessage(r, msg); err != nil {
			return
		}
		_, requestID, _, _, _, _ := wiremessage.ReadHeader(msg)
		if _, err := c.Write(appendMsg(nil, requestID, okDocument())); err != nil {
			return
		}
	}
}

// serve runs the front on l until t ends and returns l's address.
func (tf *testFront) serve(t *testing.T, l net.Listener) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tf.front.serve(ctx, l) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return l.Addr().String()
}

func listen(t *testing.T) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// A parkListener reports each accepted connection once on parked, when the front
// reads from it again after having read its first n bytes: by then the front has
// done all it does with those bytes, and waits for more.
type parkListener struct {
	net.Listener
	n      int64
	parked chan<- struct{}
}

func (l *parkListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &parkConn{Conn: c, l: l}, nil
}

type parkConn struct {
	net.Conn
	l    *parkListener
	read int64 // by the front's one reader of the connection
	once sync.Once
}

func (c *parkConn) Read(p []byte) (int, error) {
	if c.read >= c.l.n {
		c.once.Do(func() { c.l.parked <- struct{}{} })
	}
	n, err := c.Conn.Read(p)
	c.read += int64(n)
	return n, err
}

// dialFront connects to addr and closes the connection when t ends.
func dialFront(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// pingMessage is a whole OP_MSG {ping: 1, $db: "admin"}.
func pingMessage() []byte {
	return appendMsg(nil, 0, bsoncore.NewDocumentBuilder().
		AppendInt32("ping", 1).AppendString("$db", "admin").Build())
}

// ping sends c a ping and reads the answer; an error means c is closed or mute.
func ping(c net.Conn) error {
	if _, err := c.Write(pingMessage()); err != nil {
		return err
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	defer c.SetReadDeadline(time.Time{})
	reply, err := readMessage(bufio.NewReader(c), nil)
	if err != nil {
		return err
	}
	if body, ok := msgBody(reply); !ok || body.Lookup("ok").Double() != 1 {
		return errors.New("the answer is not {ok: 1}")
	}
	return nil
}

// waitClosed waits up to 10 s for the front to close c and returns how long that
// took. Anything c receives instead fails the test.
func waitClosed(t *testing.T, c net.Conn) time.Duration {
	t.Helper()
	start := time.Now()
	c.SetReadDeadline(start.Add(10 * time.Second))
	n, err := c.Read(make([]byte, 1))
	switch {
	case n > 0:
		t.Fatal("the front answered; want the connection closed")
	case errors.Is(err, os.ErrDeadlineExceeded):
		t.Fatal("the connection is still open after 10 s")
	case !errors.Is(err, io.EOF) && !errors.Is(err, syscall.ECONNRESET):
		t.Fatalf("reading: %v, want the connection closed", err)
	}
	return time.Since(start)
}

// Clients that declare the largest message and send only its first bytes cost
// the front no more than those bytes, and no FerretDB connection.
func TestFrontHoldsOnlyWhatArrived(t *testing.T) {
	const conns = 64
	var head []byte // a standard header and the flags of an OP_MSG of 48 MB
	head = binary.LittleEndian.AppendUint32(head, maxMessageSize)
	head = binary.LittleEndian.AppendUint32(head, 1) // requestID
	head = binary.LittleEndian.AppendUint32(head, 0) // responseTo
	head = binary.LittleEndian.AppendUint32(head, uint32(wiremessage.OpMsg))
	head = binary.LittleEndian.AppendUint32(head, 0) // flagBits

	tf := newTestFront()
	parked := make(chan struct{}, conns)
	addr := tf.serve(t, &parkListener{Listener: listen(t), n: int64(len(head)), parked: parked})
	before := heapAlloc()
	for range conns {
		if _, err := dialFront(t, addr).Write(head); err != nil {
			t.Fatal(err)
		}
	}
	ctx := testContext(t)
	for i := range conns {
		select {
		case <-parked:
		case <-ctx.Done():
			t.Fatalf("the front read the first bytes of %d connections of %d", i, conns)
		}
	}
	after := heapAlloc()

	grown := after - before
	t.Logf("heap %.1f MB before, %.1f MB with %d connections holding %d bytes of a %d-byte message each",
		float64(before)/1e6, float64(after)/1e6, conns, len(head), maxMessageSize)
	if grown >= 64e6 {
		t.Errorf("the heap grew by %.1f MB for %d bytes received; want less than 64 MB", float64(grown)/1e6, conns*len(head))
	}
	if n := tf.dials.Load(); n != 0 {
		t.Errorf("%d connections to FerretDB for clients that sent no whole message; want none", n)
	}
}

// heapAlloc is the live heap after a collection.
func heapAlloc() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// The front connects to FerretDB at a client's first whole message, once per
// client connection.
func TestFrontDialsAtTheFirstMessage(t *testing.T) {
	tf := newTestFront()
	parked := make(chan struct{}, 1)
	msg := pingMessage()
	addr := tf.serve(t, &parkListener{Listener: listen(t), n: 20, parked: parked})
	c := dialFront(t, addr)
	if _, err := c.Write(msg[:20]); err != nil {
		t.Fatal(err)
	}
	select {
	case <-parked:
	case <-testContext(t).Done():
		t.Fatal("the front did not read the first bytes")
	}
	if n := tf.dials.Load(); n != 0 {
		t.Errorf("%d connections to FerretDB before the first message was whole; want none", n)
	}
	if _, err := c.Write(msg[20:]); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := readMessage(bufio.NewReader(c), nil); err != nil {
		t.Fatalf("the first message: %v", err)
	}
	if err := ping(c); err != nil {
		t.Fatalf("the second message: %v", err)
	}
	if n := tf.dials.Load(); n != 1 {
		t.Errorf("%d connections to FerretDB for one client connection; want 1", n)
	}
}

// A message begun must arrive whole within the read timeout.
func TestFrontClosesAStalledMessage(t *testing.T) {
	tf := newTestFront()
	tf.readTimeout = 200 * time.Millisecond
	tf.idleTimeout = time.Hour
	c := dialFront(t, tf.serve(t, listen(t)))
	if err := ping(c); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write(pingMessage()[:20]); err != nil {
		t.Fatal(err)
	}
	if took := waitClosed(t, c); took < tf.readTimeout {
		t.Errorf("closed after %v, before the read timeout %v", took, tf.readTimeout)
	}
}

// A connection on which no message begins within the idle timeout is closed, be
// it new or between messages; one whose message has begun is not.
func TestFrontClosesIdleConnections(t *testing.T) {
	tf := newTestFront()
	tf.readTimeout = time.Hour
	tf.idleTimeout = 200 * time.Millisecond
	addr := tf.serve(t, listen(t))

	t.Run("new", func(t *testing.T) {
		if took := waitClosed(t, dialFront(t, addr)); took < tf.idleTimeout {
			t.Errorf("closed after %v, before the idle timeout %v", took, tf.idleTimeout)
		}
	})
	t.Run("between messages", func(t *testing.T) {
		c := dialFront(t, addr)
		if err := ping(c); err != nil {
			t.Fatal(err)
		}
		waitClosed(t, c)
	})
	t.Run("message begun", func(t *testing.T) {
		c := dialFront(t, addr)
		msg := pingMessage()
		if _, err := c.Write(msg[:20]); err != nil {
			t.Fatal(err)
		}
		// Past the idle timeout several times over, the connection is open...
		c.SetReadDeadline(time.Now().Add(5 * tf.idleTimeout))
		if _, err := c.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("reading while the message is unfinished: %v, want the connection open and silent", err)
		}
		// ...and the message, finished, is answered.
		if _, err := c.Write(msg[20:]); err != nil {
			t.Fatal(err)
		}
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := readMessage(bufio.NewReader(c), nil); err != nil {
			t.Fatalf("the finished message: %v", err)
		}
	})
}

// Past maxConns client connections, a new one is closed at once; once one of them
// ends, a new one is served again.
func TestFrontRefusesConnectionsPastTheCap(t *testing.T) {
	tf := newTestFront()
	tf.maxConns = 2
	addr := tf.serve(t, listen(t))
	first, second := dialFront(t, addr), dialFront(t, addr)
	for _, c := range []net.Conn{first, second} {
		if err := ping(c); err != nil {
			t.Fatal(err)
		}
	}
	waitClosed(t, dialFront(t, addr))

	first.Close()
	// The front learns of the close on its own time; until then it refuses.
	ctx := testContext(t)
	for {
		c := dialFront(t, addr)
		err := ping(c)
		c.Close()
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("no connection served after one of %d ended: %v", tf.maxConns, err)
		}
	}
	if err := ping(second); err != nil {
		t.Errorf("a connection within the cap: %v", err)
	}
}

// readMessage puts together messages that arrive a few bytes at a time, in
// storage that it reuses from one message to the next.
func TestReadMessageReassembles(t *testing.T) {
	var stream []byte
	var want [][]byte
	for i, size := range []int{16, 5000, 1<<20 + 3, 40, 3 * minMessageBuffer} {
		msg := binary.LittleEndian.AppendUint32(nil, uint32(size))
		for j := len(msg); j < size; j++ {
			msg = append(msg, byte(i+j))
		}
		want = append(want, msg)
		stream = append(stream, msg...)
	}
	r := bufio.NewReader(iotest.HalfReader(bytes.NewReader(stream)))
	var buf []byte
	for i, w := range want {
		var err error
		if buf, err = readMessage(r, buf); err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		if !bytes.Equal(buf, w) {
			t.Fatalf("message %d of %d bytes read wrong", i, len(w))
		}
	}
	if _, err := readMessage(r, buf); err != io.EOF {
		t.Errorf("after the last message: %v, want EOF", err)
	}
}
