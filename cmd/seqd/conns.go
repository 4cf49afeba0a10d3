package main

import (
	"context"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// connLimit caps the client connections seqd holds open, below the process's file
// limit, so that a flood of idle connections cannot take the descriptors real
// clients and the store's connections need (accept would fail with "too many open
// files"). At the cap, it makes room as nginx does with its keep-alive
// connections: it closes the connection idle the longest (waiting for its first
// request, or for its next one); with none idle, it accepts nothing until one
// closes, and new clients wait in the kernel's backlog, which costs no descriptor.
//
// A connection whose answer has waited stallAfter or more for its client to read
// it (a write blocked: the socket buffers are full) counts as idle since its
// write began. A client that sends requests and never reads the answers holds a
// connection busy until WriteTimeout; were it not closed at the cap, a few such
// clients would hold every place, and each new connection, the only idle one,
// would be closed for the next in the backlog before it sent its request.
//
// A connection on which no request got past the token checks waits for its next
// request shortIdle at most instead of the server's IdleTimeout: an
// unauthenticated client cannot hold a connection open for long.
type connLimit struct {
	net.Listener
	max       int
	shortIdle time.Duration

	mu     sync.Mutex
	conns  map[*limitedConn]struct{}
	freed  chan struct{} // a token when a connection closes
	closed chan struct{} // closed by Close
	once   sync.Once
}

func newConnLimit(ln net.Listener, max int, shortIdle time.Duration) *connLimit {
	return &connLimit{Listener: ln, max: max, shortIdle: shortIdle,
		conns: make(map[*limitedConn]struct{}), freed: make(chan struct{}, 1), closed: make(chan struct{})}
}

// limitedConn is a connection connLimit counts.
type limitedConn struct {
	net.Conn
	l             *connLimit
	authenticated atomic.Bool
	once          sync.Once

	writeSince atomic.Int64 // UnixNano when the Write in progress began; 0: none

	// under l.mu
	idle      bool
	idleSince time.Time
}

// stallAfter is how long a write may wait for its client before the connection
// counts as idle: past what a client that reads its answers ever makes one wait.
const stallAfter = time.Second

// Write notes when it began while it blocks.
func (c *limitedConn) Write(p []byte) (int, error) {
	c.writeSince.Store(time.Now().UnixNano())
	defer c.writeSince.Store(0)
	return c.Conn.Write(p)
}

// idleAt reports since when c is idle, at now: waiting for a request, or for its
// client to read an answer for stallAfter or more. Under l.mu.
func (c *limitedConn) idleAt(now time.Time) (time.Time, bool) {
	if c.idle {
		return c.idleSince, true
	}
	if w := c.writeSince.Load(); w != 0 && now.Sub(time.Unix(0, w)) >= stallAfter {
		return time.Unix(0, w), true
	}
	return time.Time{}, false
}

// Accept waits for room under the cap, then accepts.
func (l *connLimit) Accept() (net.Conn, error) {
	for {
		l.mu.Lock()
		if len(l.conns) < l.max {
			l.mu.Unlock()
			break
		}
		var oldest *limitedConn
		var since time.Time
		writing := false // a write is in progress that may stall
		now := time.Now()
		for c := range l.conns {
			if t, ok := c.idleAt(now); ok && (oldest == nil || t.Before(since)) {
				oldest, since = c, t
			}
			writing = writing || c.writeSince.Load() != 0
		}
		l.mu.Unlock()
		if oldest != nil {
			oldest.Close()
			continue
		}
		var stalled <-chan time.Time // look again: a write in progress may stall
		var timer *time.Timer
		if writing {
			timer = time.NewTimer(stallAfter / 4)
			stalled = timer.C
		}
		select {
		case <-l.freed:
		case <-stalled:
		case <-l.closed:
			return nil, net.ErrClosed
		}
		if timer != nil {
			timer.Stop()
		}
	}
	nc, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	c := &limitedConn{Conn: nc, l: l, idle: true, idleSince: time.Now()}
	l.mu.Lock()
	l.conns[c] = struct{}{}
	l.mu.Unlock()
	return c, nil
}

// Close closes the listener and ends a waiting Accept.
func (l *connLimit) Close() error {
	l.once.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

// Close closes the connection and frees its place.
func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.l.mu.Lock()
		delete(c.l.conns, c)
		c.l.mu.Unlock()
		select {
		case c.l.freed <- struct{}{}:
		default:
		}
	})
	return err
}

// SetReadDeadline is how net/http times a connection's wait for its next request
// (IdleTimeout, set right after the connection turns idle): an idle connection
// that never authenticated gets shortIdle at most.
func (c *limitedConn) SetReadDeadline(t time.Time) error {
	c.l.mu.Lock()
	idle := c.idle
	c.l.mu.Unlock()
	if idle && !c.authenticated.Load() {
		if short := time.Now().Add(c.l.shortIdle); t.IsZero() || t.After(short) {
			t = short
		}
	}
	return c.Conn.SetReadDeadline(t)
}

// connState is the http.Server's ConnState: it tells connLimit which
// connections are idle, and since when.
func (l *connLimit) connState(nc net.Conn, state http.ConnState) {
	c, ok := nc.(*limitedConn)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch state {
	case http.StateNew, http.StateIdle:
		c.idle, c.idleSince = true, time.Now()
	case http.StateActive:
		c.idle = false
	}
}

type connKey struct{}

// connContext is the http.Server's ConnContext: requests carry their connection.
func connContext(ctx context.Context, nc net.Conn) context.Context {
	if c, ok := nc.(*limitedConn); ok {
		return context.WithValue(ctx, connKey{}, c)
	}
	return ctx
}

// markAuthenticated is httpapi's Config.Authenticated: the request's connection
// earns the server's full IdleTimeout.
func markAuthenticated(r *http.Request) {
	if c, ok := r.Context().Value(connKey{}).(*limitedConn); ok {
		c.authenticated.Store(true)
	}
}

// storeConns is what connLimit leaves of the file limit for everything else: the
// driver's pool (100 connections by default) and its monitors, the listeners, the
// log.
const storeConns = 128

// defaultMaxConns is the file limit (taken as 2^20 at most) less storeConns; 0
// when the limit is too low for that to leave 16.
func defaultMaxConns() int {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 1 << 16
	}
	if n := int(min(rl.Cur, 1<<20)) - storeConns; n >= 16 {
		return n
	}
	return 0
}
