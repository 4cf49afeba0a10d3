package objectid

import (
	"testing"
	"time"
)

// TestWallSeconds checks the monotonic shortcut agrees with the wall clock.
func TestWallSeconds(t *testing.T) {
	for range 10000 {
		before := time.Now().Unix()
		got := wallSeconds()
		after := time.Now().Unix()
		if got < before || got > after {
			t.Fatalf("wallSeconds() = %d, want between %d and %d", got, before, after)
		}
	}
}

// TestWallSecondsRereads checks the second read from the wall clock is kept
// while it lasts by the monotonic clock, and read again after.
func TestWallSecondsRereads(t *testing.T) {
	defer readWallClock()

	currentSecond.Store(&second{start: time.Now(), unix: 42, left: time.Hour})
	if got := wallSeconds(); got != 42 {
		t.Errorf("within the second: wallSeconds() = %d, want the kept 42", got)
	}
	currentSecond.Store(&second{start: time.Now().Add(-time.Second), unix: 42, left: time.Second})
	before := time.Now().Unix()
	if got := wallSeconds(); got < before {
		t.Errorf("after the second: wallSeconds() = %d, want the wall clock, %d or later", got, before)
	}
	if s := currentSecond.Load(); s.unix < before || s.left <= 0 || s.left > time.Second {
		t.Errorf("after the second: kept %+v, want a new reading", s)
	}
}
