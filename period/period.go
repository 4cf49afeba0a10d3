// Package period divides time into the periods after which a sequence restarts
// (years, months, days, hours or minutes of a time zone's wall clock), names them,
// and formats the numbers people read from a value and its period ("INV-2026-000042").
//
// # Periods
//
// A Spec is a Unit in a time zone (an IANA name; UTC when none is given). A period
// is one year, month, day, hour or minute of that zone's wall clock, and its key
// names it: "2026", "2026-11", "2026-11-26", "2026-11-26T17", "2026-11-26T17:05".
// Keys have a fixed width for years 0000 to 9999, so their order as strings is the
// order of their periods.
//
// Periods are intervals of instants that never go back: a period begins at the
// first instant at which the zone's wall clock reads its start or later, and ends
// where the next one begins. Every instant t is in exactly one period, with
// Start(t) <= t < End(t), and a later instant never has an earlier key. So, where
// the clock changes:
//
//   - When it jumps forward (Europe/Berlin on 2027-03-28, 02:00 to 03:00 CEST), the
//     skipped wall times name no period: there is no hour "2027-03-28T02" (ParseKey
//     refuses it), the hour "2027-03-28T01" is followed by "2027-03-28T03", which
//     begins at 01:00 UTC, and the day is 23 hours long.
//   - When it goes back (Europe/Berlin on 2027-10-31, 03:00 to 02:00 CET), the
//     repeated wall times stay in the period already begun: the hour
//     "2027-10-31T02" lasts two hours and the day 25; a minute never goes back
//     either, so "2027-10-31T02:59" lasts 61 minutes.
//   - In a zone whose offset is not a whole number of hours (Asia/Kolkata, +05:30),
//     hours begin at half past in UTC.
//
// # The clock is the caller's
//
// This package maps an instant to its period and never reads a clock. Which
// instant a sequence is in (the clocks of several machines disagree) is for the
// caller to decide and to document.
//
// # Formats
//
// A Format is literal text with tokens: {seq} is the value in decimal, {seq:N} the
// value zero padded to N digits (1 to 19; a longer value is never cut), and
// {yyyy} {yy} {MM} {dd} {HH} {mm} are the year, year in the century, month, day,
// hour and minute of the period's start in its zone; {{ and }} are braces. A format
// has at least one {seq}, at most MaxFormatLen bytes of UTF-8 and no control
// characters. ParseFormat cannot know the period it will be used with:
// Format.Check(spec) refuses date tokens on a sequence without a period, and tokens
// finer than the period ({dd} of a month would always read 01).
//
// Every failure of ParseUnit, ParseZone, ParseKey, ParseFormat and Format.Check
// wraps one of the sentinels below, for errors.Is, and its text goes on after the
// sentinel's for the users of an API: what is wrong and where, quoting at most 40
// bytes of the input ("invalid format: unknown token "{sq}" at offset 4 (…)").
package period

import (
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"
)

// The sentinels every error of this package wraps.
var (
	ErrInvalidUnit   = errors.New("invalid period")
	ErrInvalidZone   = errors.New("invalid time zone")
	ErrInvalidKey    = errors.New("invalid period key")
	ErrInvalidFormat = errors.New("invalid format")
)

// invalid returns an error wrapping kind, whose text goes on after kind's:
// "invalid time zone: …", as the project's other errors do.
func invalid(kind error, format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{kind}, args...)...)
}

// quote quotes s for an error message, cut to 40 bytes (at a character boundary).
func quote(s string) string {
	const max = 40
	if len(s) <= max {
		return strconv.Quote(s)
	}
	n := max
	for n > 0 && s[n]&0xC0 == 0x80 { // not inside a UTF-8 sequence
		n--
	}
	return strconv.Quote(s[:n]) + "…"
}

// Unit is how often a sequence restarts.
type Unit uint8

// The units, from none (one period forever) to the minute.
const (
	None Unit = iota
	Year
	Month
	Day
	Hour
	Minute
)

var unitNames = [...]string{None: "none", Year: "year", Month: "month", Day: "day", Hour: "hour", Minute: "minute"}

// ParseUnit parses "none", "year", "month", "day", "hour" or "minute".
func ParseUnit(s string) (Unit, error) {
	for u, name := range unitNames {
		if s == name {
			return Unit(u), nil
		}
	}
	return None, invalid(ErrInvalidUnit, "%s, want none, year, month, day, hour or minute", quote(s))
}

// String returns the name ParseUnit parses.
func (u Unit) String() string {
	if int(u) < len(unitNames) {
		return unitNames[u]
	}
	return "Unit(" + strconv.Itoa(int(u)) + ")"
}

// maxZoneLen bounds a time zone name; the longest IANA names have 32 bytes.
const maxZoneLen = 64

