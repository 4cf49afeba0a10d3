package counters

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/seqd/seqd"
)

// SetMode refuses a mode or bounds it cannot store before any round trip, with
// ErrInvalidMode and a message that says what is wrong.
func TestSetModeInvalid(t *testing.T) {
	ctx := context.Background()
	c := NewCounter(offline(t), Options{})
	for _, tc := range []struct {
		mode     seqd.Mode
		min, max int64
		says     string
	}{
		{"", 0, 0, `"", want "strict" or "cached"`},
		{"Cached", 0, 0, `"Cached", want "strict" or "cached"`},
		{"weird", 10, 20, `"weird"`},
		{seqd.ModeCached, 0, 10, "block bounds 0 and 10"},
		{seqd.ModeCached, 10, 0, "block bounds 10 and 0"},
		{seqd.ModeCached, 20, 10, "1 ≤ min ≤ max ≤ 1000000"},
		{seqd.ModeCached, -1, 10, "block bounds -1 and 10"},
		{seqd.ModeCached, 1, seqd.MaxCount + 1, "block bounds 1 and 1000001"},
		{seqd.ModeStrict, 5, 4, "block bounds 5 and 4"},
	} {
		err := c.SetMode(ctx, "orders", tc.mode, tc.min, tc.max)
		if !errors.Is(err, ErrInvalidMode) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("SetMode(%q, %d, %d) = %v; want ErrInvalidMode saying %s", tc.mode, tc.min, tc.max, err, tc.says)
		}
		if errors.Is(err, ErrUnavailable) {
			t.Errorf("SetMode(%q, %d, %d) made a round trip: %v", tc.mode, tc.min, tc.max, err)
		}
	}
	expectErr(t, "SetMode of a bad name", c.SetMode(ctx, "a b", seqd.ModeCached, 0, 0), ErrInvalidName)
	for _, tc := range []struct{ min, max int64 }{{0, 0}, {1, 1}, {1, seqd.MaxCount}, {seqd.MaxCount, seqd.MaxCount}} {
		if err := seqd.CheckMode(seqd.ModeCached, tc.min, tc.max); err != nil {
			t.Errorf("CheckMode(cached, %d, %d) = %v, want nil", tc.min, tc.max, err)
		}
	}
}

