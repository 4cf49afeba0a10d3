package httpapi

import (
	"encoding/json"
	"math"
	"testing"
)

// TestAppendNextResponse checks the hand-written encoding against encoding/json.
func TestAppendNextResponse(t *testing.T) {
	for _, r := range []nextResponse{
		{Name: "orders", Value: 1, First: 1, Count: 1, Strategy: "counter"},
		{Name: "a.b-c_9", Value: math.MaxInt64, First: math.MaxInt64 - 999, Count: 1000, Strategy: "optimistic"},
		{Name: "0", Value: 0, First: 0, Count: 0, Strategy: "counter"},
	} {
		want, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(appendNextResponse(nil, r)); got != string(want)+"\n" {
			t.Errorf("got %s, want %s", got, want)
		}
	}
}
