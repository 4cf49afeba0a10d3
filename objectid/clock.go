package objectid

import (
	"sync/atomic"
	"time"
)

// wallSeconds returns time.Now().Unix() for a little over half the cost, which
// is most of the cost of New. time.Now reads two clocks, wall and monotonic;
// time.Since of a reading that carries a monotonic part reads only the
// monotonic one. So the wall clock is read once per second, when the second
// it last gave runs out by the monotonic clock, and in between only the
// monotonic clock is read.
//
// The two clocks tick at the same rate (NTP slews both), so the second
// changes when the wall clock's does. A step of the wall clock, which the
// monotonic clock does not follow, shows at the next read: within a second.
func wallSeconds() int64 {
	if s := currentSecond.Load(); s != nil && time.Since(s.start) < s.left {
		return s.unix
	}
	return readWallClock()
}

// second is one reading of the wall clock: its second, and how long that
// second lasts after the reading.
type second struct {
	start time.Time     // carries a monotonic part, for time.Since
	unix  int64         // start.Unix()
	left  time.Duration // from start to the end of its second
}

// currentSecond is the last reading of the wall clock, nil before the first.
// A new reading replaces it whole, so readers never see a torn one.
var currentSecond atomic.Pointer[second]

func readWallClock() int64 {
	now := time.Now()
	s := &second{start: now, unix: now.Unix(), left: time.Second - time.Duration(now.Nanosecond())}
	currentSecond.Store(s)
	return s.unix
}
