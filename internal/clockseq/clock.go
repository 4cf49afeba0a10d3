package clockseq

import (
	"sync/atomic"
	"time"
)

// WallNanos returns time.Now().UnixNano() for little more than half the cost
// (see the package comment): the last reading of the wall clock plus the
// monotonic clock's progress since, re-read when the reading's second ends.
func WallNanos() int64 {
	if r := lastReading.Load(); r != nil {
		if d := time.Since(r.start); d < r.left {
			return r.unixNano + int64(d)
		}
	}
	return readWallClock().unixNano
}

// reading is one reading of the wall clock.
type reading struct {
	start    time.Time     // carries a monotonic part, for time.Since
	unixNano int64         // start.UnixNano()
	unix     int64         // start.Unix()
	left     time.Duration // from start to the end of its second
}

// lastReading is the last reading of the wall clock, nil before the first. A
// new reading replaces it whole, so readers never see a torn one.
var lastReading atomic.Pointer[reading]

func readWallClock() *reading {
	now := time.Now()
	r := &reading{start: now, unixNano: now.UnixNano(), unix: now.Unix(), left: time.Second - time.Duration(now.Nanosecond())}
	lastReading.Store(r)
	return r
}
