package httpapi

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"

	"github.com/seqd/seqd/counters"
)

// TestAppendNextIsEncodingJSON: the hand-written answer of /seq/{name}/next is, byte
// for byte, what c.JSON wrote before it.
func TestAppendNextIsEncodingJSON(t *testing.T) {
	type nextResponse struct {
		Name     string `json:"name"`
		Value    int64  `json:"value"`
		First    int64  `json:"first"`
		Count    int64  `json:"count"`
		Strategy string `json:"strategy"`
		// A numbered sequence's
		Period         string `json:"period,omitempty"`
		Formatted      string `json:"formatted,omitempty"`
		FormattedFirst string `json:"formatted_first,omitempty"`
	}
	for _, tc := range []struct {
		name     string
		r        counters.Numbered
		strategy string
	}{
		{"a", counters.Numbered{Range: counters.Range{First: 1, Last: 1}}, counters.StrategyCounter},
		{"orders.2026-11_eu", counters.Numbered{Range: counters.Range{First: 1005, Last: 1006}}, counters.StrategyOptimistic},
		{"Z9", counters.Numbered{Range: counters.Range{First: math.MaxInt64 - 999_999, Last: math.MaxInt64}}, counters.StrategyCounter},
		{"inv", counters.Numbered{Range: counters.Range{First: 41, Last: 42}, Period: "2026-11-26T17:05",
			Formatted: `INV "<&>" \ ü-42`, FormattedFirst: "INV {41}"}, counters.StrategyCounter},
		{"inv", counters.Numbered{Range: counters.Range{First: 42, Last: 42}, Period: "2026", Formatted: "2026/42"}, counters.StrategyCounter},
	} {
		var want bytes.Buffer
		if err := json.NewEncoder(&want).Encode(nextResponse{tc.name, tc.r.Last, tc.r.First, tc.r.Count(), tc.strategy,
			tc.r.Period, tc.r.Formatted, tc.r.FormattedFirst}); err != nil {
			t.Fatal(err)
		}
		if got := appendNext(nil, tc.name, tc.r, tc.strategy, false); !bytes.Equal(got, want.Bytes()) {
			t.Errorf("appendNext = %s, want %s", got, want.Bytes())
		}
	}
}
