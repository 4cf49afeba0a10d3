package stats

import (
	"fmt"
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
		{hundred, 0, time.Millisecond},
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
		if got := Percentile(tt.sorted, tt.p); got != tt.want {
			t.Errorf("p%v of %d latencies = %v, want %v", tt.p, len(tt.sorted), got, tt.want)
		}
	}
}

func ExamplePercentile() {
	ms := []float64{1.1, 1.2, 1.2, 1.3, 1.4, 1.4, 1.5, 1.9, 2.5, 9.8}
	fmt.Println(Percentile(ms, 50), Percentile(ms, 90), Percentile(ms, 99))
	// Output: 1.4 2.5 9.8
}
