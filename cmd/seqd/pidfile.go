package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// writePIDFile writes this process's id to path, so that an operator signals this
// seqd and no other (`kill -HUP "$(cat data/seqd.pid)"`, where `pidof seqd` names
// every seqd on the host), and returns what removes it at stop. It is written
// elsewhere and renamed into place, so that a reader never sees half of it. A file
// that names another process still running is refused, not taken over: two seqd
// sharing one file would send a reload to the wrong one. One left by a seqd that
// was killed is replaced.
func writePIDFile(path string) (remove func(), err error) {
	if pid, ok := readPID(path); ok && pid != os.Getpid() && running(pid) {
		return nil, fmt.Errorf("pid-file %s names process %d, which is running: another seqd uses the file; stop it, or remove the file if that process is not seqd", path, pid)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return nil, fmt.Errorf("pid-file: %w", err)
	}
	_, err = fmt.Fprintf(tmp, "%d\n", os.Getpid())
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return nil, fmt.Errorf("pid-file: %w", err)
	}
	return func() {
		// Only the file this process wrote: never one another seqd wrote since.
		if pid, ok := readPID(path); ok && pid == os.Getpid() {
			os.Remove(path)
		}
	}, nil
}

// readPID reads the process id a pid file holds.
func readPID(path string) (int, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid, err == nil && pid > 0
}

// running reports whether a process pid exists (signal 0 checks without sending;
// EPERM: it exists, as another user's).
func running(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
