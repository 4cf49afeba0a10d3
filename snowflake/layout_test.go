package snowflake_test

import (
	"errors"
	"testing"
	"time"

	"github.com/seqd/seqd/snowflake"
)

// TestGoldenVectors pins the layouts: ids worked out by hand from the bit
// layout of the package comment, both ways.
func TestGoldenVectors(t *testing.T) {
	for _, tc := range []struct {
		layout snowflake.Layout
		id     snowflake.ID
		time   string
		worker int
		seq    int
	}{
		// (t0 − epoch)<<22 | 5<<12 | 7, t0 = 2026-11-26T19:30:00.123Z
		{snowflake.Twitter, 119520048439119879, "2026-11-26T19:30:00.123Z", 5, 7},
		{snowflake.Twitter, 0, "2026-01-01T00:00:00Z", 0, 0},
		{snowflake.Twitter, 1<<22 | 1<<12 | 1, "2026-01-01T00:00:00.001Z", 1, 1},
		{snowflake.Twitter, 1<<63 - 1, "2095-09-07T15:47:35.551Z", 1023, 4095},
		// (t0 − epoch)<<13 | 5<<8 | 7
		{snowflake.JS53, 233437594608903, "2026-11-26T19:30:00.123Z", 5, 7},
		{snowflake.JS53, 1<<53 - 1, "2060-11-03T19:53:47.775Z", 31, 255},
	} {
		p, err := tc.layout.Decode(tc.id)
		if err != nil {
			t.Errorf("%s: Decode(%d): %v", tc.layout, tc.id, err)
			continue
		}
		if got := p.Time().Format(time.RFC3339Nano); got != tc.time || p.Worker != tc.worker || p.Sequence != tc.seq {
			t.Errorf("%s: Decode(%d) = %s, worker %d, sequence %d; want %s, %d, %d", tc.layout, tc.id, got, p.Worker, p.Sequence, tc.time, tc.worker, tc.seq)
		}
		if p.Time().UnixMilli() != p.UnixMilli {
			t.Errorf("%s: Decode(%d): Time %v and UnixMilli %d disagree", tc.layout, tc.id, p.Time(), p.UnixMilli)
		}
	}
}

// TestDecodeOutsideLayout checks ids no layout makes are refused.
func TestDecodeOutsideLayout(t *testing.T) {
	for _, tc := range []struct {
		layout snowflake.Layout
		id     snowflake.ID
	}{
		{snowflake.Twitter, -1},
		{snowflake.JS53, -1},
		{snowflake.JS53, 1 << 53},
	} {
		if _, err := tc.layout.Decode(tc.id); !errors.Is(err, snowflake.ErrInvalidID) {
			t.Errorf("%s: Decode(%d) = %v, want ErrInvalidID", tc.layout, tc.id, err)
		}
	}
}

// TestMinMax checks the bounds of a millisecond hold every id of it, and no
// other, and clamp times outside the layout.
func TestMinMax(t *testing.T) {
	at := time.UnixMilli(t0).Add(500 * time.Microsecond)
	for _, l := range []snowflake.Layout{snowflake.Twitter, snowflake.JS53} {
		lo, hi := l.Min(at), l.Max(at)
		if p := mustDecode(t, l, lo); p.UnixMilli != t0 || p.Worker != 0 || p.Sequence != 0 {
			t.Errorf("%s: Min = %+v", l, p)
		}
		if p := mustDecode(t, l, hi); p.UnixMilli != t0 || p.Worker != l.Workers()-1 || p.Sequence != l.PerMillisecond()-1 {
			t.Errorf("%s: Max = %+v", l, p)
		}
		if l.Max(time.UnixMilli(t0-1))+1 != lo || hi+1 != l.Min(time.UnixMilli(t0+1)) {
			t.Errorf("%s: milliseconds' ranges do not meet", l)
		}
		if l.Min(time.Unix(0, 0)) != 0 || l.Max(time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)) != l.MaxID() {
			t.Errorf("%s: times outside the layout are not clamped", l)
		}
	}
}

func TestParseLayout(t *testing.T) {
	for name, want := range map[string]snowflake.Layout{"": snowflake.Twitter, "twitter": snowflake.Twitter, "js53": snowflake.JS53} {
		if l, err := snowflake.ParseLayout(name); err != nil || l != want {
			t.Errorf("ParseLayout(%q) = %v, %v", name, l, err)
		}
	}
	if _, err := snowflake.ParseLayout("Twitter"); !errors.Is(err, snowflake.ErrUnknownLayout) {
		t.Errorf("ParseLayout(Twitter) = %v, want ErrUnknownLayout", err)
	}
}

func TestParse(t *testing.T) {
	if id, err := snowflake.Parse("119520048439119879"); err != nil || id != 119520048439119879 {
		t.Errorf("Parse = %d, %v", id, err)
	}
	for _, s := range []string{"", "-1", "1e3", "0x10", "9223372036854775808", " 1"} {
		if _, err := snowflake.Parse(s); !errors.Is(err, snowflake.ErrInvalidID) {
			t.Errorf("Parse(%q) = %v, want ErrInvalidID", s, err)
		}
	}
}

// FuzzDecodeRoundTrip checks that every id a layout holds decodes to parts
// that compose back to it through Min and Max's bounds, and that String and
// Parse round-trip.
func FuzzDecodeRoundTrip(f *testing.F) {
	f.Add(int64(119520048439119879))
	f.Add(int64(0))
	f.Add(int64(1<<53 - 1))
	f.Add(int64(-1))
	f.Fuzz(func(t *testing.T, n int64) {
		id := snowflake.ID(n)
		if back, err := snowflake.Parse(id.String()); n >= 0 && (err != nil || back != id) {
			t.Fatalf("Parse(String(%d)) = %d, %v", n, back, err)
		}
		for _, l := range []snowflake.Layout{snowflake.Twitter, snowflake.JS53} {
			p, err := l.Decode(id)
			if err != nil {
				if n >= 0 && id <= l.MaxID() {
					t.Fatalf("%s: Decode(%d): %v", l, n, err)
				}
				continue
			}
			if lo, hi := l.Min(p.Time()), l.Max(p.Time()); id < lo || id > hi {
				t.Fatalf("%s: %d outside its millisecond's range [%d, %d]", l, n, lo, hi)
			}
			if p.Worker < 0 || p.Worker >= l.Workers() || p.Sequence < 0 || p.Sequence >= l.PerMillisecond() {
				t.Fatalf("%s: Decode(%d) = %+v", l, n, p)
			}
		}
	})
}
