//go:build linux

package main

import (
	"os"
	"testing"
	"time"
)

func TestParseProcStatCPU(t *testing.T) {
	// Field 2 may hold spaces and parentheses; utime 250 and stime 50 ticks are fields 14 and 15.
	stat := "1234 (my (odd) cmd) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 8 0 100 0 0"
	got, err := parseProcStatCPU(stat)
	if err != nil || got != 3*time.Second {
		t.Errorf("got %v, %v; want 3s", got, err)
	}
	if _, err := parseProcStatCPU("1234 (x) S 1 2"); err == nil {
		t.Error("short line: no error")
	}
	if self, err := processCPU(os.Getpid()); err != nil || self < 0 {
		t.Errorf("own process: %v, %v", self, err)
	}
}

func TestParseProcStatBusy(t *testing.T) {
	// user nice system idle iowait irq softirq steal guest guest_nice
	stat := "cpu  100 10 50 1000 40 5 5 30 7 0\ncpu0 1 2 3 4 5 6 7 8 9 10\n"
	got, err := parseProcStatBusy(stat)
	if err != nil || got != 2*time.Second { // 100+10+50+5+5+30 = 200 ticks
		t.Errorf("got %v, %v; want 2s", got, err)
	}
	if _, err := parseProcStatBusy("intr 1 2 3\n"); err == nil {
		t.Error("no cpu line: no error")
	}
}
