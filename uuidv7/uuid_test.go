package uuidv7_test

import (
	"slices"
	"testing"
	"time"

	"github.com/seqd/seqd/uuidv7"
)

const msLayout = "2006-01-02T15:04:05.000Z07:00"

// TestGoldenVectors decodes the examples of RFC 9562's Appendix A, and the Nil
// and Max UUIDs.
func TestGoldenVectors(t *testing.T) {
	for _, tc := range []struct {
		text    string
		version int
		v7      bool
		unixMS  int64  // v7 only
		time    string // v7 only
		counter uint16 // v7 only: bits 52–63 and 66–69, as New fills them
	}{
		// A.6, version 7: Tuesday, February 22, 2022 2:22:22.00 PM GMT-05:00.
		{text: "017f22e2-79b0-7cc3-98c4-dc0c0c07398f", version: 7, v7: true,
			unixMS: 0x017f22e279b0, time: "2022-02-22T19:22:22.000Z", counter: 0xcc36},
		{text: "c232ab00-9414-11ec-b3c8-9f6bdeced846", version: 1}, // A.1
		{text: "919108f7-52d1-4320-9bac-f847db4148a8", version: 4}, // A.3
		{text: "1ec9414c-232a-6b00-b3c8-9f6bdeced846", version: 6}, // A.5
		{text: "00000000-0000-0000-0000-000000000000", version: 0},
		{text: "ffffffff-ffff-ffff-ffff-ffffffffffff", version: 15},
		// Version 7 in the version field, but variant 11 (reserved): not a v7.
		{text: "017f22e2-79b0-7cc3-d8c4-dc0c0c07398f", version: 7},
	} {
		u := uuidv7.MustParse(tc.text)
		if got := u.String(); got != tc.text {
			t.Errorf("%s: String() = %s", tc.text, got)
		}
		if u.Version() != tc.version || u.IsV7() != tc.v7 {
			t.Errorf("%s: Version() = %d, IsV7() = %v, want %d and %v", tc.text, u.Version(), u.IsV7(), tc.version, tc.v7)
		}
		if !tc.v7 {
			continue
		}
		if u.UnixMilli() != tc.unixMS || u.Time().Format(msLayout) != tc.time || u.Time().Location() != time.UTC {
			t.Errorf("%s: UnixMilli() = %d, Time() = %v, want %d and %s in UTC", tc.text, u.UnixMilli(), u.Time(), tc.unixMS, tc.time)
		}
		if u.Counter() != tc.counter {
			t.Errorf("%s: Counter() = %#x, want %#x", tc.text, u.Counter(), tc.counter)
		}
	}
}

// TestTimeBoundaries checks the timestamp is read as 48 unsigned bits, and that
// Min and Max are the version 7 UUIDs at either end of a millisecond.
func TestTimeBoundaries(t *testing.T) {
	for _, tc := range []struct {
		ms   int64
		time string
		min  string
		max  string
	}{
		{0, "1970-01-01T00:00:00.000Z", "00000000-0000-7000-8000-000000000000", "00000000-0000-7fff-bfff-ffffffffffff"},
		{0x7fffffffffff, "6429-10-17T02:45:55.327Z", "7fffffff-ffff-7000-8000-000000000000", "7fffffff-ffff-7fff-bfff-ffffffffffff"},
		{0x800000000000, "6429-10-17T02:45:55.328Z", "80000000-0000-7000-8000-000000000000", "80000000-0000-7fff-bfff-ffffffffffff"},
		{0xe677d21fdbff, "9999-12-31T23:59:59.999Z", "e677d21f-dbff-7000-8000-000000000000", "e677d21f-dbff-7fff-bfff-ffffffffffff"},
		{0xffffffffffff, "10889-08-02T05:31:50.655Z", "ffffffff-ffff-7000-8000-000000000000", "ffffffff-ffff-7fff-bfff-ffffffffffff"},
	} {
		tm := time.UnixMilli(tc.ms)
		if got := tm.UTC().Format(msLayout); got != tc.time {
			t.Fatalf("test table: millisecond %d is %s, not %s", tc.ms, got, tc.time)
		}
		lo, hi := uuidv7.Min(tm), uuidv7.Max(tm)
		if lo.String() != tc.min || hi.String() != tc.max {
			t.Errorf("%s: Min %s, Max %s, want %s and %s", tc.time, lo, hi, tc.min, tc.max)
		}
		for _, b := range []uuidv7.UUID{lo, hi} {
			if !b.IsV7() || b.UnixMilli() != tc.ms || b.Time().Format(msLayout) != tc.time {
				t.Errorf("%s: bound %s reads as v7 %v at %d (%v)", tc.time, b, b.IsV7(), b.UnixMilli(), b.Time())
			}
		}
		// A fraction of a millisecond is truncated.
		if got := uuidv7.Min(tm.Add(999 * time.Microsecond)); got != lo {
			t.Errorf("%s + 999µs: Min %s, want %s", tc.time, got, lo)
		}
	}
}

