//go:build integration

// Package devstore builds and runs the development store for tests. The store is
// cmd/devstore, FerretDB on SQLite, and speaks the MongoDB wire protocol on
// machines where mongod cannot run.
//
// cmd/devstore is a separate module, so that seqd does not depend on FerretDB.
// This package does not import it either. Build compiles the binary with the go
// tool, and Start runs it as a child process:
//
//	bin, err := devstore.Build(ctx) // once per test binary; Clean removes it
//	srv, err := devstore.Start(ctx, bin, t.TempDir())
//	defer srv.Stop(ctx)
//	client, err := mongo.Connect(options.Client().ApplyURI(srv.URI()))
//
// A Server is one process on one data directory. Fault tests can Kill it and
// StartAt the same directory and address again.
package devstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Timeouts that apply when the caller's context has no deadline.
const (
	// StartTimeout bounds the wait for "listening on".
	StartTimeout = time.Minute
	// StopTimeout is how long Stop waits after SIGTERM before it sends SIGKILL.
	StopTimeout = 10 * time.Second
)

var build struct {
	sync.Mutex
	dir string // temporary directory that holds the binary, once built
	bin string
}

// Build compiles cmd/devstore, the first time it is called in a process, and
// returns the binary's path. Later calls return the same path. The go build cache
// makes a rebuild in a later test run fast. The first build ever takes about a
// minute.
func Build(ctx context.Context) (string, error) {
	build.Lock()
	defer build.Unlock()
	if build.bin != "" {
		return build.bin, nil
	}
	src, err := sourceDir()
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "seqd-devstore-")
	if err != nil {
		return "", fmt.Errorf("devstore: build: %w", err)
	}
	bin := filepath.Join(dir, "devstore")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, ".")
	cmd.Dir = src
	cmd.Env = nestedModuleEnv(os.Environ())
	if out, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("devstore: go build in %s: %w\n%s", src, err, out)
	}
	build.dir, build.bin = dir, bin
	return bin, nil
}

// Clean removes the binary that Build made. The next Build compiles it again.
func Clean() error {
	build.Lock()
	defer build.Unlock()
	if build.dir == "" {
		return nil
	}
	err := os.RemoveAll(build.dir)
	build.dir, build.bin = "", ""
	return err
}

// sourceDir finds cmd/devstore from this file's place in the repository.
func sourceDir() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("devstore: cannot locate the package source")
	}
	dir := filepath.Join(filepath.Dir(file), "..", "..", "cmd", "devstore")
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		return "", fmt.Errorf("devstore: no nested module at %s: %w", dir, err)
	}
	return dir, nil
}

// nestedModuleEnv drops the -mod and -modfile flags that the outer go command may
// pass down in GOFLAGS. They name seqd's go.mod, and the nested module has its own.
func nestedModuleEnv(env []string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		flags, ok := strings.CutPrefix(kv, "GOFLAGS=")
		if !ok {
			out = append(out, kv)
			continue
		}
		var keep []string
		for _, f := range strings.Fields(flags) {
			if !strings.HasPrefix(f, "-mod=") && !strings.HasPrefix(f, "-modfile=") {
				keep = append(keep, f)
			}
		}
		out = append(out, "GOFLAGS="+strings.Join(keep, " "))
	}
	return out
}

// A Server is a running dev store process.
type Server struct {
	cmd    *exec.Cmd
	addr   string
	dir    string
	stderr *tail
	done   chan struct{} // closed once the process has exited
	err    error         // the process's exit status; set before done is closed
}

// Start runs bin on a free port of 127.0.0.1 with its data in dir. It returns once
// the server accepts connections.
func Start(ctx context.Context, bin, dir string) (*Server, error) {
	return StartAt(ctx, bin, dir, "127.0.0.1:0")
}

// StartAt is Start on the address listen. A restart after Kill or Stop can pass
// the old Addr, so that clients find the server where it was.
func StartAt(ctx context.Context, bin, dir, listen string) (*Server, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, StartTimeout)
		defer cancel()
	}
	listening := &listenWatch{addr: make(chan string, 1)}
	s := &Server{
		cmd:    exec.Command(bin, "-listen", listen, "-dir", dir),
		dir:    dir,
		stderr: &tail{max: 64 << 10},
		done:   make(chan struct{}),
	}
	s.cmd.Stdout = listening
	s.cmd.Stderr = s.stderr
	s.cmd.SysProcAttr = sysProcAttr()
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("devstore: start: %w", err)
	}
	go func() {
		s.err = s.cmd.Wait()
		close(s.done)
	}()

	select {
	case s.addr = <-listening.addr:
		return s, nil
	case <-s.done:
		return nil, fmt.Errorf("devstore: exited before listening (%v):\n%s", s.err, s.stderr)
	case <-ctx.Done():
		s.kill()
		return nil, fmt.Errorf("devstore: not listening: %w\n%s", ctx.Err(), s.stderr)
	}
}

// Addr is the server's host:port.
func (s *Server) Addr() string { return s.addr }

// URI is a MongoDB connection string for the server.
func (s *Server) URI() string { return "mongodb://" + s.addr + "/" }

// Dir is the server's data directory.
func (s *Server) Dir() string { return s.dir }

// Done is closed once the process has exited, for whatever reason.
func (s *Server) Done() <-chan struct{} { return s.done }

// Stderr returns the end of the server's log, for failure messages.
func (s *Server) Stderr() string { return s.stderr.String() }

// Stop sends SIGTERM and waits for the process to exit. If it has not exited when
// ctx ends (or after StopTimeout, if ctx has no deadline), Stop sends SIGKILL. Stop
// returns an error only if the process had to be killed. Calling Stop again, or
// after Kill, is harmless.
func (s *Server) Stop(ctx context.Context) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, StopTimeout)
		defer cancel()
	}
	select {
	case <-s.done:
		return nil
	default:
	}
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		if errors.Is(err, os.ErrProcessDone) {
			<-s.done
			return nil
		}
		s.kill() // no SIGTERM on this system
		return fmt.Errorf("devstore: killed: SIGTERM: %w", err)
	}
	select {
	case <-s.done:
		return nil
	case <-ctx.Done():
		s.kill()
		return fmt.Errorf("devstore: killed after SIGTERM: %w", ctx.Err())
	}
}

// Kill ends the process at once, like a crash, and waits until it has exited.
func (s *Server) Kill() { s.kill() }

func (s *Server) kill() {
	s.cmd.Process.Kill()
	<-s.done
}

// listenWatch is the server's stdout. It reports the address from the first
// "listening on ADDR" line and discards everything else.
type listenWatch struct {
	line []byte
	addr chan string // buffered; gets one value
	seen bool
}

func (w *listenWatch) Write(p []byte) (int, error) {
	if w.seen {
		return len(p), nil
	}
	w.line = append(w.line, p...)
	for {
		i := bytes.IndexByte(w.line, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := strings.TrimSpace(string(w.line[:i]))
		w.line = w.line[i+1:]
		if addr, ok := strings.CutPrefix(line, "listening on "); ok {
			w.seen, w.line = true, nil
			w.addr <- addr
			return len(p), nil
		}
	}
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
