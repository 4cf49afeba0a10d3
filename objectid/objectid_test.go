package objectid_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seqd/seqd/objectid"
)

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	tm, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

// TestGoldenVectors decodes ids made by other generators.
func TestGoldenVectors(t *testing.T) {
	for _, tc := range []struct {
		hex       string
		timestamp uint32
		time      string
	}{
		{"47cc67093475061e3d95369d", 1204578057, "2008-03-03T21:00:57Z"},
		{"5a17b9d9ab102555b9c38874", 1511504345, "2017-11-24T06:19:05Z"},
		{"53102b43bf1044ed8b0ba36b", 1393568579, "2014-02-28T06:22:59Z"},
		{"50c758800000000000000000", 1355241600, "2012-12-11T16:00:00Z"},
	} {
		id := objectid.MustParse(tc.hex)
		if got := id.Timestamp(); got != tc.timestamp {
			t.Errorf("%s: Timestamp() = %d, want %d", tc.hex, got, tc.timestamp)
		}
		want := mustTime(t, tc.time)
		if got := id.Time(); !got.Equal(want) || got.Location() != time.UTC {
			t.Errorf("%s: Time() = %v, want %v in UTC", tc.hex, got, want)
		}
		if got := id.Hex(); got != tc.hex {
			t.Errorf("%s: Hex() = %s", tc.hex, got)
		}
	}
}

func TestFields(t *testing.T) {
	// An mgo id: timestamp, machine 347506, pid 0x1e3d, counter 0x95369d.
	id := objectid.MustParse("47cc67093475061e3d95369d")
	if got, want := id.Process(), [5]byte{0x34, 0x75, 0x06, 0x1e, 0x3d}; got != want {
		t.Errorf("Process() = %x, want %x", got, want)
	}
	if got, want := id.Machine(), [3]byte{0x34, 0x75, 0x06}; got != want {
		t.Errorf("Machine() = %x, want %x", got, want)
	}
	if got := id.Pid(); got != 0x1e3d {
		t.Errorf("Pid() = %#x, want 0x1e3d", got)
	}
	if got := id.Counter(); got != 0x95369d {
		t.Errorf("Counter() = %#x, want 0x95369d", got)
	}
}

// TestTimeBoundaries checks the timestamp is read unsigned, up to 2106, and
// that Min and Max bracket every id of a second.
func TestTimeBoundaries(t *testing.T) {
	for _, tc := range []struct {
		ts   uint32
		time string
		hex  string
	}{
		{0x00000000, "1970-01-01T00:00:00Z", "00000000"},
		{0x7fffffff, "2038-01-19T03:14:07Z", "7fffffff"},
		{0x80000000, "2038-01-19T03:14:08Z", "80000000"},
		{0xffffffff, "2106-02-07T06:28:15Z", "ffffffff"},
	} {
		tm := mustTime(t, tc.time)
		lo, hi := objectid.Min(tm), objectid.Max(tm)
		if got, want := lo.Hex(), tc.hex+"0000000000000000"; got != want {
			t.Errorf("Min(%s) = %s, want %s", tc.time, got, want)
		}
		if got, want := hi.Hex(), tc.hex+"ffffffffffffffff"; got != want {
			t.Errorf("Max(%s) = %s, want %s", tc.time, got, want)
		}
		for _, id := range []objectid.ID{lo, hi} {
			if id.Timestamp() != tc.ts || !id.Time().Equal(tm) {
				t.Errorf("%v: Timestamp() = %#x, Time() = %v; want %#x, %s", id, id.Timestamp(), id.Time(), tc.ts, tc.time)
			}
		}
		// Min and Max bracket the id a generator makes in that second.
		g := objectid.NewGenerator(objectid.Spec, objectid.WithClock(func() time.Time { return tm }))
		if id := g.New(); objectid.Compare(lo, id) > 0 || objectid.Compare(id, hi) > 0 {
			t.Errorf("generated %v is outside [%v, %v]", id, lo, hi)
		}
	}
}

// TestMinMaxClamp checks times outside the 4-byte range clamp, never wrap.
func TestMinMaxClamp(t *testing.T) {
	before := time.Unix(-1, 0)
	after := time.Unix(1<<32, 0)
	for _, tc := range []struct {
		name string
		got  objectid.ID
		want string
	}{
		{"Min(1969)", objectid.Min(before), "000000000000000000000000"},
		{"Max(1969)", objectid.Max(before), "00000000ffffffffffffffff"},
		{"Min(year 1)", objectid.Min(time.Time{}), "000000000000000000000000"},
		{"Min(2106+1s)", objectid.Min(after), "ffffffff0000000000000000"},
		{"Max(2106+1s)", objectid.Max(after), "ffffffffffffffffffffffff"},
		{"Max(year 9999)", objectid.Max(time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)), "ffffffffffffffffffffffff"},
		{"Min(fraction)", objectid.Min(time.Unix(0x50c75880, 999_999_999)), "50c758800000000000000000"},
	} {
		if tc.got.Hex() != tc.want {
			t.Errorf("%s = %v, want %s", tc.name, tc.got, tc.want)
		}
	}
}

func TestCompare(t *testing.T) {
	ids := []objectid.ID{
		objectid.MustParse("5a17b9d9ab102555b9c38874"),
		objectid.Nil,
		objectid.MustParse("ffffffff0000000000000000"),
		objectid.MustParse("47cc67093475061e3d95369d"),
		objectid.MustParse("47cc67093475061e3d95369e"),
	}
	slices.SortFunc(ids, objectid.Compare)
	want := []string{
		"000000000000000000000000",
		"47cc67093475061e3d95369d",
		"47cc67093475061e3d95369e",
		"5a17b9d9ab102555b9c38874",
		"ffffffff0000000000000000",
	}
	for i, id := range ids {
		if id.Hex() != want[i] {
			t.Fatalf("sorted[%d] = %v, want %s", i, id, want[i])
		}
	}
	a, b := ids[1], ids[2]
	if objectid.Compare(a, b) != -1 || objectid.Compare(b, a) != 1 || objectid.Compare(a, a) != 0 {
		t.Errorf("Compare(%v, %v) = %d, reversed %d, self %d; want -1, 1, 0",
			a, b, objectid.Compare(a, b), objectid.Compare(b, a), objectid.Compare(a, a))
	}
}

func TestIsZero(t *testing.T) {
	if !objectid.Nil.IsZero() || !(objectid.ID{}).IsZero() {
		t.Error("Nil.IsZero() = false")
	}
	if objectid.New().IsZero() {
		t.Error("New().IsZero() = true")
	}
	if id := objectid.MustParse("000000000000000000000001"); id.IsZero() {
		t.Errorf("%v.IsZero() = true", id)
	}
}

// Compare agrees with bytewise order, and so with the order of the hex strings,
// whichever byte two ids first differ in.
func TestCompareIsBytewise(t *testing.T) {
	ids := []objectid.ID{{}, {11: 1}, {8: 1}, {7: 1}, {0: 1}, {0: 0xff, 11: 0xff}, {0: 0x80}, {3: 0x7f, 8: 0xff}, {9: 0x80}}
	for _, a := range ids {
		for _, b := range ids {
			want := bytes.Compare(a[:], b[:])
			if got := objectid.Compare(a, b); got != want {
				t.Errorf("Compare(%s, %s) = %d, want %d", a, b, got, want)
			}
			if got := strings.Compare(a.Hex(), b.Hex()); got != want {
				t.Errorf("hex order of %s, %s is %d, byte order %d", a, b, got, want)
			}
		}
	}
}
