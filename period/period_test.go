package period

import (
	"errors"
	"testing"
	"time"
	_ "time/tzdata" // the tests' zones do not depend on the machine's database
)

func mustZone(tb testing.TB, name string) *time.Location {
	tb.Helper()
	loc, err := ParseZone(name)
	if err != nil {
		tb.Fatal(err)
	}
	return loc
}

func utc(tb testing.TB, s string) time.Time {
	tb.Helper()
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		tb.Fatal(err)
	}
	return t.UTC()
}

// TestPeriods checks Start, End and Key of instants, in UTC, at clock changes and
// in zones whose offsets are not whole hours.
func TestPeriods(t *testing.T) {
	for _, c := range []struct {
		name       string
		zone       string
		unit       Unit
		at         string // the instant, in UTC
		start, end string // in UTC
		key        string
	}{
		{"year", "UTC", Year, "2026-11-26T17:05:30Z", "2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z", "2026"},
		{"month", "UTC", Month, "2026-11-26T17:05:30Z", "2026-11-01T00:00:00Z", "2026-12-01T00:00:00Z", "2026-11"},
		{"day", "UTC", Day, "2026-11-26T17:05:30Z", "2026-11-26T00:00:00Z", "2026-11-27T00:00:00Z", "2026-11-26"},
		{"hour", "UTC", Hour, "2026-11-26T17:05:30Z", "2026-11-26T17:00:00Z", "2026-11-26T18:00:00Z", "2026-11-26T17"},
		{"minute", "UTC", Minute, "2026-11-26T17:05:30Z", "2026-11-26T17:05:00Z", "2026-11-26T17:06:00Z", "2026-11-26T17:05"},
		{"an instant at its period's start", "UTC", Minute, "2026-11-26T17:05:00Z", "2026-11-26T17:05:00Z", "2026-11-26T17:06:00Z", "2026-11-26T17:05"},
		{"the last instant of a period", "UTC", Year, "2026-12-31T23:59:59.999999999Z", "2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z", "2026"},
		{"leap day", "UTC", Day, "2028-02-29T12:00:00Z", "2028-02-29T00:00:00Z", "2028-03-01T00:00:00Z", "2028-02-29"},
		{"a year in Berlin begins in the previous one in UTC", "Europe/Berlin", Year, "2026-12-31T23:30:00Z", "2026-12-31T23:00:00Z", "2027-12-31T23:00:00Z", "2027"},
		{"a month in Berlin across a clock change", "Europe/Berlin", Month, "2027-03-15T00:00:00Z", "2027-02-28T23:00:00Z", "2027-03-31T22:00:00Z", "2027-03"},

		// Europe/Berlin jumps from 02:00 CET to 03:00 CEST at 2027-03-28T01:00Z.
		{"a day of 23 hours", "Europe/Berlin", Day, "2027-03-28T12:00:00Z", "2027-03-27T23:00:00Z", "2027-03-28T22:00:00Z", "2027-03-28"},
		{"the hour before the jump", "Europe/Berlin", Hour, "2027-03-28T00:30:00Z", "2027-03-28T00:00:00Z", "2027-03-28T01:00:00Z", "2027-03-28T01"},
		{"the hour after the jump is 03", "Europe/Berlin", Hour, "2027-03-28T01:00:00Z", "2027-03-28T01:00:00Z", "2027-03-28T02:00:00Z", "2027-03-28T03"},
		{"the minute before the jump", "Europe/Berlin", Minute, "2027-03-28T00:59:59Z", "2027-03-28T00:59:00Z", "2027-03-28T01:00:00Z", "2027-03-28T01:59"},
		{"the minute after the jump", "Europe/Berlin", Minute, "2027-03-28T01:00:00Z", "2027-03-28T01:00:00Z", "2027-03-28T01:01:00Z", "2027-03-28T03:00"},

		// Europe/Berlin goes back from 03:00 CEST to 02:00 CET at 2027-10-31T01:00Z.
		{"a day of 25 hours", "Europe/Berlin", Day, "2027-10-31T12:00:00Z", "2027-10-30T22:00:00Z", "2027-10-31T23:00:00Z", "2027-10-31"},
		{"the hour 02 the first time", "Europe/Berlin", Hour, "2027-10-31T00:30:00Z", "2027-10-31T00:00:00Z", "2027-10-31T02:00:00Z", "2027-10-31T02"},
		{"the hour 02 the second time is the same period", "Europe/Berlin", Hour, "2027-10-31T01:30:00Z", "2027-10-31T00:00:00Z", "2027-10-31T02:00:00Z", "2027-10-31T02"},
		{"the minute 02:59 lasts until 03:00 CET", "Europe/Berlin", Minute, "2027-10-31T01:30:00Z", "2027-10-31T00:59:00Z", "2027-10-31T02:00:00Z", "2027-10-31T02:59"},
		{"the minute 03:00 CET", "Europe/Berlin", Minute, "2027-10-31T02:00:00Z", "2027-10-31T02:00:00Z", "2027-10-31T02:01:00Z", "2027-10-31T03:00"},

		// Asia/Kolkata is +05:30: its hours begin at half past in UTC.
		{"Kolkata hour", "Asia/Kolkata", Hour, "2026-11-26T17:05:00Z", "2026-11-26T16:30:00Z", "2026-11-26T17:30:00Z", "2026-11-26T22"},
		{"Kolkata day", "Asia/Kolkata", Day, "2026-11-26T17:05:00Z", "2026-11-25T18:30:00Z", "2026-11-26T18:30:00Z", "2026-11-26"},
		{"Kolkata minute", "Asia/Kolkata", Minute, "2026-11-26T17:05:10Z", "2026-11-26T17:05:00Z", "2026-11-26T17:06:00Z", "2026-11-26T22:35"},
		// Asia/Kathmandu is +05:45.
		{"Kathmandu hour", "Asia/Kathmandu", Hour, "2026-11-26T17:05:00Z", "2026-11-26T16:15:00Z", "2026-11-26T17:15:00Z", "2026-11-26T22"},

		// Pacific/Apia skipped 2011-12-30: 2011-12-29 24:00 (-10) was 2011-12-31 00:00 (+14).
		{"the day before the skipped day", "Pacific/Apia", Day, "2011-12-30T09:00:00Z", "2011-12-29T10:00:00Z", "2011-12-30T10:00:00Z", "2011-12-29"},
		{"the day after the skipped day", "Pacific/Apia", Day, "2011-12-30T10:00:00Z", "2011-12-30T10:00:00Z", "2011-12-31T10:00:00Z", "2011-12-31"},
		// Australia/Lord_Howe goes back half an hour, from 02:00 +11 to 01:30 +10:30,
		// at 2027-04-03T15:00Z: the hour 01 lasts 90 minutes.
		{"Lord Howe hour 01", "Australia/Lord_Howe", Hour, "2027-04-03T15:10:00Z", "2027-04-03T14:00:00Z", "2027-04-03T15:30:00Z", "2027-04-04T01"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := Spec{Unit: c.unit, Zone: mustZone(t, c.zone)}
			at := utc(t, c.at)
			start, end := s.Start(at), s.End(at)
			if !start.Equal(utc(t, c.start)) || !end.Equal(utc(t, c.end)) {
				t.Errorf("Start, End = %v, %v; want %s, %s", start.UTC(), end.UTC(), c.start, c.end)
			}
			if start.Location() != s.Zone {
				t.Errorf("Start is in %v, not in %v", start.Location(), s.Zone)
			}
			if got := s.Key(at); got != c.key {
				t.Errorf("Key(t) = %q; want %q", got, c.key)
			}
			if got := s.Key(start); got != c.key {
				t.Errorf("Key(Start(t)) = %q; want %q", got, c.key)
			}
			if got, err := s.ParseKey(c.key); err != nil || !got.Equal(start) {
				t.Errorf("ParseKey(%q) = %v, %v; want %v", c.key, got.UTC(), err, start.UTC())
			}
		})
	}
}

