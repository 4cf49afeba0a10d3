// Package proc runs the programs of this repository as child processes, for the
// integration tests and for seqbench: build a binary with the go tool, start it, wait
// until it says where it listens, keep the end of its output for error messages, stop
// it gracefully or kill it like a crash.
//
// No child outlives its parent: on Linux the kernel kills every child when the process
// that started it dies (Pdeathsig), for example on a test timeout or a killed benchmark.
// Children run in their own process group, so that a terminal's Ctrl-C reaches the
// parent alone and the parent stops its children in order.
package proc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/procfs"
)

// Timeouts that apply when the caller's context has no deadline.
const (
	// StartTimeout bounds the wait for the server to say it listens.
	StartTimeout = time.Minute
	// StopTimeout is how long Stop waits after SIGTERM before it sends SIGKILL.
	StopTimeout = 10 * time.Second
)

// Ready reads one line of a server's standard output and reports the address the
// server listens on, once a line says so.
type Ready func(line []byte) (addr string, ok bool)

// A Process is a running server. Its one goroutine waits for the process to exit;
// Stop and Kill end the process, so the goroutine ends with it.
type Process struct {
	cmd    *exec.Cmd
	addr   string
	output *tail
	done   chan struct{} // closed once the process has exited
	err    error         // the exit status; set before done is closed
}

// Start runs cmd and returns once ready finds the listening address in its standard
// output, or fails if the process exits or ctx ends first.
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

// CPUTime is the user plus system CPU time the process has used so far, 0 where /proc
// cannot tell (after it exited, or on a system without /proc).
func (p *Process) CPUTime() time.Duration {
	proc, err := procfs.NewProc(p.Pid())
	st, err2 := proc.Stat()
	if err != nil || err2 != nil {
		return 0
	}
	return time.Duration(st.CPUTime() * float64(time.Second))
}

// Output returns the end of the server's standard output and error, for failure
// messages.
func (p *Process) Output() string { return p.output.String() }

// Signal sends sig to the process.
func (p *Process) Signal(sig os.Signal) error { return p.cmd.Process.Signal(sig) }

// Exited returns nil while the process runs, and afterwards an error with its exit
// status and the end of its output.
func (p *Process) Exited() error {
	select {
	case <-p.done:
		return fmt.Errorf("%s exited (%v):\n%s", filepath.Base(p.cmd.Path), p.err, p.output)
	default:
		return nil
	}
}

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

// Command is exec.CommandContext for a program that runs to its end, such as a load
// generator or go test: in its own process group like a server, and, when ctx ends,
// interrupted (SIGINT to the group, so that it can still report) and killed WaitDelay
// later.
func Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.SysProcAttr = sysProcAttr()
	cmd.Cancel = func() error { return interruptGroup(cmd) }
	cmd.WaitDelay = 15 * time.Second
	return cmd
}

// ShellJoin writes args as a shell would need them, quoting what needs quoting: a
// command line for a log or a report that a reader can paste.
func ShellJoin(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$*?[]{}()<>|&;^#~") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return strings.Join(out, " ")
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
