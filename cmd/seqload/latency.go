package main

import (
	"math"
	"time"
)

// Latencies are kept exactly: every successful request's latency, 8 bytes each, sorted
// once at the end. A histogram would bound memory but round p99 to a bucket edge, and a
// run that holds 12 bytes per ObjectId can afford 8 bytes per request.

// percentile returns the nearest-rank p-th percentile (0 < p ≤ 100) of ascending
// latencies: the smallest one that at least p% of them do not exceed.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p * float64(len(sorted)) / 100))
	return sorted[min(max(rank, 1), len(sorted))-1]
}