func TestNone(t *testing.T) {
	s := Spec{Unit: None, Zone: mustZone(t, "Europe/Berlin")}
	at := utc(t, "2026-11-26T17:05:00Z")
	if got := s.Start(at); !got.IsZero() {
		t.Errorf("Start = %v; want the zero Time", got)
	}
	if got := s.End(at); !got.IsZero() {
		t.Errorf("End = %v; want the zero Time", got)
	}
	if got := s.Key(at); got != "" {
		t.Errorf("Key = %q; want \"\"", got)
	}
	if got, err := s.ParseKey(""); err != nil || !got.IsZero() {
		t.Errorf("ParseKey(\"\") = %v, %v; want the zero Time", got, err)
	}
	_, err := s.ParseKey("2026")
	checkErr(t, err, ErrInvalidKey, `invalid period key: "2026", and the sequence has no period`)
}

func checkErr(tb testing.TB, err, kind error, msg string) {
	tb.Helper()
	if err == nil {
		tb.Fatalf("no error; want %q", msg)
	}
	if !errors.Is(err, kind) {
		tb.Errorf("error %q is not %v", err, kind)
	}
	if err.Error() != msg {
		tb.Errorf("error:\n %s\nwant:\n %s", err, msg)
	}
}

func TestParseKeyErrors(t *testing.T) {
	for _, c := range []struct {
		zone string
		unit Unit
		key  string
		msg  string
	}{
		{"Europe/Berlin", Hour, "2027-03-28T02", `invalid period key: "2027-03-28T02" does not occur in Europe/Berlin: its clock skips it`},
		{"Europe/Berlin", Minute, "2027-03-28T02:30", `invalid period key: "2027-03-28T02:30" does not occur in Europe/Berlin: its clock skips it`},
		{"Pacific/Apia", Day, "2011-12-30", `invalid period key: "2011-12-30" does not occur in Pacific/Apia: its clock skips it`},
		{"UTC", Month, "2026-13", `invalid period key: "2026-13", want YYYY-MM (a month)`},
		{"UTC", Month, "2026-1", `invalid period key: "2026-1", want YYYY-MM (a month)`},
		{"UTC", Year, "+026", `invalid period key: "+026", want YYYY (a year)`},
		{"UTC", Year, "2026-11", `invalid period key: "2026-11", want YYYY (a year)`},
		{"UTC", Day, "2026-02-29", `invalid period key: "2026-02-29", want YYYY-MM-DD (a day)`},
		{"UTC", Hour, "2026-11-26T7", `invalid period key: "2026-11-26T7", want YYYY-MM-DDTHH (an hour)`},
		{"UTC", Hour, "2026-11-26T24", `invalid period key: "2026-11-26T24", want YYYY-MM-DDTHH (an hour)`},
		{"UTC", Minute, "2026-11-26 17:05", `invalid period key: "2026-11-26 17:05", want YYYY-MM-DDTHH:MM (a minute)`},
		{"UTC", Minute, "", `invalid period key: "", want YYYY-MM-DDTHH:MM (a minute)`},
	} {
		s := Spec{Unit: c.unit, Zone: mustZone(t, c.zone)}
		_, err := s.ParseKey(c.key)
		checkErr(t, err, ErrInvalidKey, c.msg)
	}
}

