package uuidv7

import (
	"testing"
	"time"
)

// TestWallMillis checks the monotonic shortcut agrees with the wall clock.
func TestWallMillis(t *testing.T) {
	for range 10000 {
		before := time.Now().UnixMilli()
		got := wallMillis()
		after := time.Now().UnixMilli()
		if got < before || got > after {
			t.Fatalf("wallMillis() = %d, want between %d and %d", got, before, after)
		}
	}
}

// TestWallMillisRereads checks a reading of the wall clock is carried forward by
// the monotonic clock for a second, and read again after.
func TestWallMillisRereads(t *testing.T) {
	defer readWallClock()

	lastReading.Store(&reading{start: time.Now().Add(-250 * time.Millisecond), unixNano: 42e9})
	if got := wallMillis(); got < 42250 || got > 42250+100 {
		t.Errorf("within the second: wallMillis() = %d, want the kept reading plus 250 ms, 42250 or a little more", got)
	}
	lastReading.Store(&reading{start: time.Now().Add(-time.Second), unixNano: 42e9})
	before := time.Now().UnixMilli()
	if got := wallMillis(); got < before {
		t.Errorf("after the second: wallMillis() = %d, want the wall clock, %d or later", got, before)
	}
	if r := lastReading.Load(); r.unixNano/1e6 < before {
		t.Errorf("after the second: kept %+v, want a new reading", r)
	}
}

// TestBuildLayout checks the bit layout of the package comment on one state.
func TestBuildLayout(t *testing.T) {
	v := uint64(0x017f22e279b0)<<16 | 0xabcd
	u := build(v, 0xffffffffffffffc0) // the 58 bits used all ones, the 6 dropped zero
	if got, want := u.String(), "017f22e2-79b0-7abc-b7ff-ffffffffffff"; got != want {
		t.Errorf("build = %s, want %s", got, want)
	}
	if u.UnixMilli() != 0x017f22e279b0 || u.Counter() != 0xabcd || !u.IsV7() {
		t.Errorf("build = %s: millisecond %#x, counter %#x, v7 %v", u, u.UnixMilli(), u.Counter(), u.IsV7())
	}
	if got, want := build(v, 0).String(), "017f22e2-79b0-7abc-b400-000000000000"; got != want {
		t.Errorf("build with no random bits = %s, want %s", got, want)
	}
}
