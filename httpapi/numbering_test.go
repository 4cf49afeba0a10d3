package httpapi_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seqd/seqd"
)

type (
	numberedNext struct {
		Name           string `json:"name"`
		Value          int64  `json:"value"`
		First          int64  `json:"first"`
		Count          int64  `json:"count"`
		Strategy       string `json:"strategy"`
		Period         string `json:"period"`
		Formatted      string `json:"formatted"`
		FormattedFirst string `json:"formatted_first"`
	}
	numberedSequence struct {
		Name          string `json:"name"`
		Value         int64  `json:"value"`
		Mode          string `json:"mode"`
		Period        string `json:"period"`
		TimeZone      string `json:"time_zone"`
		Format        string `json:"format"`
		CurrentPeriod string `json:"current_period"`
	}
	periodValue struct {
		Name   string `json:"name"`
		Period string `json:"period"`
		Value  int64  `json:"value"`
	}
)

// TestNumberedSequence: PUT a period, a zone and a format; /next answers the
// period and the values formatted; a new month starts at 1; GET shows the
// numbering and, with ?period, a past month's last value.
func TestNumberedSequence(t *testing.T) {
	s := newServer(t, withAdmin(adminToken))
	now := time.Date(2026, 11, 30, 22, 59, 0, 0, time.UTC) // 23:59 in Berlin
	s.counter.SetClock(func() time.Time { return now })

	want := numberedSequence{Name: "inv", Mode: "strict", Period: "month", TimeZone: "Europe/Berlin", Format: `INV-{yyyy}{MM}-{seq:4} "x"`}
	if got := decode[numberedSequence](t, s.put(t, "/seq/inv", `{"period":"month","time_zone":"Europe/Berlin","format":"INV-{yyyy}{MM}-{seq:4} \"x\""}`), http.StatusOK); got != want {
		t.Errorf("PUT answered %+v, want %+v", got, want)
	}
	if got := callsOf(s.counter); !slices.Equal(got, []string{"setNumbering inv month Europe/Berlin", "current inv"}) {
		t.Errorf("calls %q", got)
	}

	got := decode[numberedNext](t, s.get(t, "/seq/inv/next"), http.StatusOK)
	if w := (numberedNext{Name: "inv", Value: 1, First: 1, Count: 1, Strategy: "counter", Period: "2026-11", Formatted: `INV-202611-0001 "x"`}); got != w {
		t.Errorf("next = %+v, want %+v", got, w)
	}
	got = decode[numberedNext](t, s.get(t, "/seq/inv/next?count=3"), http.StatusOK)
	if got.Period != "2026-11" || got.FormattedFirst != `INV-202611-0002 "x"` || got.Formatted != `INV-202611-0004 "x"` {
		t.Errorf("next?count=3 = %+v", got)
	}
	now = now.Add(time.Minute) // December in Berlin
	rec := s.get(t, "/seq/inv/next?int64=string")
	if body := rec.Body.String(); body != `{"name":"inv","value":"1","first":"1","count":"1","strategy":"counter","period":"2026-12","formatted":"INV-202612-0001 \"x\""}`+"\n" {
		t.Errorf("next?int64=string = %s", body)
	}
	got = decode[numberedNext](t, s.get(t, "/seq/inv/next"), http.StatusOK)
	if got.Value != 2 || got.Period != "2026-12" || got.Formatted != `INV-202612-0002 "x"` || got.FormattedFirst != "" {
		t.Errorf("next in December = %+v", got)
	}

	want.Value, want.CurrentPeriod = 2, "2026-12"
	if got := decode[numberedSequence](t, s.get(t, "/seq/inv"), http.StatusOK); got != want {
		t.Errorf("GET = %+v, want %+v", got, want)
	}
	if got := decode[periodValue](t, s.get(t, "/seq/inv?period=2026-11"), http.StatusOK); got != (periodValue{"inv", "2026-11", 4}) {
		t.Errorf("GET ?period=2026-11 = %+v", got)
	}
	if body := s.get(t, "/seq/inv?period=2026-12&int64=string").Body.String(); body != `{"name":"inv","period":"2026-12","value":"2"}`+"\n" {
		t.Errorf("GET ?period=2026-12&int64=string = %s", body)
	}
	wantError(t, s.get(t, "/seq/inv?period=2026-10"), http.StatusNotFound, "sequence_not_found")
	wantError(t, s.get(t, "/seq/inv?period="+strings.Repeat("2", 17)), http.StatusBadRequest, "invalid_period")
	wantError(t, s.get(t, "/seq/inv?period=2026-11&strategy=optimistic"), http.StatusBadRequest, "invalid_period")
	wantError(t, s.get(t, "/seq/plain?period=2026-11"), http.StatusNotFound, "sequence_not_found")

	// Numbering off once values of a period were handed out: refused, as the
	// Counter refuses it (a period would be numbered from 1 again).
	wantError(t, s.put(t, "/seq/inv", `{"mode":"cached","period":"none"}`), http.StatusBadRequest, "invalid_mode")
	// Numbering off, then cached, on a sequence that has handed out no value
	// of a period: the numbering goes first.
	s.put(t, "/seq/inv2", `{"period":"month"}`)
	if got := decode[numberedSequence](t, s.put(t, "/seq/inv2", `{"mode":"cached","period":"none"}`), http.StatusOK); got.Mode != "cached" || got.Period != "" {
		t.Errorf("PUT cached without a period = %+v", got)
	}
}

