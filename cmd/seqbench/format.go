package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func formatMs(ms float64) string {
	if ms < 1 {
		return fmt.Sprintf("%.0f µs", ms*1000)
	}
	return fmt.Sprintf("%.2f ms", ms)
}

// formatCount writes a rate or a count with thousands separators, or as millions.
func formatCount(v float64) string {
	if v >= 10_000_000 {
		return fmt.Sprintf("%.1fM", v/1e6)
	}
	s := strconv.FormatInt(int64(v+0.5), 10)
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func yesNo(ok bool) string {
	if ok {
		return "yes"
	}
	return "no"
}

// yesNoBy says whether got reaches want, and by how much it falls short when it does not.
func yesNoBy(got, want float64) string {
	if got >= want {
		return "yes"
	}
	return fmt.Sprintf("no (%.0f%% of target)", 100*got/want)
}

// shellJoin writes args as a shell would need them, quoting what needs quoting.
func shellJoin(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$*?[]{}()<>|&;^#~") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}

// formatRatio writes r with two decimals, or with three where two would round it onto
// the other side of a target, r ≥ target if atLeast, else r ≤ target.
func formatRatio(r, target float64, atLeast bool) string {
	two := math.Round(r*100) / 100
	if atLeast && (two >= target) != (r >= target) || !atLeast && (two <= target) != (r <= target) {
		return fmt.Sprintf("%.3f×", r)
	}
	return fmt.Sprintf("%.2f×", r)
}
