package period

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

func mustFormat(tb testing.TB, s string) Format {
	tb.Helper()
	f, err := ParseFormat(s)
	if err != nil {
		tb.Fatal(err)
	}
	return f
}

func TestApply(t *testing.T) {
	// 2027-03-28T03:00 CEST, the start of the hour after Berlin's clock jumped.
	berlin := utc(t, "2027-03-28T01:00:00Z").In(mustZone(t, "Europe/Berlin"))
	// 2026-11-26T22:35 IST.
	kolkata := utc(t, "2026-11-26T17:05:00Z").In(mustZone(t, "Asia/Kolkata"))
	// 2007-01-09T09:41 UTC: every field below 10.
	early := utc(t, "2007-01-09T09:41:00Z")
	for _, c := range []struct {
		format string
		value  int64
		start  time.Time
		want   string
	}{
		{"{seq}", 42, early, "42"},
		{"{seq:1}", 42, early, "42"},
		{"{seq:6}", 42, early, "000042"},
		{"{seq:2}", 42, early, "42"},
		{"{seq:2}", 123456, early, "123456"}, // never cut
		{"{seq:19}", 1, early, "0000000000000000001"},
		{"{seq:19}", math.MaxInt64, early, "9223372036854775807"},
		{"{seq:3}", -7, early, "-007"},
		{"{seq}", math.MinInt64, early, "-9223372036854775808"},
		{"INV-{yyyy}-{seq:6}", 42, berlin, "INV-2027-000042"},
		{"{yyyy}/{seq}", 1, early, "2007/1"},
		{"{yy}/{seq}", 1, early, "07/1"},
		{"{MM}/{seq}", 1, early, "01/1"},
		{"{dd}/{seq}", 1, early, "09/1"},
		{"{HH}/{seq}", 1, early, "09/1"},
		{"{mm}/{seq}", 1, early, "41/1"},
		{"{yyyy}{MM}{dd}{HH}{mm}{seq}", 1, berlin, "2027032803001"},
		{"{yyyy}-{MM}-{dd}T{HH}:{mm} #{seq}", 5, kolkata, "2026-11-26T22:35 #5"},
		{"{{seq}}={seq}", 3, early, "{seq}=3"},
		{"}}{{{seq}}}{{", 3, early, "}{3}{"},
		{"Nº {seq} — ü", 3, early, "Nº 3 — ü"},
		{"{seq}-{seq:3}", 3, early, "3-003"},
	} {
		if got := mustFormat(t, c.format).Apply(c.value, c.start); got != c.want {
			t.Errorf("%q.Apply(%d, %v) = %q; want %q", c.format, c.value, c.start, got, c.want)
		}
	}
	if got := (Format{}).Apply(42, early); got != "42" {
		t.Errorf("the zero Format applied to 42 = %q", got)
	}
}

// TestApplyLongest checks that the longest output of a format of MaxFormatLen
// bytes is written whole.
func TestApplyLongest(t *testing.T) {
	s := strings.Repeat("{seq}", MaxFormatLen/5) + "X"
	got := mustFormat(t, s).Apply(math.MinInt64, time.Time{})
	if want := strings.Repeat("-9223372036854775808", MaxFormatLen/5) + "X"; got != want {
		t.Errorf("Apply = %q; want %q", got, want)
	}
}

