package history

import (
	"bytes"
	"strings"
	"testing"
)

func TestRangesRoundTrip(t *testing.T) {
	ops := []Op{
		op("a", 0, 1, 11, 20), op("a", 2, 3, 1, 5), op("a", 4, 5, 6, 10), // 1..20, received out of order
		op("a", 6, 7, 30, 30), op("a", 8, 9, 30, 31), // 30 twice: kept apart
		op("a", 10, 11, 9, 8), // invalid: left out
	}
	var buf bytes.Buffer
	if err := WriteRanges(&buf, len(ops), func(i int) Op { return ops[i] }); err != nil {
		t.Fatal(err)
	}
	if got, want := buf.String(), "1 20\n30 30\n30 31\n"; got != want {
		t.Fatalf("written %q, want %q", got, want)
	}
	mine, err := ReadRanges(&buf, "p1")
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := ReadRanges(strings.NewReader("21 29\n31 40\n"), "p2")
	if err != nil {
		t.Fatal(err)
	}
	// Ranges carry no times: together they show the duplicates, never an order violation.
	r := Check(append(mine, theirs...), Options{Contiguous: true})
	if r.Duplicates != 2 || r.OrderViolations != 0 || r.Gaps != 0 || r.Min != 1 || r.Max != 40 {
		t.Errorf("check of the ranges read: %v", r)
	}
	if mine[0].Client != "p1" || theirs[0].Client != "p2" {
		t.Errorf("clients %q, %q", mine[0].Client, theirs[0].Client)
	}
}

func TestReadRangesRejects(t *testing.T) {
	for _, in := range []string{"1\n", "5 4\n", "1 2 3\n", "a b\n", "1 2\n\n"} {
		if _, err := ReadRanges(strings.NewReader(in), "p"); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}
