package main

import (
	"io"
	"strconv"
	"testing"
	"time"
)

func TestParseFlags(t *testing.T) {
	c, err := parseFlags([]string{"-d", "2s", "-only", " 6,2,6 ", "-out", "x.md"}, io.Discard)
	if err != nil || c.duration != 2*time.Second || len(c.only) != 2 || !c.only[2] || !c.only[6] || c.out != "x.md" {
		t.Errorf("got %+v, %v", c, err)
	}
	if c, err := parseFlags(nil, io.Discard); err != nil || len(c.only) != len(figures) {
		t.Errorf("no -only: %d figures, %v; want all %d", len(c.only), err, len(figures))
	}
	for _, bad := range [][]string{{"-d", "0s"}, {"extra"}, {"-only", strconv.Itoa(len(figures) + 1)}, {"-only", "0"}, {"-only", "two"}} {
		if _, err := parseFlags(bad, io.Discard); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestFormatting(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 999.6: "1,000", 1234567: "1,234,567", 15_000_000: "15.0M"} {
		if got := formatCount(v); got != want {
			t.Errorf("formatCount(%v) = %q, want %q", v, got, want)
		}
	}
	if got := cell("a|b\nc"); got != `a\|b c` {
		t.Errorf("cell: %q", got)
	}
}
