package main

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// --pid-file (SEQD_PID_FILE) holds this seqd's process id from before it says it
// listens until it stops, so that `kill -HUP "$(cat FILE)"` reaches this seqd only.
func TestPIDFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "seqd.pid")
	s := startSeqd(t, "--pid-file", path)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("seqd listens, and its pid file: %v", err)
	}
	if got, want := string(b), strconv.Itoa(os.Getpid())+"\n"; got != want {
		t.Errorf("pid file holds %q, want %q", got, want)
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("after the stop, the pid file: %v; want it removed", err)
	}

	c, err := parseConfig(nil, envOf("MONGODB_URI", "mongodb://127.0.0.1:1", "SEQD_PID_FILE", path), io.Discard)
	if err != nil || c.pidFile != path {
		t.Errorf("SEQD_PID_FILE=%s: pid file %q, %v", path, c.pidFile, err)
	}
}

// A pid file that names another running process is refused, so that two seqd
// never share one; one left by a process that is gone is replaced.
func TestPIDFileOfAnother(t *testing.T) {
	dir := t.TempDir()
	live := filepath.Join(dir, "live.pid")
	if err := os.WriteFile(live, []byte(strconv.Itoa(os.Getppid())+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := run(context.Background(), []string{"--addr", "127.0.0.1:0", "--pid-file", live},
		envOf("MONGODB_URI", "mongodb://127.0.0.1:1/?connectTimeoutMS=200"), io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "which is running") {
		t.Errorf("pid file naming running process %d: run returned %v, want a refusal", os.Getppid(), err)
	}
	if b, _ := os.ReadFile(live); string(b) != strconv.Itoa(os.Getppid())+"\n" {
		t.Errorf("the other process's pid file was changed to %q", b)
	}

	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Skipf("no true(1) to make a process that is gone: %v", err)
	}
	stale := filepath.Join(dir, "stale.pid")
	if err := os.WriteFile(stale, []byte(strconv.Itoa(gone.Process.Pid)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	startSeqd(t, "--pid-file", stale)
	if b, _ := os.ReadFile(stale); string(b) != strconv.Itoa(os.Getpid())+"\n" {
		t.Errorf("a pid file left by process %d that is gone holds %q, want this process's id", gone.Process.Pid, b)
	}
}
