package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"runtime"
	"strings"
)

// machine is what the figures were measured on.
type machine struct {
	cpus      int
	cpuModel  string
	goVersion string
	os        string // GOOS/GOARCH and, on Linux, the kernel release
}

func describeMachine(ctx context.Context) machine {
	m := machine{cpus: runtime.NumCPU(), cpuModel: "unknown", goVersion: "unknown", os: runtime.GOOS + "/" + runtime.GOARCH}
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		if model := cpuModel(string(data)); model != "" {
			m.cpuModel = model
		}
	}
	if rel, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.os += ", kernel " + strings.TrimSpace(string(rel))
	}
	if out, err := exec.CommandContext(ctx, "go", "version").Output(); err == nil {
		m.goVersion = strings.TrimSpace(string(out))
	}
	return m
}

// cpuModel returns the first "model name" of /proc/cpuinfo, or "".
func cpuModel(cpuinfo string) string {
	sc := bufio.NewScanner(strings.NewReader(cpuinfo))
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(key) == "model name" {
			return strings.TrimSpace(value)
		}
	}
	return ""
}
