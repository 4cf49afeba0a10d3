package main

import (
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = time.Duration(i+1) * time.Millisecond
	}
	tests := []struct {
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{hundred, 50, 50 * time.Millisecond},
		{hundred, 90, 90 * time.Millisecond},
		{hundred, 99, 99 * time.Millisecond},
		{hundred, 99.9, 100 * time.Millisecond},
		{hundred, 100, 100 * time.Millisecond},
		{hundred[:10], 99, 10 * time.Millisecond},
		{hundred[:10], 50, 5 * time.Millisecond},
		{hundred[:3], 50, 2 * time.Millisecond},
		{hundred[:1], 50, time.Millisecond},
		{nil, 99, 0},
	}
	for _, tt := range tests {
		if got := percentile(tt.sorted, tt.p); got != tt.want {
			t.Errorf("p%v of %d latencies = %v, want %v", tt.p, len(tt.sorted), got, tt.want)
		}
	}
}