func TestParseFormatErrors(t *testing.T) {
	for _, c := range []struct{ format, msg string }{
		{"", "invalid format: empty; it needs {seq}"},
		{"INV-{yyyy}", `invalid format: "INV-{yyyy}" has no {seq}`},
		{"{{seq}}", `invalid format: "{{seq}}" has no {seq}`},
		{strings.Repeat("x", 250) + "{seq:3}", "invalid format: 257 bytes long, at most 256"},
		{"INV-{sq}", `invalid format: unknown token "{sq}" at offset 4 (known: {seq}, {seq:N}, {yyyy}, {yy}, {MM}, {dd}, {HH}, {mm}; {{ and }} for braces)`},
		{"{SEQ}", `invalid format: unknown token "{SEQ}" at offset 0 (known: {seq}, {seq:N}, {yyyy}, {yy}, {MM}, {dd}, {HH}, {mm}; {{ and }} for braces)`},
		{"{seq}{}", `invalid format: unknown token "{}" at offset 5 (known: {seq}, {seq:N}, {yyyy}, {yy}, {MM}, {dd}, {HH}, {mm}; {{ and }} for braces)`},
		{"{seq}{a{seq}", `invalid format: unknown token "{a{seq}" at offset 5 (known: {seq}, {seq:N}, {yyyy}, {yy}, {MM}, {dd}, {HH}, {mm}; {{ and }} for braces)`},
		{"{seq}{" + strings.Repeat("y", 50) + "}", `invalid format: unknown token "{yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy"… at offset 5 (known: {seq}, {seq:N}, {yyyy}, {yy}, {MM}, {dd}, {HH}, {mm}; {{ and }} for braces)`},
		{"{seq:0}", `invalid format: "{seq:0}" at offset 0: N of {seq:N} is a number from 1 to 19, without leading zeros`},
		{"x{seq:20}", `invalid format: "{seq:20}" at offset 1: N of {seq:N} is a number from 1 to 19, without leading zeros`},
		{"{seq:06}", `invalid format: "{seq:06}" at offset 0: N of {seq:N} is a number from 1 to 19, without leading zeros`},
		{"{seq:+6}", `invalid format: "{seq:+6}" at offset 0: N of {seq:N} is a number from 1 to 19, without leading zeros`},
		{"{seq:}", `invalid format: "{seq:}" at offset 0: N of {seq:N} is a number from 1 to 19, without leading zeros`},
		{"{seq: 6}", `invalid format: "{seq: 6}" at offset 0: N of {seq:N} is a number from 1 to 19, without leading zeros`},
		{"{seq", "invalid format: a { at offset 0 is not closed (write {{ for a brace)"},
		{"{seq}-{", "invalid format: a { at offset 6 is not closed (write {{ for a brace)"},
		{"{seq}}", "invalid format: a lone } at offset 5 (write }} for a brace)"},
		{"a}{seq}", "invalid format: a lone } at offset 1 (write }} for a brace)"},
		{"INV\n{seq}", "invalid format: a control character (U+000A) at offset 3"},
		{"{seq}\x00", "invalid format: a control character (U+0000) at offset 5"},
		{"{seq}\x7f", "invalid format: a control character (U+007F) at offset 5"},
		{"{seq}\u0085", "invalid format: a control character (U+0085) at offset 5"},
		{"{seq}\xff", "invalid format: not UTF-8 at offset 5"},
		{"{seq}\xc3", "invalid format: not UTF-8 at offset 5"},
	} {
		_, err := ParseFormat(c.format)
		checkErr(t, err, ErrInvalidFormat, c.msg)
	}
}

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		format string
		unit   Unit
		msg    string // "" when accepted
	}{
		{"{seq}", None, ""},
		{"{seq}", Minute, ""},
		{"{yyyy}-{seq}", Year, ""},
		{"{yy}-{seq}", Year, ""},
		{"{yyyy}{MM}-{seq}", Month, ""},
		{"{yyyy}{MM}{dd}-{seq}", Day, ""},
		{"{HH}-{seq}", Hour, ""},
		{"{mm}-{seq}", Minute, ""},
		{"{yyyy}-{seq}", Day, ""}, // coarser than the period: fine
		{"INV-{yyyy}-{seq}", None, "invalid format: {yyyy} needs a period, and the sequence has none"},
		{"{seq}{mm}", None, "invalid format: {mm} needs a period, and the sequence has none"},
		{"{yyyy}{MM}-{seq}", Year, "invalid format: {MM} is finer than the period (year): it would always read the same"},
		{"{dd}-{seq}", Month, "invalid format: {dd} is finer than the period (month): it would always read the same"},
		{"{yy}{HH}-{seq}", Day, "invalid format: {HH} is finer than the period (day): it would always read the same"},
		{"{HH}{mm}-{seq}", Hour, "invalid format: {mm} is finer than the period (hour): it would always read the same"},
	} {
		f := mustFormat(t, c.format)
		err := f.Check(Spec{Unit: c.unit})
		if c.msg == "" {
			if err != nil {
				t.Errorf("%q.Check(%v) = %v", c.format, c.unit, err)
			}
			continue
		}
		checkErr(t, err, ErrInvalidFormat, c.msg)
	}
}

