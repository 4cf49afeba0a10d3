//go:build !linux

package main

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// sysProcAttr adds nothing: only Linux kills children whose parent died, and a terminal's
// Ctrl-C reaches them too, which stops them as well.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }

func interruptGroup(cmd *exec.Cmd) error { return cmd.Process.Signal(os.Interrupt) }

func processCPU(int) (time.Duration, error) {
	return 0, errors.New("process CPU time needs /proc")
}

func machineBusyCPU() (time.Duration, error) {
	return 0, errors.New("machine CPU time needs /proc")
}
