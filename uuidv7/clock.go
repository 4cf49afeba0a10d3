package uuidv7

import (
	"sync/atomic"
	"time"
)

// wallMillis returns time.Now().UnixMilli() for little more than half the cost.
// time.Now reads two clocks, wall and monotonic; time.Since of a reading that
// carries a monotonic part reads only the monotonic one. So the wall clock is
// read once a second, and in between its milliseconds are the last reading's
// plus the monotonic clock's progress since.
//
// The two clocks tick at the same rate (NTP slews both), so the millisecond
// changes when the wall clock's does. A step of the wall clock, which the
// monotonic clock does not follow, shows at the next read: within a second.
// (Package objectid reads its seconds the same way.)
func wallMillis() int64 {
	if r := lastReading.Load(); r != nil {
		if d := time.Since(r.start); d < time.Second {
			return (r.unixNano + int64(d)) / int64(time.Millisecond)
		}
	}
	return readWallClock()
}

// reading is one reading of the wall clock.
type reading struct {
	start    time.Time // carries a monotonic part, for time.Since
	unixNano int64     // start.UnixNano()
}

// lastReading is the last reading of the wall clock, nil before the first. A new
// reading replaces it whole, so readers never see a torn one.
var lastReading atomic.Pointer[reading]

func readWallClock() int64 {
	now := time.Now()
	lastReading.Store(&reading{start: now, unixNano: now.UnixNano()})
	return now.UnixMilli()
}
