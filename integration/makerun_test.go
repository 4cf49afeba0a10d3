//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seqd/seqd/internal/proc"
)

// TestMakeRunStopsInOrder stops `make run` as a user does, Ctrl-C to the
// terminal's process group, while seqd holds a cached block, and starts it again:
// the next value must be the last one handed out + 1. seqd gives its unused block
// back at a clean stop, which needs the store still up: the store must stop after
// seqd, not with it, and make run says when it has. While it runs, seqd's process
// id is in DATA/seqd.pid, for `kill -HUP "$(cat data/seqd.pid)"`, and that
// reaches seqd; the file is gone once it stops.
func TestMakeRunStopsInOrder(t *testing.T) {
	dataDir := t.TempDir()
	p, _ := makeRun(t, dataDir, "SEQD_ADMIN_TOKEN="+adminToken)
	pidFile := filepath.Join(dataDir, "seqd.pid")
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("make run serves, and seqd's pid file: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); err != nil || strings.TrimSpace(string(comm)) != "seqd" {
		t.Fatalf("%s holds %q, the id of %q; want seqd's", pidFile, b, comm)
	}
	if err := syscall.Kill(pid, syscall.SIGHUP); err != nil {
		t.Fatalf("SIGHUP to the pid in %s: %v", pidFile, err)
	}
	waitForOutput(t, p, `"msg":"SIGHUP: `)
	base := "http://" + p.Addr()
	do(t, base, call{method: "PUT", path: "/seq/makerun", token: adminToken, body: `{"mode":"cached","min_block":1000,"max_block":1000}`}).want(t, 200, nil)
	var last nextReply
	for range 3 {
		do(t, base, call{method: "POST", path: "/seq/makerun/next"}).want(t, 200, &last)
	}
	var stored seqReply
	do(t, base, call{path: "/seq/makerun"}).want(t, 200, &stored)
	if stored.Value <= last.Value {
		t.Fatalf("the store holds %d after %d was handed out: no block is cached", stored.Value, last.Value)
	}
	interrupt(t, p)
	if !strings.Contains(p.Output(), "make run: the development store stopped; its data stays in "+dataDir) {
		t.Errorf("after Ctrl-C, make run did not say the store stopped:\n%s", p.Output())
	}
	if _, err := os.Stat(pidFile); !os.IsNotExist(err) {
		t.Errorf("after Ctrl-C, seqd's pid file: %v; want it removed", err)
	}

	p, _ = makeRun(t, dataDir, "SEQD_ADMIN_TOKEN="+adminToken)
	var next nextReply
	do(t, "http://"+p.Addr(), call{method: "POST", path: "/seq/makerun/next"}).want(t, 200, &next)
	if next.Value != last.Value+1 {
		t.Errorf("after Ctrl-C and make run again, next is %d; the last handed out was %d (the block reserved up to %d): seqd did not give it back\nmake run's output:\n%s",
			next.Value, last.Value, stored.Value, p.Output())
	}
}

// interrupt sends SIGINT to p's process group, as Ctrl-C in a terminal does, and
// waits for make to exit: it exits once seqd and the store have.
func interrupt(t *testing.T, p *proc.Process) {
	t.Helper()
	select {
	case <-p.Done():
		return
	default:
	}
	if err := syscall.Kill(-p.Pid(), syscall.SIGINT); err != nil {
		t.Fatalf("SIGINT to make run's process group: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := p.Wait(ctx); err != nil && ctx.Err() != nil {
		p.Kill()
		t.Fatalf("make run did not exit within a minute of SIGINT:\n%s", p.Output())
	}
}

// waitForOutput waits until p's output holds s.
func waitForOutput(t *testing.T, p *proc.Process, s string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(p.Output(), s) {
		if time.Now().After(deadline) {
			t.Fatalf("make run did not print %q within 30 s:\n%s", s, p.Output())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// seqdListeningLine finds seqd's {"msg":"listening","addr":…} among make run's lines.
func seqdListeningLine(line []byte) (string, bool) {
	var entry struct{ Msg, Addr string }
	if json.Unmarshal(line, &entry) != nil || entry.Msg != "listening" || entry.Addr == "" {
		return "", false
	}
	return entry.Addr, true
}

// freeAddr is an address on the loopback that nothing listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// withoutEnv is env without the variables named, or starting with, any of prefixes.
func withoutEnv(env []string, prefixes ...string) []string {
	var out []string
next:
	for _, kv := range env {
		for _, p := range prefixes {
			if strings.HasPrefix(kv, p) {
				continue next
			}
		}
		out = append(out, kv)
	}
	return out
}