// TestNumberingWithValue: a value PUT with a period is the current period's,
// set with the numbering in one call: an invoice numbering moved to seqd mid-year
// continues where it was.
func TestNumberingWithValue(t *testing.T) {
	s := newServer(t, withAdmin(adminToken))
	s.counter.SetClock(func() time.Time { return time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC) })
	if got := decode[numberedSequence](t, s.put(t, "/seq/inv", `{"value":4211,"period":"year","format":"INV-{yyyy}-{seq:6}"}`), http.StatusOK); got.Value != 4211 {
		t.Errorf("PUT answered %+v, want value 4211", got)
	}
	if got := callsOf(s.counter); !slices.Equal(got, []string{"setNumberingValue inv year  4211 false", "current inv"}) {
		t.Errorf("calls %q, want the numbering and the value in one call", got)
	}
	if got := decode[numberedNext](t, s.get(t, "/seq/inv/next"), http.StatusOK); got.Value != 4212 || got.Formatted != "INV-2026-004212" {
		t.Errorf("next = %+v, want INV-2026-004212", got)
	}
}

// TestNumberingRefusedChangesNothing: a PUT whose numbering is refused
// changes nothing, the value it carries included. Observed: the forced value
// 1 was set before the numbering was refused with 400, and the next value was
// 2 again.
func TestNumberingRefusedChangesNothing(t *testing.T) {
	s := yearlyAt3(t, "INV-{yyyy}-{seq:6}")
	// The period left out is none: refused once values of 2026 were handed out.
	wantError(t, s.put(t, "/seq/inv?force=true", `{"value":1,"format":"X-{seq}"}`), http.StatusBadRequest, "invalid_mode")
	if got := decode[numberedNext](t, s.get(t, "/seq/inv/next"), http.StatusOK); got.Value != 4 || got.Formatted != "INV-2026-000004" {
		t.Errorf("next after the refused PUT = %+v, want INV-2026-000004", got)
	}
}

// TestNumberingRefusedValueChangesNothing: a PUT whose value is refused (it
// would move the period's value back) changes nothing, its numbering
// included. Observed: 409 backwards, and the next value formatted with the
// new format.
func TestNumberingRefusedValueChangesNothing(t *testing.T) {
	s := yearlyAt3(t, "A-{yyyy}-{seq}")
	rec := s.put(t, "/seq/inv", `{"value":1,"period":"year","format":"B-{yyyy}-{seq}"}`)
	if rec.Code < 400 || rec.Code >= 500 {
		t.Fatalf("PUT value 1 at 3: %d %s, want a 4xx", rec.Code, rec.Body)
	}
	if got := decode[numberedNext](t, s.get(t, "/seq/inv/next"), http.StatusOK); got.Formatted != "A-2026-4" {
		t.Errorf("next after the refused PUT = %+v, want A-2026-4", got)
	}
}

