//go:build integration && linux

package proc

import "syscall"

// sysProcAttr makes the kernel kill the server if the test process dies first, for
// example on a test timeout, so that no server outlives its test run.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
