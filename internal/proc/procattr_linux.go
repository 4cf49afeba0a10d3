//go:build linux

package proc

import (
	"os/exec"
	"syscall"
)

// sysProcAttr puts a child in its own process group and has the kernel kill it if its
// parent dies first.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// interruptGroup sends SIGINT to cmd's process group: go test's test binary too, or
// seqload, which then stops its load and still prints its summary.
func interruptGroup(cmd *exec.Cmd) error {
	return syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
}