// TestNumberingRefused: every bad period, zone and format is a 400 that names
// what is wrong, and nothing reaches the sequencer.
func TestNumberingRefused(t *testing.T) {
	for _, tc := range []struct {
		body, code, message string
	}{
		{`{"period":"week"}`, "invalid_period", `invalid period: "week", want none, year, month, day, hour or minute`},
		{`{"period":1}`, "invalid_period", "period must be a string, got 1"},
		{`{"period":null}`, "invalid_period", "period must be a string, got null"},
		{`{"period":"day","time_zone":"Mars/Olympus"}`, "invalid_time_zone", `invalid time zone: "Mars/Olympus" is not an IANA zone name such as Europe/Berlin`},
		{`{"time_zone":"Europe/Berlin"}`, "invalid_time_zone", `time_zone goes with a period: add "period"`},
		{`{"format":"{seq"}`, "invalid_format", ""},
		{`{"format":"no value"}`, "invalid_format", ""},
		{`{"format":"{yyyy}-{seq}"}`, "invalid_format", "invalid format: {yyyy} needs a period, and the sequence has none"},
		{`{"period":"month","format":"{dd}-{seq}"}`, "invalid_format", "invalid format: {dd} is finer than the period (month): it would always read the same"},
		{`{"format":"` + strings.Repeat("x", 257) + `{seq}"}`, "invalid_format", ""},
		{`{"mode":"cached","period":"year"}`, "invalid_mode", ""},
		{`{"mode":"cached","format":"{seq}"}`, "invalid_mode", ""},
	} {
		t.Run(tc.body[:min(len(tc.body), 40)], func(t *testing.T) {
			s := newServer(t, withAdmin(adminToken))
			e := wantError(t, s.put(t, "/seq/orders", tc.body), http.StatusBadRequest, tc.code)
			if tc.message != "" && e.Message != tc.message {
				t.Errorf("message %q, want %q", e.Message, tc.message)
			}
			if calls := s.counter.Calls(); len(calls) != 0 {
				t.Errorf("a refused body reached the sequencer: %+v", calls)
			}
		})
	}

	s := newServer(t, withAdmin(adminToken))
	e := wantError(t, s.put(t, "/seq/orders?strategy=optimistic", `{"period":"year"}`), http.StatusBadRequest, "invalid_mode")
	if !strings.Contains(e.Message, "optimistic strategy has no periods") {
		t.Errorf("optimistic: %q", e.Message)
	}
	// A cached sequence refuses a numbering (the sequencer says so).
	s.counter.StoreSequence(seqd.Sequence{Name: "c", Value: 5, Mode: seqd.ModeCached})
	wantError(t, s.put(t, "/seq/c", `{"period":"year"}`), http.StatusBadRequest, "invalid_mode")
}

// TestNumberingValueWithCachedChangesNothing: PUT {"value":…,"mode":"cached"}
// on a numbered sequence is refused (a numbered sequence is strict) and
// changes nothing: its value goes with the mode, both or neither, as a value
// goes with a numbering. Observed: 400 invalid_mode, and the value was set
// first: the next value is INV-2026-000101.
func TestNumberingValueWithCachedChangesNothing(t *testing.T) {
	s := yearlyAt3(t, "INV-{yyyy}-{seq:6}")
	wantError(t, s.put(t, "/seq/inv", `{"value":100,"mode":"cached"}`), http.StatusBadRequest, "invalid_mode")
	if got := decode[numberedNext](t, s.get(t, "/seq/inv/next"), http.StatusOK); got.Formatted != "INV-2026-000004" {
		t.Errorf("next after the refused PUT = %+v, want INV-2026-000004", got)
	}
}

// yearlyAt3 returns a server whose sequence "inv" is yearly, formatted as
// format, at 3 of 2026 (three values taken on 26 November 2026).
func yearlyAt3(t *testing.T, format string) *server {
	t.Helper()
	s := newServer(t, withAdmin(adminToken))
	s.counter.SetClock(func() time.Time { return time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC) })
	s.put(t, "/seq/inv", `{"period":"year","format":"`+format+`"}`)
	for range 3 {
		s.get(t, "/seq/inv/next")
	}
	return s
}
