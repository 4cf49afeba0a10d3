//go:build integration

// Package relay is a TCP relay for the integration tests: it stands between a
// client (seqd, a driver) and a server (the store), and can slow the server's
// answers down, cut the client off from the server and heal the partition, or
// lose the answers to writes the server has run.
//
// It relays MongoDB's wire protocol a message at a time, and reads of each
// request only what it needs to tell a write (an OP_MSG whose command is
// insert, update, delete or findAndModify) from the rest, with the driver's
// wiremessage package, as the dev store's front does.
package relay

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/wiremessage"
)

// A Relay forwards TCP connections to a server and holds everything the server
// sends for a delay the test can change at any time: a slow backend, as its client
// sees it. Cut and Heal partition the client from the server and back.
// DropWriteReplies and DropWriteRepliesFor lose the replies to writes.
type Relay struct {
	ln       net.Listener
	upstream string
	delay    atomic.Int64 // nanoseconds
	closed   chan struct{}

	mu    sync.Mutex
	conns map[net.Conn]struct{} // forwarded, both ends
	cut   bool                  // between Cut and Heal
	held  map[net.Conn]struct{} // accepted during a cut, forwarded nowhere
	wg    sync.WaitGroup

	// What DropWriteReplies and DropWriteRepliesFor ask, under mu.
	dropNext  int     // the next write replies to drop
	dropProb  float64 // the chance of dropping each write reply until dropUntil
	dropUntil time.Time
	// droppedTxns are the retryable writes whose replies were dropped, until
	// StopDropping: their retries' replies pass.
	droppedTxns map[string]struct{}
	dropped     atomic.Int64
}

// Start listens on a free port of 127.0.0.1 and forwards to upstream until tb
// ends.
func Start(tb testing.TB, upstream string) *Relay {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	p := &Relay{ln: ln, upstream: upstream, closed: make(chan struct{}),
		conns: map[net.Conn]struct{}{}, held: map[net.Conn]struct{}{}, droppedTxns: map[string]struct{}{}}
	p.wg.Go(p.accept)
	tb.Cleanup(p.close)
	return p
}

// Addr is where clients connect.
func (p *Relay) Addr() string { return p.ln.Addr().String() }

// SetDelay makes the proxy hold each message from the server for d before passing it on.
func (p *Relay) SetDelay(d time.Duration) { p.delay.Store(int64(d)) }

// Cut partitions the clients from the server, as a network that drops every
// packet would, but at once: every connection is closed, so that a request in
// flight fails now rather than at its client's timeout, and the connections
// accepted from now on are held open with nothing forwarded either way, so that
// a client's dial succeeds and its handshake never gets an answer, until Heal.
func (p *Relay) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	for c := range p.conns {
		c.Close() // its pipes untrack it
	}
}

// Heal ends a Cut: the connections held are closed, so that their clients dial
// again, and new connections are forwarded.
func (p *Relay) Heal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = false
	for c := range p.held {
		c.Close()
		delete(p.held, c)
	}
}

func (p *Relay) accept() {
	for {
		down, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		var up net.Conn
		if !p.isCut() { // during a cut nothing reaches the server, not even a dial
			if up, err = net.Dial("tcp", p.upstream); err != nil {
				down.Close()
				continue
			}
		}
		switch p.track(down, up) {
		case closing:
			return
		case holding:
			continue
		}
		l := &link{writes: map[int32]string{}}
		p.wg.Go(func() { p.requests(up, down, l) })
		p.wg.Go(func() { p.replies(down, up, l) })
	}
}

func (p *Relay) isCut() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cut
}

// admission is what becomes of an accepted connection.
type admission int

const (
	forwarding admission = iota
	holding              // a cut: held until Heal
	closing              // the proxy is closing: closed
)