// ParseZone loads the IANA time zone name ("Europe/Berlin"); "" and "UTC" are UTC.
// "Local", the machine's own zone, is refused: periods must not depend on where
// they are computed. So are "localtime" and "posixrules", the zone database's
// links to the machine's choice (Debian's zoneinfo/localtime is /etc/localtime). The zone database is the system's, or the one embedded by a
// program that imports time/tzdata; it is read on every call, so keep the result.
func ParseZone(name string) (*time.Location, error) {
	switch {
	case name == "" || name == "UTC":
		return time.UTC, nil
	case name == "Local" || name == "localtime" || name == "posixrules":
		return nil, invalid(ErrInvalidZone, "%s depends on the machine; name an IANA zone such as Europe/Berlin", quote(name))
	case len(name) > maxZoneLen:
		return nil, invalid(ErrInvalidZone, "%s is %d bytes long; IANA names have at most %d", quote(name), len(name), maxZoneLen)
	case path.Clean(name) != name, strings.HasPrefix(name, "right/"), strings.HasPrefix(name, "posix/"):
		// time.LoadLocation opens "Europe/./Berlin" as Europe/Berlin, and the
		// system database's right/ and posix/ copies of every zone (Go misreads
		// right/'s, which count leap seconds); none is an IANA name.
		return nil, invalid(ErrInvalidZone, "%s is not an IANA zone name such as Europe/Berlin", quote(name))
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, invalid(ErrInvalidZone, "%s is not an IANA zone name such as Europe/Berlin", quote(name))
	}
	return loc, nil
}

// Spec is a unit in a time zone. A nil Zone is UTC. Its methods panic on a Unit
// that ParseUnit does not return.
//
// The instants its methods return are in Zone and carry no monotonic clock
// reading, so that those of one period are == to each other.
type Spec struct {
	Unit Unit
	Zone *time.Location
}

func (s Spec) zone() *time.Location {
	if s.Zone == nil {
		return time.UTC
	}
	return s.Zone
}

// Start returns the start of the period that contains the instant t, in s.Zone: the
// first instant at which the zone's wall clock read the period's start or later.
// Start(t) <= t, and Start(Start(t)) == Start(t). With None, there is one period,
// and Start returns the zero Time.
func (s Spec) Start(t time.Time) time.Time {
	if s.Unit == None {
		return time.Time{}
	}
	return s.first(truncate(s.Unit, s.reach(t)))
}

// End returns the end of the period that contains t: the start of the next period,
// so that Start(t) <= t < End(t) and Start(End(t)) == End(t). With None, the period
// never ends, and End returns the zero Time.
func (s Spec) End(t time.Time) time.Time {
	if s.Unit == None {
		return time.Time{}
	}
	return s.first(following(s.Unit, truncate(s.Unit, s.reach(t))))
}

// Key returns the key of the period that contains t ("" with None); it is meant
// to be called with a period's start, but any instant of the period gives the same.
func (s Spec) Key(t time.Time) string {
	if s.Unit == None {
		return ""
	}
	w := truncate(s.Unit, s.reach(t))
	y, mo, d := w.Date()
	b := make([]byte, 0, len("2006-01-02T15:04"))
	b = appendPadded(b, int64(y), 4)
	if s.Unit >= Month {
		b = appendPadded(append(b, '-'), int64(mo), 2)
	}
	if s.Unit >= Day {
		b = appendPadded(append(b, '-'), int64(d), 2)
	}
	if s.Unit >= Hour {
		b = appendPadded(append(b, 'T'), int64(w.Hour()), 2)
	}
	if s.Unit >= Minute {
		b = appendPadded(append(b, ':'), int64(w.Minute()), 2)
	}
	return string(b)
}

// keyLayouts are the layouts of keys, by unit, for time.Parse.
var keyLayouts = [...]string{Year: "2006", Month: "2006-01", Day: "2006-01-02", Hour: "2006-01-02T15", Minute: "2006-01-02T15:04"}

// keyShapes are keyLayouts as users read them.
var keyShapes = [...]string{Year: "YYYY (a year)", Month: "YYYY-MM (a month)", Day: "YYYY-MM-DD (a day)", Hour: "YYYY-MM-DDTHH (an hour)", Minute: "YYYY-MM-DDTHH:MM (a minute)"}