func TestUsesPeriod(t *testing.T) {
	for format, want := range map[string]bool{
		"{seq}": false, "A-{seq:4}": false, "{{yyyy}}{seq}": false,
		"{yyyy}{seq}": true, "{seq}{yy}": true, "{MM}{seq}": true, "{dd}{seq}": true, "{HH}{seq}": true, "{mm}{seq}": true,
	} {
		if got := mustFormat(t, format).UsesPeriod(); got != want {
			t.Errorf("%q.UsesPeriod() = %v", format, got)
		}
	}
	if (Format{}).UsesPeriod() {
		t.Error("the zero Format uses a period")
	}
}

func TestFormatString(t *testing.T) {
	for _, s := range []string{"{seq}", "INV-{yyyy}-{seq:6}", "{{{seq}}}", "}}{{{seq:19}{yy}{MM}{dd}{HH}{mm}"} {
		if got := mustFormat(t, s).String(); got != s {
			t.Errorf("String() = %q; want %q", got, s)
		}
	}
	if got := (Format{}).String(); got != "{seq}" {
		t.Errorf("the zero Format's String() = %q", got)
	}
}

// FuzzParseFormat checks that a format is accepted only as String writes it, and
// that an accepted format parses the same again.
func FuzzParseFormat(f *testing.F) {
	for _, s := range []string{"{seq}", "INV-{yyyy}-{seq:6}", "{{{seq}}}", "}}{seq:19}{yy}{MM}{dd}{HH}{mm}", "{seq:06}", "{", "}", "Nº {seq}"} {
		f.Add(s)
	}
	start := time.Date(2026, 11, 26, 17, 5, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParseFormat(s)
		if err != nil {
			if p.parts != nil {
				t.Errorf("ParseFormat(%q) returned parts with its error", s)
			}
			return
		}
		if got := p.String(); got != s {
			t.Fatalf("ParseFormat(%q).String() = %q", s, got)
		}
		again, err := ParseFormat(p.String())
		if err != nil || !reflect.DeepEqual(again, p) {
			t.Fatalf("ParseFormat(%q) again = %+v, %v; want %+v", s, again, err, p)
		}
		if out := p.Apply(1, start); !strings.Contains(out, "1") {
			t.Fatalf("%q.Apply(1) = %q: no value", s, out)
		}
	})
}

func BenchmarkApply(b *testing.B) {
	f := mustFormat(b, "INV-{yyyy}-{MM}-{seq:6}")
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, mustZone(b, "Europe/Berlin"))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if out := f.Apply(int64(i+1), start); len(out) < len("INV-2026-11-000001") {
			b.Fatal(out)
		}
	}
}

func BenchmarkApplySeq(b *testing.B) {
	f := mustFormat(b, "{seq}")
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		_ = f.Apply(int64(i+1), time.Time{})
	}
}

func ExampleFormat_Apply() {
	zone, _ := ParseZone("Europe/Berlin")
	spec := Spec{Unit: Year, Zone: zone}
	format, _ := ParseFormat("INV-{yyyy}-{seq:6}")
	if err := format.Check(spec); err != nil {
		panic(err)
	}
	// 23:30 UTC on New Year's Eve is already 2027 in Berlin.
	start := spec.Start(time.Date(2026, 12, 31, 23, 30, 0, 0, time.UTC))
	fmt.Println(spec.Key(start), format.Apply(42, start))
	// Output: 2027 INV-2027-000042
}

// TestApplyAllocs checks that Apply, which runs on every answer, allocates only
// its result.
func TestApplyAllocs(t *testing.T) {
	f := mustFormat(t, "INV-{yyyy}-{MM}-{dd}T{HH}:{mm}-{seq:6}")
	start := time.Date(2026, 11, 26, 17, 5, 0, 0, mustZone(t, "Europe/Berlin"))
	if n := testing.AllocsPerRun(100, func() { _ = f.Apply(42, start) }); n > 1 {
		t.Errorf("Apply allocates %v times; want 1", n)
	}
}