// track registers an accepted connection and its upstream (nil if none was
// dialed because the proxy was cut): forwarded, held if the proxy is cut, or
// closed if it is closing.
func (p *Relay) track(down, up net.Conn) admission {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.closed:
		down.Close()
		if up != nil {
			up.Close()
		}
		return closing
	default:
	}
	switch {
	case p.cut:
		if up != nil {
			up.Close()
		}
		p.held[down] = struct{}{}
		return holding
	case up == nil: // cut when accepted, healed since: its client dials again
		down.Close()
		return holding
	}
	p.conns[down] = struct{}{}
	p.conns[up] = struct{}{}
	return forwarding
}

// A link is what the two directions of one forwarded connection share: the
// writes sent and not yet answered, by request ID, each with its retryable
// write's identity ("" if it has none).
type link struct {
	mu     sync.Mutex
	writes map[int32]string
}

// requests forwards the client's messages to the server, noting the writes, and
// closes both connections when either side ends.
func (p *Relay) requests(up, down net.Conn, l *link) {
	defer p.untrack(up, down)
	in := bufio.NewReader(down)
	var msg []byte
	for {
		var err error
		if msg, err = readMessage(in, msg); err != nil {
			return
		}
		if id, txn, ok := writeRequest(msg); ok {
			l.mu.Lock()
			l.writes[id] = txn
			l.mu.Unlock()
		}
		if _, err := up.Write(msg); err != nil {
			return
		}
	}
}

// replies forwards the server's messages to the client, each held for the
// relay's delay, and closes both connections when either side ends, or when
// a write's reply is to be dropped: the server ran the write, and its client
// never learns how it went.
func (p *Relay) replies(down, up net.Conn, l *link) {
	defer p.untrack(down, up)
	in := bufio.NewReader(up)
	var msg []byte
	for {
		var err error
		if msg, err = readMessage(in, msg); err != nil {
			return
		}
		_, _, respTo, _, _, _ := wiremessage.ReadHeader(msg)
		l.mu.Lock()
		txn, write := l.writes[respTo]
		delete(l.writes, respTo)
		l.mu.Unlock()
		if write && p.dropReply(txn) {
			return
		}
		if d := time.Duration(p.delay.Load()); d > 0 {
			timer := time.NewTimer(d)
			select {
			case <-timer.C:
			case <-p.closed:
				timer.Stop()
				return
			}
		}
		if _, err := down.Write(msg); err != nil {
			return
		}
	}
}

// maxMessageSize is mongod's maxMessageSizeBytes.
const maxMessageSize = 48_000_000

// readMessage reads one whole wire message into buf's storage.
func readMessage(r *bufio.Reader, buf []byte) ([]byte, error) {
	var head [4]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return buf, err
	}
	n := int(int32(binary.LittleEndian.Uint32(head[:])))
	if n < 16 || n > maxMessageSize {
		return buf, fmt.Errorf("relay: message length %d out of range", n)
	}
	if cap(buf) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	copy(buf, head[:])
	_, err := io.ReadFull(r, buf[4:])
	return buf, err
}

// writeCommands are the commands whose replies DropWriteReplies drops: those
// a driver retries as retryable writes.
var writeCommands = map[string]bool{
	"insert": true, "update": true, "delete": true,
	"findAndModify": true, "findandmodify": true,
}

