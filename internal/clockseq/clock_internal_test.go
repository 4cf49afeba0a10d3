package clockseq

import (
	"testing"
	"time"
)

// TestWallNanos checks the monotonic shortcut agrees with the wall clock.
func TestWallNanos(t *testing.T) {
	for range 10000 {
		before := time.Now().UnixNano()
		got := WallNanos()
		after := time.Now().UnixNano()
		if got < before || got > after {
			t.Fatalf("WallNanos() = %d, want between %d and %d", got, before, after)
		}
	}
}

// TestWallNanosRereads checks a reading of the wall clock is carried forward by
// the monotonic clock for a second, and read again after.
func TestWallNanosRereads(t *testing.T) {
	defer readWallClock()

	lastReading.Store(&reading{start: time.Now().Add(-250 * time.Millisecond), unixNano: 42e9, unix: 42, left: time.Second})
	if got := WallNanos() / 1e6; got < 42250 || got > 42250+100 {
		t.Errorf("within the second: WallNanos() = %d ms, want the kept reading plus 250 ms, 42250 or a little more", got)
	}
	lastReading.Store(&reading{start: time.Now().Add(-time.Second), unixNano: 42e9, unix: 42, left: time.Second})
	before := time.Now().UnixNano()
	if got := WallNanos(); got < before {
		t.Errorf("after the second: WallNanos() = %d, want the wall clock, %d or later", got, before)
	}
	if r := lastReading.Load(); r.unixNano < before {
		t.Errorf("after the second: kept %+v, want a new reading", r)
	}
}

// TestNowSeconds checks a Seq of seconds reads the wall clock's second.
func TestNowSeconds(t *testing.T) {
	var s Seq
	s.Init(Config{Unit: Second, CounterBits: 24, Last: 1<<32 - 1})
	for range 10000 {
		before := time.Now().Unix()
		got := int64(s.Now())
		after := time.Now().Unix()
		if got < before || got > after {
			t.Fatalf("Now() = %d, want between %d and %d", got, before, after)
		}
	}
}