func TestBoundsClamp(t *testing.T) {
	epoch := time.UnixMilli(0)
	for _, tc := range []struct {
		name string
		t    time.Time
		want time.Time
	}{
		{"before 1970", time.Date(1969, 12, 31, 23, 59, 59, 0, time.UTC), epoch},
		{"year 1", time.Time{}, epoch},
		{"after 10889", time.Date(20000, 1, 1, 0, 0, 0, 0, time.UTC), time.UnixMilli(1<<48 - 1)},
	} {
		if got, want := uuidv7.Min(tc.t), uuidv7.Min(tc.want); got != want {
			t.Errorf("%s: Min = %s, want %s", tc.name, got, want)
		}
		if got, want := uuidv7.Max(tc.t), uuidv7.Max(tc.want); got != want {
			t.Errorf("%s: Max = %s, want %s", tc.name, got, want)
		}
	}
}

// TestBoundsBracketIDs makes ids in three milliseconds and checks that
// [Min(t), Min(t+1ms)) holds exactly the ids of millisecond t, and
// [Min(t), Max(t)] the same.
func TestBoundsBracketIDs(t *testing.T) {
	clock := &fakeClock{ms: t0}
	g := uuidv7.NewGenerator(uuidv7.WithClock(clock.now))
	var ids []uuidv7.UUID
	for ms := int64(t0 - 1); ms <= t0+1; ms++ {
		clock.set(ms)
		batch := make([]uuidv7.UUID, 500)
		g.Fill(batch)
		ids = append(ids, batch...)
	}
	tm := time.UnixMilli(t0)
	lo, next, hi := uuidv7.Min(tm), uuidv7.Min(tm.Add(time.Millisecond)), uuidv7.Max(tm)
	var half, closed []uuidv7.UUID
	for _, id := range ids {
		if uuidv7.Compare(lo, id) <= 0 && uuidv7.Compare(id, next) < 0 {
			half = append(half, id)
		}
		if uuidv7.Compare(lo, id) <= 0 && uuidv7.Compare(id, hi) <= 0 {
			closed = append(closed, id)
		}
	}
	if want := ids[500:1000]; !slices.Equal(half, want) || !slices.Equal(closed, want) {
		t.Errorf("[Min, next Min) holds %d ids and [Min, Max] %d, want the 500 of millisecond %d", len(half), len(closed), t0)
	}
}

func TestCompare(t *testing.T) {
	ids := []uuidv7.UUID{
		uuidv7.Nil,
		uuidv7.MustParse("00000000-0000-0000-0000-000000000001"),
		uuidv7.MustParse("00000000-0000-0001-0000-000000000000"),
		uuidv7.MustParse("017f22e2-79b0-7cc3-98c4-dc0c0c07398f"),
		uuidv7.MustParse("017f22e2-79b0-7cc3-98c4-dc0c0c073990"),
		uuidv7.MustParse("ffffffff-ffff-ffff-ffff-ffffffffffff"),
	}
	for i, a := range ids {
		for j, b := range ids {
			if got, want := uuidv7.Compare(a, b), cmpInt(i, j); got != want {
				t.Errorf("Compare(%s, %s) = %d, want %d", a, b, got, want)
			}
		}
	}
}

func cmpInt(i, j int) int {
	switch {
	case i < j:
		return -1
	case i > j:
		return 1
	}
	return 0
}

func TestIsZero(t *testing.T) {
	if !uuidv7.Nil.IsZero() || uuidv7.New().IsZero() {
		t.Error("IsZero: want true for Nil only")
	}
}