// writeRequest reports whether msg is an OP_MSG write command that expects a
// reply, its request ID, and, for a retryable write, its identity: the lsid
// and txnNumber a retry of it carries too ("" without them).
func writeRequest(msg []byte) (reqID int32, txn string, ok bool) {
	_, reqID, _, opcode, rem, ok := wiremessage.ReadHeader(msg)
	if !ok || opcode != wiremessage.OpMsg {
		return 0, "", false
	}
	flags, rem, ok := wiremessage.ReadMsgFlags(rem)
	if !ok || flags&wiremessage.MoreToCome != 0 {
		return 0, "", false
	}
	if flags&wiremessage.ChecksumPresent != 0 {
		if len(rem) < 4 {
			return 0, "", false
		}
		rem = rem[:len(rem)-4]
	}
	for len(rem) > 0 {
		var stype wiremessage.SectionType
		if stype, rem, ok = wiremessage.ReadMsgSectionType(rem); !ok {
			return 0, "", false
		}
		switch stype {
		case wiremessage.SingleDocument:
			body, _, ok := wiremessage.ReadMsgSectionSingleDocument(rem)
			if !ok {
				return 0, "", false
			}
			elem, err := body.IndexErr(0)
			if err != nil || !writeCommands[elem.Key()] {
				return 0, "", false
			}
			lsid, lok := body.Lookup("lsid").DocumentOK()
			txnNumber, tok := body.Lookup("txnNumber").AsInt64OK()
			if lok && tok {
				txn = fmt.Sprintf("%x/%d", []byte(lsid), txnNumber)
			}
			return reqID, txn, true
		case wiremessage.DocumentSequence:
			if _, _, rem, ok = wiremessage.ReadMsgSectionRawDocumentSequence(rem); !ok {
				return 0, "", false
			}
		default:
			return 0, "", false
		}
	}
	return 0, "", false
}

// DropWriteReplies makes the relay drop the replies to the next n write
// commands (insert, update, delete, findAndModify) that expect one: the server
// runs each, the relay reads its reply, closes the connection's both ends and
// passes nothing on. A driver then retries a retryable write, which the server
// must answer from its record of the first, without running it again. The
// reply to a retry (the same lsid and txnNumber as a write whose reply was
// dropped) is never dropped: the retry succeeds, and its caller never learns
// that anything was lost.
func (p *Relay) DropWriteReplies(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dropNext = n
}

// DropWriteRepliesFor makes the relay drop each write reply with probability
// prob for d, as DropWriteReplies drops them.
func (p *Relay) DropWriteRepliesFor(prob float64, d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dropProb, p.dropUntil = prob, time.Now().Add(d)
}

// StopDropping ends DropWriteReplies and DropWriteRepliesFor.
func (p *Relay) StopDropping() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dropNext, p.dropProb, p.dropUntil = 0, 0, time.Time{}
	clear(p.droppedTxns)
}

// WriteRepliesDropped is how many write replies the relay has dropped.
func (p *Relay) WriteRepliesDropped() int64 { return p.dropped.Load() }

// dropReply decides whether the reply to a write is dropped, and counts it
// if so; txn is the write's identity as a retryable write, if it has one.
func (p *Relay) dropReply(txn string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, retry := p.droppedTxns[txn]; retry && txn != "" {
		return false
	}
	drop := false
	switch {
	case p.dropNext > 0:
		p.dropNext--
		drop = true
	case time.Now().Before(p.dropUntil):
		drop = rand.Float64() < p.dropProb
	}
	if drop {
		p.dropped.Add(1)
		if txn != "" {
			p.droppedTxns[txn] = struct{}{}
		}
	}
	return drop
}

func (p *Relay) untrack(conns ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range conns {
		c.Close()
		delete(p.conns, c)
	}
}

// close stops accepting, cuts every connection and waits for the proxy's goroutines.
func (p *Relay) close() {
	p.mu.Lock()
	select {
	case <-p.closed:
	default:
		close(p.closed)
	}
	p.ln.Close()
	for c := range p.conns {
		c.Close()
	}
	for c := range p.held {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// Through returns the MongoDB connection string uri, which must name one host,
// rewritten to reach that host through r only: direct, so that the driver does
// not discover a replica set's members and go around the relay.
func (p *Relay) Through(uri string) (string, error) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "mongodb" || u.Host == "" || strings.Contains(u.Host, ",") {
		return "", fmt.Errorf("relay: a mongodb:// URI with one host is needed, not %q", uri)
	}
	u.Host = p.Addr()
	q := u.Query()
	q.Set("directConnection", "true")
	u.RawQuery = q.Encode()
	return u.String(), nil
}
