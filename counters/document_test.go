package counters

import (
	"bytes"
	"math"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/seqd/seqd"
)

// TestCounterFilterEncoding: counterFilter's bytes, partly encoded once, are
// exactly those of the filter written out as a bson.D and marshalled.
func TestCounterFilterEncoding(t *testing.T) {
	written := func(name string, max int64, more ...bson.D) bson.D {
		and := bson.A{
			bson.D{{Key: fieldSeq, Value: bson.D{
				{Key: "$type", Value: bson.A{"int", "long"}},
				{Key: "$gte", Value: int64(0)},
				{Key: "$lte", Value: max},
				notArray,
			}}},
			absentOr(fieldMode, bson.D{{Key: "$in", Value: bson.A{string(seqd.ModeStrict), string(seqd.ModeCached), modeDraining}}, notArray}),
			absentOr(fieldMinBlock, boundCondition),
			absentOr(fieldMaxBlock, boundCondition),
			absentOr(fieldReserved, countCondition),
			absentOr(fieldServed, countCondition),
			absentOr(fieldReturned, countCondition),
			absentOr(fieldGen, countCondition),
			absentOr(fieldLeaseMs, countCondition),
			absentOr(fieldFloor, countCondition),
			absentOr(fieldForced, countCondition),
			absentOr(fieldStrictFrom, bson.D{{Key: "$type", Value: "date"}}),
			absentOr(fieldPeriod, bson.D{{Key: "$type", Value: "string"}, notArray}),
			absentOr(fieldZone, bson.D{{Key: "$type", Value: "string"}, notArray}),
			absentOr(fieldFormat, bson.D{{Key: "$type", Value: "string"}, notArray}),
			absentOr(fieldPeriodStart, countCondition),
			absentOr(fieldNext, countCondition),
			absentOr(fieldPast, bson.D{{Key: "$type", Value: "object"}, notArray}),
		}
		for _, m := range more {
			and = append(and, m)
		}
		return bson.D{{Key: "_id", Value: name}, {Key: "$and", Value: and}}
	}
	for _, tc := range []struct {
		name string
		max  int64
		more []bson.D
	}{
		{"a", math.MaxInt64, nil},
		{"orders.eu-1", math.MaxInt64 - 7, []bson.D{notDraining}},
		{"x", 5, []bson.D{{{Key: fieldSeq, Value: int64(5)}}, equalOrAbsent(fieldGen, 3)}},
	} {
		want, err := bson.Marshal(written(tc.name, tc.max, tc.more...))
		if err != nil {
			t.Fatal(err)
		}
		if got := counterFilter(tc.name, tc.max, tc.more...); !bytes.Equal(got, want) {
			t.Errorf("counterFilter(%q, %d, %v) =\n%v\nwant\n%v", tc.name, tc.max, tc.more, got, bson.Raw(want))
		}
	}
}

// BenchmarkCounterFilter is the cost of a strict write's filter, encoded: the
// Raw that counterFilter returns is sent as it is.
func BenchmarkCounterFilter(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		sinkFilter = counterFilter("orders", math.MaxInt64-1, notDraining, plain(nil)) // as reserve's
	}
}

var sinkFilter bson.Raw
