//go:build !linux

package proc

import (
	"os"
	"os/exec"
	"syscall"
)

// sysProcAttr adds nothing: only Linux kills children whose parent died, and a
// terminal's Ctrl-C reaches them too, which stops them as well.
func sysProcAttr() *syscall.SysProcAttr { return nil }

func interruptGroup(cmd *exec.Cmd) error { return cmd.Process.Signal(os.Interrupt) }