func TestUnit(t *testing.T) {
	for u := None; u <= Minute; u++ {
		got, err := ParseUnit(u.String())
		if err != nil || got != u {
			t.Errorf("ParseUnit(%q) = %v, %v", u.String(), got, err)
		}
	}
	if got := Unit(9).String(); got != "Unit(9)" {
		t.Errorf("Unit(9).String() = %q", got)
	}
	for _, s := range []string{"", "Year", "weekly", "years"} {
		_, err := ParseUnit(s)
		checkErr(t, err, ErrInvalidUnit, "invalid period: "+quote(s)+", want none, year, month, day, hour or minute")
	}
}

func TestParseZone(t *testing.T) {
	for _, name := range []string{"", "UTC"} {
		if loc, err := ParseZone(name); err != nil || loc != time.UTC {
			t.Errorf("ParseZone(%q) = %v, %v; want UTC", name, loc, err)
		}
	}
	if loc, err := ParseZone("Asia/Kolkata"); err != nil || loc.String() != "Asia/Kolkata" {
		t.Errorf("ParseZone(Asia/Kolkata) = %v, %v", loc, err)
	}
	for _, c := range []struct{ name, msg string }{
		{"Mars/Olympus_Mons", `invalid time zone: "Mars/Olympus_Mons" is not an IANA zone name such as Europe/Berlin`},
		{"europe/berlin", `invalid time zone: "europe/berlin" is not an IANA zone name such as Europe/Berlin`},
		{"../../etc/passwd", `invalid time zone: "../../etc/passwd" is not an IANA zone name such as Europe/Berlin`},
		{"/etc/localtime", `invalid time zone: "/etc/localtime" is not an IANA zone name such as Europe/Berlin`},
		// The same file by other spellings: each would be another stored name for one
		// zone, and another entry in the counters package's cache of loaded zones.
		{"Europe/./Berlin", `invalid time zone: "Europe/./Berlin" is not an IANA zone name such as Europe/Berlin`},
		{"Europe//Berlin", `invalid time zone: "Europe//Berlin" is not an IANA zone name such as Europe/Berlin`},
		{"./UTC", `invalid time zone: "./UTC" is not an IANA zone name such as Europe/Berlin`},
		// Directories of the system's zone database, not IANA names, and absent from
		// the one built into seqd: right/ zones count leap seconds, which Go's reader
		// does not expect (right/Europe/Berlin read CEST on 31 December 2026).
		{"right/Europe/Berlin", `invalid time zone: "right/Europe/Berlin" is not an IANA zone name such as Europe/Berlin`},
		{"posix/Europe/Berlin", `invalid time zone: "posix/Europe/Berlin" is not an IANA zone name such as Europe/Berlin`},
		{"Europe\x00Berlin", `invalid time zone: "Europe\x00Berlin" is not an IANA zone name such as Europe/Berlin`},
		{"+05:30", `invalid time zone: "+05:30" is not an IANA zone name such as Europe/Berlin`},
		{"Local", `invalid time zone: "Local" depends on the machine; name an IANA zone such as Europe/Berlin`},
		// The zone database's links to the machine's zone (Debian's zoneinfo/localtime
		// is a link to /etc/localtime) are "Local" by another name.
		{"localtime", `invalid time zone: "localtime" depends on the machine; name an IANA zone such as Europe/Berlin`},
		{"posixrules", `invalid time zone: "posixrules" depends on the machine; name an IANA zone such as Europe/Berlin`},
		{"America/" + string(make([]byte, 60)), `invalid time zone: "America/\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"… is 68 bytes long; IANA names have at most 64`},
	} {
		_, err := ParseZone(c.name)
		checkErr(t, err, ErrInvalidZone, c.msg)
	}
}

