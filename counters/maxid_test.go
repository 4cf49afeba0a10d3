package counters

import (
	"math"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestWholePart: the largest _id Optimistic continues from, for every numeric
// type MongoDB stores, rounded down; what no int64 can continue from is refused.
func TestWholePart(t *testing.T) {
	dec := func(s string) bson.RawValue {
		d, err := bson.ParseDecimal128(s)
		if err != nil {
			t.Fatal(err)
		}
		_, b, _ := bson.MarshalValue(d)
		return bson.RawValue{Type: bson.TypeDecimal128, Value: b}
	}
	val := func(v any) bson.RawValue {
		typ, b, err := bson.MarshalValue(v)
		if err != nil {
			t.Fatal(err)
		}
		return bson.RawValue{Type: typ, Value: b}
	}
	for _, tc := range []struct {
		name string
		v    bson.RawValue
		want int64
		ok   bool
	}{
		{"int", val(int32(7)), 7, true},
		{"long", val(int64(math.MaxInt64)), math.MaxInt64, true},
		{"double 7.5", val(7.5), 7, true},
		{"double 2^63", val(math.Ldexp(1, 63)), 0, false},
		{"double +Inf", val(math.Inf(1)), 0, false},
		{"decimal 7", dec("7"), 7, true},
		{"decimal 7.00", dec("7.00"), 7, true},
		{"decimal 7.999", dec("7.999"), 7, true},
		{"decimal 0.5", dec("0.5"), 0, true},
		{"decimal -0", dec("-0"), 0, true},
		{"decimal 1E+3", dec("1E+3"), 1000, true},
		{"decimal MaxInt64", dec("9223372036854775807"), math.MaxInt64, true},
		{"decimal MaxInt64.9", dec("9223372036854775807.9"), math.MaxInt64, true},
		{"decimal MaxInt64+1", dec("9223372036854775808"), 0, false},
		{"decimal 1E+19", dec("1E+19"), 0, false},
		{"decimal 0E+6000", dec("0E+6000"), 0, true},
		{"decimal 5E-6000", dec("5E-6000"), 0, true},
		{"decimal Infinity", dec("Infinity"), 0, false},
		{"decimal NaN", dec("NaN"), 0, false},
		{"string", val("7"), 0, false},
	} {
		got, ok := wholePart(tc.v)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: %d, %v; want %d, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

// TestValueTextDecimal: a decimal in an error reads as a person writes it.
func TestValueTextDecimal(t *testing.T) {
	d, _ := bson.ParseDecimal128("1E+30")
	_, b, _ := bson.MarshalValue(d)
	if got := valueText(bson.RawValue{Type: bson.TypeDecimal128, Value: b}); got != "1E+30" {
		t.Errorf("valueText(decimal 1E+30) = %q", got)
	}
}
