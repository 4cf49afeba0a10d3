package seqd_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/seqd/seqd"
)

func TestCheckMode(t *testing.T) {
	for _, tc := range []struct {
		mode     seqd.Mode
		min, max int64
		ok       bool
	}{
		{seqd.ModeStrict, 0, 0, true},
		{seqd.ModeCached, 0, 0, true},
		{seqd.ModeCached, 1, 1, true},
		{seqd.ModeCached, 1, seqd.MaxCount, true},
		{seqd.ModeStrict, 10, 20, true},
		{"", 0, 0, false},
		{"Cached", 0, 0, false},
		{seqd.ModeCached, 0, 10, false},
		{seqd.ModeCached, 10, 0, false},
		{seqd.ModeCached, 20, 10, false},
		{seqd.ModeCached, -1, 10, false},
		{seqd.ModeCached, 1, seqd.MaxCount + 1, false},
	} {
		err := seqd.CheckMode(tc.mode, tc.min, tc.max)
		if tc.ok != (err == nil) || err != nil && !errors.Is(err, seqd.ErrInvalidMode) {
			t.Errorf("CheckMode(%q, %d, %d) = %v, want ok %v", tc.mode, tc.min, tc.max, err, tc.ok)
		}
	}
	long := seqd.Mode(strings.Repeat("m", 1000))
	if err := seqd.CheckMode(long, 0, 0); err == nil || len(err.Error()) > 200 {
		t.Errorf("CheckMode of a 1000-byte mode = %v, want a short error", err)
	}
}

func TestValidName(t *testing.T) {
	for name, want := range map[string]bool{
		"a": true, "orders.2026-11_eu": true, "0": true, strings.Repeat("x", 64): true,
		"": false, "-x": false, ".x": false, "_x": false, "a b": false, "é": false,
		"a\x00": false, "a$b": false, "a/b": false, strings.Repeat("x", 65): false,
	} {
		if got := seqd.ValidName(name); got != want {
			t.Errorf("ValidName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestCounts(t *testing.T) {
	if got := (seqd.Range{First: 5, Last: 9}).Count(); got != 5 {
		t.Errorf("Count of 5..9 = %d, want 5", got)
	}
	b := seqd.BlockCounts{Reserved: 100, Served: 60, Returned: 30}
	if got := b.Unaccounted(); got != 10 {
		t.Errorf("Unaccounted = %d, want 10", got)
	}
}

func BenchmarkValidName(b *testing.B) {
	for b.Loop() {
		seqd.ValidName("orders.2026-11_eu")
	}
}
