// Package stats is the arithmetic that seqload, seqbench and the integration tests
// report latencies with, written once so that their figures mean the same.
package stats

import (
	"cmp"
	"math"
)

// Percentile returns the nearest-rank p-th percentile (0 ≤ p ≤ 100) of ascending
// values: the smallest one that at least p% of them do not exceed. p = 0 is the
// smallest value, p = 100 the largest; no values give the zero value.
//
// Nearest rank always returns a value that was measured, never an interpolation, so a
// p99 of latencies is a latency some request had.
func Percentile[T cmp.Ordered](sorted []T, p float64) T {
	if len(sorted) == 0 {
		var zero T
		return zero
	}
	rank := int(math.Ceil(p * float64(len(sorted)) / 100))
	return sorted[min(max(rank, 1), len(sorted))-1]
}
