//go:build integration

// Package proc builds and runs the servers of an integration test (the dev store,
// seqd) as child processes: start one, wait until it says where it listens, stop it
// gracefully or kill it like a crash.
package proc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"time"
)

// Timeouts that apply when the caller's context has no deadline.
const (
	// StartTimeout bounds the wait for the server to say it listens.
	StartTimeout = time.Minute
	// StopTimeout is how long Stop waits after SIGTERM before it sends SIGKILL.
	StopTimeout = 10 * time.Second
)

var builds struct {
	sync.Mutex
	bins map[string]string // "dir pkg" -> binary
	dirs []string
}

// Build compiles the package pkg of the module in dir (with environment env, nil for
// the test's own) the first time it is asked in a process, and returns the binary's
// path. Later calls return the same path; Clean removes the binaries.
func Build(ctx context.Context, dir, pkg string, env []string) (string, error) {
	builds.Lock()
	defer builds.Unlock()
	key := dir + " " + pkg
	if bin, ok := builds.bins[key]; ok {
		return bin, nil
	}
	tmp, err := os.MkdirTemp("", "seqd-bin-")
	if err != nil {
		return "", fmt.Errorf("proc: build: %w", err)
	}
	bin := filepath.Join(tmp, filepath.Base(filepath.Join(dir, pkg)))
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, pkg)
	cmd.Dir = dir
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(tmp)
		return "", fmt.Errorf("proc: go build %s in %s: %w\n%s", pkg, dir, err, out)
	}
	if builds.bins == nil {
		builds.bins = map[string]string{}
	}
	builds.bins[key] = bin
	builds.dirs = append(builds.dirs, tmp)
	return bin, nil
}

// RepoRoot is the directory of the seqd repository these tests belong to.
func RepoRoot() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("proc: cannot locate the package source")
	}
	return filepath.Join(filepath.Dir(file), "..", ".."), nil
}

// Clean removes the binaries Build made.
func Clean() error {
	builds.Lock()
	defer builds.Unlock()
	var errs []error
	for _, d := range builds.dirs {
		errs = append(errs, os.RemoveAll(d))
	}
	builds.bins, builds.dirs = nil, nil
	return errors.Join(errs...)
}

// Ready reads one line of a server's standard output and reports the address the
// server listens on, once a line says so.
type Ready func(line []byte) (addr string, ok bool)

// A Process is a running server.
type Process struct {
	cmd    *exec.Cmd
	addr   string
	output *tail
	done   chan struct{} // closed once the process has exited
	err    error         // the exit status; set before done is closed
}

// Start runs cmd and returns once ready finds the listening address in its standard
// output, or fails if the process exits or ctx ends first. The process is killed if
// the test process dies, so that no server outlives its test run.
func Start(ctx context.Context, cmd *exec.Cmd, ready Ready) (*Process, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, StartTimeout)
		defer cancel()
	}
	name := filepath.Base(cmd.Path)
	p := &Process{cmd: cmd, output: &tail{max: 256 << 10}, done: make(chan struct{})}
	watch := &readyWatch{ready: ready, addr: make(chan string, 1), out: p.output}
	cmd.Stdout = watch
	cmd.Stderr = p.output
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: start: %w", name, err)
	}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	select {
	case p.addr = <-watch.addr:
		return p, nil
	case <-p.done:
		return nil, fmt.Errorf("%s: exited before listening (%v):\n%s", name, p.err, p.output)
	case <-ctx.Done():
		p.Kill()
		return nil, fmt.Errorf("%s: not listening: %w\n%s", name, ctx.Err(), p.output)
	}
}

// Addr is the address the server said it listens on.
func (p *Process) Addr() string { return p.addr }

// Pid is the process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Done is closed once the process has exited, for whatever reason.
func (p *Process) Done() <-chan struct{} { return p.done }

// Output returns the end of the server's standard output and error, for failure
// messages.
func (p *Process) Output() string { return p.output.String() }

// Signal sends sig to the process.
func (p *Process) Signal(sig os.Signal) error { return p.cmd.Process.Signal(sig) }

// Stop sends SIGTERM and waits for the process to exit. If it has not exited when
// ctx ends (or after StopTimeout, if ctx has no deadline), Stop sends SIGKILL and
// returns an error. Calling Stop again, or after Kill, is harmless.
func (p *Process) Stop(ctx context.Context) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, StopTimeout)
		defer cancel()
	}
	select {
	case <-p.done:
		return nil
	default:
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		if errors.Is(err, os.ErrProcessDone) {
			<-p.done
			return nil
		}
		p.Kill()
		return fmt.Errorf("killed: SIGTERM: %w", err)
	}
	select {
	case <-p.done:
		return nil
	case <-ctx.Done():
		p.Kill()
		return fmt.Errorf("killed after SIGTERM: %w", ctx.Err())
	}
}

// Kill ends the process at once, like a crash, and waits until it has exited.
func (p *Process) Kill() {
	p.cmd.Process.Kill()
	<-p.done
}

// Wait waits for the process to exit and returns its exit status.
func (p *Process) Wait(ctx context.Context) error {
	select {
	case <-p.done:
		return p.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// readyWatch is a server's standard output: it copies everything to out and
// reports the address from the first line ready accepts.
type readyWatch struct {
	ready Ready
	out   *tail
	line  []byte
	addr  chan string // buffered; gets one value
	seen  bool
}

func (w *readyWatch) Write(p []byte) (int, error) {
	w.out.Write(p)
	if w.seen {
		return len(p), nil
	}
	w.line = append(w.line, p...)
	for {
		i := bytes.IndexByte(w.line, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := w.line[:i]
		w.line = w.line[i+1:]
		if addr, ok := w.ready(bytes.TrimSpace(line)); ok {
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
