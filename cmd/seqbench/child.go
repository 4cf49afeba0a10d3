package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Bounds on a server's life, since a benchmark must always end by itself.
const (
	startTimeout = 30 * time.Second // until a server answers
	stopTimeout  = 10 * time.Second // from SIGTERM to SIGKILL
	pollInterval = 50 * time.Millisecond
)

// A child is a server process seqbench started. Its one goroutine waits for the process
// to exit; stop ends the process, so the goroutine ends with it.
type child struct {
	name   string
	cmd    *exec.Cmd
	stdout *tail
	stderr *tail
	done   chan struct{} // closed once the process has exited
	err    error         // the exit status; set before done is closed
}

// startChild runs bin with args and env (the whole environment) in its own process group,
// so that a Ctrl-C in the terminal reaches seqbench only and seqbench stops its children
// in order.
func startChild(name, bin string, args, env []string) (*child, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	c := &child{name: name, cmd: cmd, stdout: newTail(), stderr: newTail(), done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = c.stdout, c.stderr
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: start: %w", name, err)
	}
	go func() {
		c.err = cmd.Wait()
		close(c.done)
	}()
	return c, nil
}

// commandLine is how the child was started, as a shell line: the environment variables
// that differ from seqbench's own, then the command.
func (c *child) commandLine() string {
	var parts []string
	for _, kv := range c.cmd.Env {
		key, value, _ := strings.Cut(kv, "=")
		if own, ok := os.LookupEnv(key); !ok || own != value {
			parts = append(parts, kv)
		}
	}
	parts = append(parts, filepath.Base(c.cmd.Path))
	return strings.Join(append(parts, c.cmd.Args[1:]...), " ")
}

// exited reports the exit, with the end of the output, if the process has exited.
func (c *child) exited() error {
	select {
	case <-c.done:
		return fmt.Errorf("%s exited (%v):\n%s%s", c.name, c.err, c.stdout, c.stderr)
	default:
		return nil
	}
}

// waitUntil polls ready until it reports true, the process exits, or startTimeout
// passes.
func (c *child) waitUntil(ctx context.Context, what string, ready func(ctx context.Context) bool) error {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		if ready(ctx) {
			return nil
		}
		if err := c.exited(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: not %s: %w\n%s%s", c.name, what, ctx.Err(), c.stdout, c.stderr)
		case <-tick.C:
		}
	}
}

// stop sends SIGTERM, and SIGKILL if the process has not exited after stopTimeout, and
// returns once it has exited. Stopping twice is harmless.
func (c *child) stop() error {
	select {
	case <-c.done:
		return nil
	default:
	}
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		c.cmd.Process.Kill()
	}
	select {
	case <-c.done:
		return nil
	case <-time.After(stopTimeout):
		c.cmd.Process.Kill()
		<-c.done
		return fmt.Errorf("%s: killed, still running %s after SIGTERM", c.name, stopTimeout)
	}
}

// cpu returns the CPU time the process has used so far, or 0 where /proc cannot tell.
func (c *child) cpu() time.Duration {
	d, err := processCPU(c.cmd.Process.Pid)
	if err != nil {
		return 0
	}
	return d
}

// freeAddr returns a loopback address with a port that was free a moment ago. Another
// process could take it before the server binds it; the server would then fail to start
// and say so, rather than measure something else.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// tail keeps the last tailSize bytes written to it: a server's output, for error messages.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

const tailSize = 16 << 10

func newTail() *tail { return &tail{} }

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - tailSize; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