// BenchmarkStart measures the period of an instant, which a sequence with a
// period needs on every answer, in a zone with clock changes.
func BenchmarkStart(b *testing.B) {
	for _, u := range []Unit{Year, Day, Minute} {
		s := Spec{Unit: u, Zone: mustZone(b, "Europe/Berlin")}
		at := time.Date(2026, 11, 26, 17, 5, 0, 0, time.UTC)
		b.Run(u.String(), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = s.Start(at)
			}
		})
	}
}

func BenchmarkKey(b *testing.B) {
	s := Spec{Unit: Minute, Zone: mustZone(b, "Europe/Berlin")}
	start := s.Start(time.Date(2026, 11, 26, 17, 5, 0, 0, time.UTC))
	b.ReportAllocs()
	for b.Loop() {
		_ = s.Key(start)
	}
}

// TestStartIsComparable checks that starts of one period are ==, even of
// instants with a monotonic clock reading, and that they compare in time order.
func TestStartIsComparable(t *testing.T) {
	for _, zone := range []string{"UTC", "Asia/Kolkata"} {
		s := Spec{Unit: Minute, Zone: mustZone(t, zone)}
		now := time.Now()
		a, b := s.Start(now), s.Start(now.Add(time.Nanosecond))
		if s.End(now).Sub(now) > time.Nanosecond && a != b {
			t.Errorf("%s: Start(now) = %#v != Start(now + 1ns) = %#v", zone, a, b)
		}
		if a != a.Round(0) {
			t.Errorf("%s: Start(now) has a monotonic clock reading: %v", zone, a)
		}
		if k, err := s.ParseKey(s.Key(now)); err != nil || k != a {
			t.Errorf("%s: ParseKey(Key(now)) = %#v, %v; want %#v", zone, k, err, a)
		}
		if next := s.End(now); !a.Before(next) || next != s.Start(next) {
			t.Errorf("%s: End(now) = %v is not the next period's start after %v", zone, next, a)
		}
	}
}
