//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// sysProcAttr puts a child in its own process group, so that a terminal's Ctrl-C
// reaches seqbench alone, and has the kernel kill it if seqbench dies first, so that no
// server outlives a killed benchmark.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// interruptGroup sends SIGINT to cmd's process group: go test's test binary, or seqload,
// which then stops its load and still prints its summary.
func interruptGroup(cmd *exec.Cmd) error {
	return syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
}

// clockTicks is USER_HZ, the unit of /proc/PID/stat's times: 100 on every Linux
// architecture Go supports.
const clockTicks = 100

// processCPU returns the user plus system CPU time of a running process.
func processCPU(pid int) (time.Duration, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseProcStatCPU(string(stat))
}

// parseProcStatCPU reads utime and stime, fields 14 and 15 of /proc/PID/stat. The
// command name (field 2) is in parentheses and may hold spaces, so fields are counted
// from the last ')'.
func parseProcStatCPU(stat string) (time.Duration, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc stat: no command name")
	}
	fields := strings.Fields(stat[i+1:]) // fields[0] is field 3, the state
	if len(fields) < 13 {
		return 0, fmt.Errorf("/proc stat: %d fields", len(fields)+2)
	}
	var ticks int64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc stat: %w", err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}

// machineBusyCPU returns the CPU time all processes have used since boot, from the
// first line of /proc/stat: every state but idle and iowait.
func machineBusyCPU() (time.Duration, error) {
	stat, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	return parseProcStatBusy(string(stat))
}

// parseProcStatBusy reads the "cpu" line: user nice system idle iowait irq softirq
// steal …; guest time is part of user already.
func parseProcStatBusy(stat string) (time.Duration, error) {
	line, _, _ := strings.Cut(stat, "\n")
	fields := strings.Fields(line)
	if len(fields) < 9 || fields[0] != "cpu" {
		return 0, fmt.Errorf("/proc/stat: unexpected first line %q", line)
	}
	var ticks int64
	for i, f := range fields[1:9] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/stat: %w", err)
		}
		if i != 3 && i != 4 { // idle, iowait
			ticks += n
		}
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}
