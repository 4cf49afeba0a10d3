package period

import (
	"math/rand/v2"
	"testing"
	"time"
)

// propertyZones have offsets that are not whole hours, clock changes of an hour,
// half an hour and a day, and local mean times of the nineteenth century.
var propertyZones = []string{
	"UTC", "Europe/Berlin", "Asia/Kolkata", "Asia/Kathmandu", "America/St_Johns",
	"Australia/Lord_Howe", "Pacific/Apia", "Pacific/Chatham", "America/Sao_Paulo",
	"America/Sitka", "Asia/Manila", "Africa/Casablanca", "America/Santiago",
}

// TestProperties checks, for random instants from 1800 to 2200 (clustered around
// each zone's clock changes) and every unit: Start(t) <= t < End(t), Start and End
// are their own periods' starts, Key(t) is Key(Start(t)) and ParseKey reads it
// back as Start(t), and the next period's key is later.
func TestProperties(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rnd := rand.New(rand.NewPCG(seed, 0))
	lo := time.Date(1800, 1, 1, 0, 0, 0, 0, time.UTC)
	hi := time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)
	n := 1000
	if testing.Short() {
		n = 200
	}
	for _, name := range propertyZones {
		zone := mustZone(t, name)
		for range n {
			at := lo.Add(time.Duration(rnd.Int64N(int64(hi.Sub(lo)))))
			if rnd.IntN(2) == 0 {
				// Near a clock change: the span's beginning, give or take two hours.
				if begin, _ := at.In(zone).ZoneBounds(); !begin.IsZero() {
					at = begin.Add(time.Duration(rnd.Int64N(int64(4*time.Hour))) - 2*time.Hour)
				}
			}
			for u := Year; u <= Minute; u++ {
				checkProperties(t, Spec{Unit: u, Zone: zone}, at)
			}
		}
	}
}

func checkProperties(t *testing.T, s Spec, at time.Time) {
	t.Helper()
	start, end := s.Start(at), s.End(at)
	key := s.Key(at)
	fail := func(what string, args ...any) {
		t.Helper()
		t.Fatalf("%v in %v at %v (start %v, end %v, key %q): "+what,
			append([]any{s.Unit, s.zone(), at.UTC(), start.UTC(), end.UTC(), key}, args...)...)
	}
	if start.After(at) || !at.Before(end) {
		fail("not Start <= t < End")
	}
	if got := s.Start(start); !got.Equal(start) {
		fail("Start(Start) = %v", got.UTC())
	}
	if got := s.Start(end); !got.Equal(end) {
		fail("Start(End) = %v", got.UTC())
	}
	if got := s.Start(end.Add(-time.Nanosecond)); !got.Equal(start) {
		fail("Start(End - 1ns) = %v", got.UTC())
	}
	if start.Year() > 1 {
		if got := s.End(start.Add(-time.Nanosecond)); !got.Equal(start) {
			fail("End(Start - 1ns) = %v", got.UTC())
		}
	}
	if got := s.Key(start); got != key {
		fail("Key(Start) = %q", got)
	}
	if got := s.Key(end); got <= key {
		fail("Key(End) = %q, not later", got)
	}
	if got, err := s.ParseKey(key); err != nil || !got.Equal(start) {
		fail("ParseKey = %v, %v", got.UTC(), err)
	}
}
