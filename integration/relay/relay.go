//go:build integration

// Package relay is a TCP relay for the integration tests: it stands between a
// client (seqd, a driver) and a server (the store), and can slow the server's
// answers down, or cut the client off from the server and heal the partition.
package relay

import (
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A Relay forwards TCP connections to a server and holds everything the server
// sends for a delay the test can change at any time: a slow backend, as its client
// sees it. Cut and Heal partition the client from the server and back.
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
		conns: map[net.Conn]struct{}{}, held: map[net.Conn]struct{}{}}
	p.wg.Go(p.accept)
	tb.Cleanup(p.close)
	return p
}

// Addr is where clients connect.
func (p *Relay) Addr() string { return p.ln.Addr().String() }

// SetDelay makes the proxy hold each chunk from the server for d before passing it on.
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
		p.wg.Go(func() { p.pipe(up, down, false) })
		p.wg.Go(func() { p.pipe(down, up, true) })
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

// pipe copies from src to dst, delayed if slow, and closes both when either side ends.
func (p *Relay) pipe(dst, src net.Conn, slow bool) {
	defer p.untrack(dst, src)
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if d := time.Duration(p.delay.Load()); slow && d > 0 {
				timer := time.NewTimer(d)
				select {
				case <-timer.C:
				case <-p.closed:
					timer.Stop()
					return
				}
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
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