// ParseKey returns the start of the period named key, in s.Zone: Start of any
// instant of that period. A key whose wall time the zone's clock skips names no
// period and is refused. With None, the only key is "", whose start is the zero
// Time.
func (s Spec) ParseKey(key string) (time.Time, error) {
	if s.Unit == None {
		if key != "" {
			return time.Time{}, invalid(ErrInvalidKey, "%s, and the sequence has no period", quote(key))
		}
		return time.Time{}, nil
	}
	if int(s.Unit) >= len(keyLayouts) {
		return time.Time{}, invalid(ErrInvalidKey, "unknown unit %s", s.Unit)
	}
	// time.Parse takes a one-digit hour, or "+026" for a year: a key must read
	// back as itself.
	w, err := time.Parse(keyLayouts[s.Unit], key)
	if err != nil || w.Format(keyLayouts[s.Unit]) != key {
		return time.Time{}, invalid(ErrInvalidKey, "%s, want %s", quote(key), keyShapes[s.Unit])
	}
	start := s.first(w)
	if truncate(s.Unit, s.reach(start)) != w {
		return time.Time{}, invalid(ErrInvalidKey, "%s does not occur in %s: its clock skips it", quote(key), s.zone())
	}
	return start, nil
}

// maxShift bounds how far apart two instants can be when the earlier one has the
// later wall clock reading: the difference of two UTC offsets, which all lie
// between -15:56 and +15:13 in the zone database (local mean times of the
// nineteenth century).
const maxShift = 48 * time.Hour

// wall returns the wall clock reading of t in its location, as a time in UTC with
// those fields.
func wall(t time.Time) time.Time {
	_, offset := t.Zone()
	return t.UTC().Add(time.Duration(offset) * time.Second)
}

// reach returns the latest wall clock reading of the zone at or before t. Where
// the clock went back, it is later than t's own reading; this is what keeps
// periods from going back.
func (s Spec) reach(t time.Time) time.Time {
	t = t.In(s.zone())
	latest := wall(t)
	for cur := t; ; {
		// The wall clock rises within a zone offset's span, so only the ends of
		// earlier spans can read later than t, and only within maxShift.
		begin, _ := cur.ZoneBounds()
		if begin.IsZero() || t.Sub(begin) > maxShift {
			return latest
		}
		cur = begin.Add(-time.Nanosecond)
		if w := wall(cur); w.After(latest) {
			latest = w
		}
	}
}

// first returns the first instant at which the zone's wall clock reads w (in UTC
// fields) or later.
func (s Spec) first(w time.Time) time.Time {
	// The instant sought lies within maxShift of w read as UTC: from w + maxShift
	// on, every reading is later than w.
	lo := w.Add(-maxShift)
	found := w.Add(maxShift).In(s.zone())
	for cur := found; ; {
		// Within the span of one offset, the reading is the instant plus the offset;
		// the first instant of the span that reads w or later is w minus the offset,
		// or the span's beginning. Earlier spans are visited until lo.
		begin, _ := cur.ZoneBounds()
		_, offset := cur.Zone()
		at := w.Add(-time.Duration(offset) * time.Second)
		if !begin.IsZero() && at.Before(begin) {
			at = begin
		}
		if !at.After(cur) {
			found = at.In(s.zone())
		}
		if begin.IsZero() || !begin.After(lo) {
			return found
		}
		cur = begin.Add(-time.Nanosecond)
	}
}

// truncate returns the start of w's period of unit u, w in UTC fields.
func truncate(u Unit, w time.Time) time.Time {
	y, mo, d := w.Date()
	switch u {
	case Year:
		return time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC)
	case Month:
		return time.Date(y, mo, 1, 0, 0, 0, 0, time.UTC)
	case Day:
		return time.Date(y, mo, d, 0, 0, 0, 0, time.UTC)
	case Hour:
		return time.Date(y, mo, d, w.Hour(), 0, 0, 0, time.UTC)
	case Minute:
		return time.Date(y, mo, d, w.Hour(), w.Minute(), 0, 0, time.UTC)
	}
	panic("period: unknown unit " + u.String())
}

// following returns the start of the period of unit u after the one that starts
// at w, in UTC fields.
func following(u Unit, w time.Time) time.Time {
	switch u {
	case Year:
		return w.AddDate(1, 0, 0)
	case Month:
		return w.AddDate(0, 1, 0)
	case Day:
		return w.AddDate(0, 0, 1)
	case Hour:
		return w.Add(time.Hour)
	case Minute:
		return w.Add(time.Minute)
	}
	panic("period: unknown unit " + u.String())
}

// appendPadded appends v in decimal, zero padded to width digits after its sign.
func appendPadded(b []byte, v int64, width int) []byte {
	u := uint64(v)
	if v < 0 {
		b = append(b, '-')
		u = -u
	}
	var digits [20]byte
	i := len(digits)
	for {
		i--
		digits[i] = byte('0' + u%10)
		u /= 10
		if u == 0 {
			break
		}
	}
	for n := len(digits) - i; n < width; n++ {
		b = append(b, '0')
	}
	return append(b, digits[i:]...)
}