func TestParseCounter(t *testing.T) {
	doc := func(d bson.D) bson.Raw {
		raw, err := bson.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	id := bson.E{Key: "_id", Value: "s"}
	seq := bson.E{Key: "seq", Value: int64(7)}

	for _, tc := range []struct {
		name string
		doc  bson.D
		want counterState
	}{
		{"no mode is strict", bson.D{id, seq}, counterState{seq: 7, mode: seqd.ModeStrict}},
		{"strict", bson.D{id, seq, {Key: "mode", Value: "strict"}}, counterState{seq: 7, mode: seqd.ModeStrict}},
		{"cached with everything", bson.D{id, {Key: "seq", Value: int32(7)}, {Key: "mode", Value: "cached"},
			{Key: "minBlock", Value: int32(10)}, {Key: "maxBlock", Value: int64(100)},
			{Key: "reserved", Value: int64(300)}, {Key: "served", Value: int32(120)}, {Key: "returned", Value: int64(80)}},
			counterState{seq: 7, mode: seqd.ModeCached, minBlock: 10, maxBlock: 100,
				blocks: seqd.BlockCounts{Reserved: 300, Served: 120, Returned: 80}}},
		{"zero bounds", bson.D{id, seq, {Key: "mode", Value: "cached"}, {Key: "minBlock", Value: 0}, {Key: "maxBlock", Value: 0}},
			counterState{seq: 7, mode: seqd.ModeCached}},
	} {
		got, err := parseCounter("s", doc(tc.doc))
		if err != nil || got != tc.want {
			t.Errorf("%s: parseCounter = %+v, %v; want %+v", tc.name, got, err, tc.want)
		}
	}

	for _, tc := range []struct {
		name string
		doc  bson.D
		says string
	}{
		{"bad seq", bson.D{id, {Key: "seq", Value: 1.5}, {Key: "mode", Value: "cached"}}, `the seq of "s" is a double 1.5`},
		{"unknown mode", bson.D{id, seq, {Key: "mode", Value: "weird"}}, `the mode of "s" is a string "weird", want "strict", "cached" or "draining"`},
		{"mode not a string", bson.D{id, seq, {Key: "mode", Value: 1}}, `the mode of "s" is an int 1`},
		{"null mode", bson.D{id, seq, {Key: "mode", Value: nil}}, `the mode of "s" is of BSON type null`},
		{"bound a double", bson.D{id, seq, {Key: "minBlock", Value: 10.0}, {Key: "maxBlock", Value: 20}}, `the minBlock of "s" is a double 10`},
		{"bound too large", bson.D{id, seq, {Key: "minBlock", Value: 1}, {Key: "maxBlock", Value: int64(seqd.MaxCount + 1)}}, `the maxBlock of "s" is a long 1000001`},
		{"negative bound", bson.D{id, seq, {Key: "minBlock", Value: -1}, {Key: "maxBlock", Value: 20}}, `the minBlock of "s" is an int -1`},
		{"min above max", bson.D{id, seq, {Key: "minBlock", Value: 30}, {Key: "maxBlock", Value: 20}}, `the block bounds of "s" are 30 and 20`},
		{"mode an array", bson.D{id, seq, {Key: "mode", Value: bson.A{"cached"}}}, `the mode of "s" is of BSON type array`},
		{"count a string", bson.D{id, seq, {Key: "served", Value: "x"}}, `the served of "s" is a string "x", want an integer`},
		{"count a double", bson.D{id, seq, {Key: "returned", Value: 2.5}}, `the returned of "s" is a double 2.5`},
		{"one bound only", bson.D{id, seq, {Key: "minBlock", Value: 30}}, `the block bounds of "s" are 30 and 0`},
	} {
		_, err := parseCounter("s", doc(tc.doc))
		if !errors.Is(err, ErrInvalidCounter) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: parseCounter = %v; want ErrInvalidCounter saying %s", tc.name, err, tc.says)
		}
	}
}

func TestTail(t *testing.T) {
	r := func(first, last int64) seqd.Range { return seqd.Range{First: first, Last: last} }
	for _, tc := range []struct {
		name    string
		held    []seqd.Range
		highest int64
		want    seqd.Range
		ok      bool
	}{
		{"nothing held", nil, 100, seqd.Range{}, false},
		{"nothing reserved", []seqd.Range{r(1, 10)}, 0, seqd.Range{}, false},
		{"the current block's rest", []seqd.Range{r(51, 100)}, 100, r(51, 100), true},
		{"current and next, contiguous", []seqd.Range{r(51, 100), r(101, 200)}, 200, r(51, 200), true},
		{"current and next, apart", []seqd.Range{r(51, 100), r(301, 400)}, 400, r(301, 400), true},
		{"held below the highest", []seqd.Range{r(51, 100)}, 200, seqd.Range{}, false},
		{"the last value", []seqd.Range{r(math.MaxInt64, math.MaxInt64)}, math.MaxInt64, r(math.MaxInt64, math.MaxInt64), true},
	} {
		got, ok := tail(tc.held, tc.highest)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: tail = %v, %v; want %v, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

// A Counter that never served from blocks closes at once, and then still serves
// in strict mode (here: fails to reach the offline server, rather than refusing).
func TestCloseWithoutBlocks(t *testing.T) {
	c := NewCounter(offline(t), Options{})
	if err := c.Close(context.Background()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, ok := c.BlockStatus("orders"); ok {
		t.Error("BlockStatus after Close reports blocks")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := c.Next(ctx, "orders"); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Next after Close: %v, want ErrUnavailable from the strict path", err)
	}
}
