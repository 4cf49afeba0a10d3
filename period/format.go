package period

import (
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// MaxFormatLen is the longest format, in bytes.
const MaxFormatLen = 256

// maxWidth is the widest {seq:N}: an int64 has at most 19 digits.
const maxWidth = 19

// token is what a part of a Format writes.
type token uint8

const (
	literal token = iota
	seq
	year4
	year2
	month
	day
	hour
	minute
)

// tokenNames are the tokens as written between braces; seq with a width is
// "seq:N".
var tokenNames = [...]string{seq: "seq", year4: "yyyy", year2: "yy", month: "MM", day: "dd", hour: "HH", minute: "mm"}

// tokenUnits are the units whose periods a date token can tell apart.
var tokenUnits = [...]Unit{year4: Year, year2: Year, month: Month, day: Day, hour: Hour, minute: Minute}

// part is literal text or a token.
type part struct {
	token token
	width uint8  // of seq: 0 for {seq}, else N of {seq:N}
	text  string // of literal: the text, braces unescaped
}

// Format is a parsed format: literal text and tokens (see the package comment).
// The zero Format writes the value alone, as "{seq}" does.
type Format struct {
	parts []part
	unit  Unit // the finest unit of its date tokens, None without
}

// ParseFormat parses a format. Its errors name what is wrong and where, as an
// offset in bytes from 0. A format is accepted only as String writes it: a width
// has no leading zero, and a brace is written {{ or }}.
func ParseFormat(s string) (Format, error) {
	switch {
	case s == "":
		return Format{}, invalid(ErrInvalidFormat, "empty; it needs {seq}")
	case len(s) > MaxFormatLen:
		return Format{}, invalid(ErrInvalidFormat, "%d bytes long, at most %d", len(s), MaxFormatLen)
	}
	for i, r := range s {
		if r == utf8.RuneError && !strings.HasPrefix(s[i:], string(utf8.RuneError)) {
			return Format{}, invalid(ErrInvalidFormat, "not UTF-8 at offset %d", i)
		}
		if unicode.IsControl(r) {
			return Format{}, invalid(ErrInvalidFormat, "a control character (%U) at offset %d", r, i)
		}
	}
	var f Format
	var text []byte // literal text not yet in a part
	hasSeq := false
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c == '{' && strings.HasPrefix(s[i:], "{{"), c == '}' && strings.HasPrefix(s[i:], "}}"):
			text = append(text, c)
			i += 2
		case c == '}':
			return Format{}, invalid(ErrInvalidFormat, "a lone } at offset %d (write }} for a brace)", i)
		case c == '{':
			end := strings.IndexByte(s[i:], '}')
			if end < 0 {
				return Format{}, invalid(ErrInvalidFormat, "a { at offset %d is not closed (write {{ for a brace)", i)
			}
			p, err := parseToken(s[i+1:i+end], i)
			if err != nil {
				return Format{}, err
			}
			if len(text) > 0 {
				f.parts = append(f.parts, part{text: string(text)})
				text = text[:0]
			}
			f.parts = append(f.parts, p)
			if p.token == seq {
				hasSeq = true
			} else {
				f.unit = max(f.unit, tokenUnits[p.token])
			}
			i += end + 1
		default:
			text = append(text, c)
			i++
		}
	}
	if len(text) > 0 {
		f.parts = append(f.parts, part{text: string(text)})
	}
	if !hasSeq {
		return Format{}, invalid(ErrInvalidFormat, "%s has no {seq}", quote(s))
	}
	return f, nil
}

// parseToken parses the name of a token found at offset at.
func parseToken(name string, at int) (part, error) {
	for t, n := range tokenNames {
		if n != "" && name == n {
			return part{token: token(t)}, nil
		}
	}
	width, ok := strings.CutPrefix(name, "seq:")
	if !ok {
		return part{}, invalid(ErrInvalidFormat,
			"unknown token %s at offset %d (known: {seq}, {seq:N}, {yyyy}, {yy}, {MM}, {dd}, {HH}, {mm}; {{ and }} for braces)",
			quote("{"+name+"}"), at)
	}
	n, err := strconv.Atoi(width)
	if err != nil || n < 1 || n > maxWidth || strconv.Itoa(n) != width {
		return part{}, invalid(ErrInvalidFormat,
			"%s at offset %d: N of {seq:N} is a number from 1 to %d, without leading zeros",
			quote("{"+name+"}"), at, maxWidth)
	}
	return part{token: seq, width: uint8(n)}, nil
}

// String returns the format as ParseFormat parses it.
func (f Format) String() string {
	if f.parts == nil {
		return "{seq}"
	}
	var b strings.Builder
	for _, p := range f.parts {
		switch {
		case p.token == literal:
			for i := 0; i < len(p.text); i++ {
				if c := p.text[i]; c == '{' || c == '}' {
					b.WriteByte(c)
				}
				b.WriteByte(p.text[i])
			}
		case p.token == seq && p.width > 0:
			b.WriteString("{seq:" + strconv.Itoa(int(p.width)) + "}")
		default:
			b.WriteString("{" + tokenNames[p.token] + "}")
		}
	}
	return b.String()
}

// UsesPeriod reports whether f has a date token.
func (f Format) UsesPeriod() bool { return f.unit != None }

// Check reports whether f fits sequences of s: a date token needs a period, and a
// token finer than the period would always read the same ({dd} of a month is
// always 01), so both are refused.
func (f Format) Check(s Spec) error {
	if f.unit <= s.Unit {
		return nil
	}
	var name string
	for _, p := range f.parts {
		if p.token != literal && p.token != seq && tokenUnits[p.token] > s.Unit {
			name = "{" + tokenNames[p.token] + "}"
			break
		}
	}
	if s.Unit == None {
		return invalid(ErrInvalidFormat, "%s needs a period, and the sequence has none", name)
	}
	return invalid(ErrInvalidFormat, "%s is finer than the period (%s): it would always read the same", name, s.Unit)
}

// Apply returns the format applied to value and to the period that starts at
// start, given in the period's zone (as Spec.Start returns it). Values of
// sequences are at least 1; a negative value is written with its sign before the
// zeros of its padding.
func (f Format) Apply(value int64, start time.Time) string {
	if f.parts == nil {
		return strconv.FormatInt(value, 10)
	}
	var year, mon, dd, hh, mm int
	if f.unit >= Year {
		var m time.Month
		year, m, dd = start.Date()
		mon = int(m)
	}
	if f.unit >= Hour {
		hh, mm, _ = start.Clock()
	}
	// Every token writes at most 20 bytes for 4 of the format's, so the result
	// fits in buf, which stays on the stack: the string is the one allocation.
	var buf [MaxFormatLen * 5]byte
	b := buf[:0]
	for _, p := range f.parts {
		switch p.token {
		case literal:
			b = append(b, p.text...)
		case seq:
			b = appendPadded(b, value, int(p.width))
		case year4:
			b = appendPadded(b, int64(year), 4)
		case year2:
			b = appendPadded(b, int64(year%100), 2)
		case month:
			b = appendPadded(b, int64(mon), 2)
		case day:
			b = appendPadded(b, int64(dd), 2)
		case hour:
			b = appendPadded(b, int64(hh), 2)
		case minute:
			b = appendPadded(b, int64(mm), 2)
		}
	}
	return string(b)
}
