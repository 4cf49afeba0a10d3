//go:build integration

package integration

import (
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// slowProxy forwards TCP connections to a server and holds everything the server
// sends for a delay the test can change at any time: a slow backend, as its client
// sees it.
type slowProxy struct {
	ln       net.Listener
	upstream string
	delay    atomic.Int64 // nanoseconds
	closed   chan struct{}

	mu    sync.Mutex
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

// startSlowProxy listens on a free port of 127.0.0.1 and forwards to upstream until
// the test ends.
func startSlowProxy(t *testing.T, upstream string) *slowProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &slowProxy{ln: ln, upstream: upstream, closed: make(chan struct{}), conns: map[net.Conn]struct{}{}}
	p.wg.Go(p.accept)
	t.Cleanup(p.close)
	return p
}

// Addr is where clients connect.
func (p *slowProxy) Addr() string { return p.ln.Addr().String() }

// SetDelay makes the proxy hold each chunk from the server for d before passing it on.
func (p *slowProxy) SetDelay(d time.Duration) { p.delay.Store(int64(d)) }

func (p *slowProxy) accept() {
	for {
		down, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		up, err := net.Dial("tcp", p.upstream)
		if err != nil {
			down.Close()
			continue
		}
		if !p.track(down, up) {
			return
		}
		p.wg.Go(func() { p.pipe(up, down, false) })
		p.wg.Go(func() { p.pipe(down, up, true) })
	}
}

// track registers a pair of connections, unless the proxy is closing.
func (p *slowProxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.closed:
		for _, c := range conns {
			c.Close()
		}
		return false
	default:
	}
	for _, c := range conns {
		p.conns[c] = struct{}{}
	}
	return true
}

// pipe copies from src to dst, delayed if slow, and closes both when either side ends.
func (p *slowProxy) pipe(dst, src net.Conn, slow bool) {
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

func (p *slowProxy) untrack(conns ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range conns {
		c.Close()
		delete(p.conns, c)
	}
}

// close stops accepting, cuts every connection and waits for the proxy's goroutines.
func (p *slowProxy) close() {
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
	p.mu.Unlock()
	p.wg.Wait()
}
