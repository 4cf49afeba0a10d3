package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/seqd/seqd/uuidv7"
)

func TestParseUUID(t *testing.T) {
	for _, s := range []string{
		"017f22e2-79b0-7cc3-98c4-dc0c0c07398f",
		"00000000-0000-7000-8000-000000000000",
	} {
		if u, err := parseUUID(s); err != nil || u.String() != s {
			t.Errorf("parseUUID(%q) = %s, %v", s, u, err)
		}
	}
	for _, s := range []string{
		"",
		"017F22E2-79B0-7CC3-98C4-DC0C0C07398F", // upper case
		"017f22e279b07cc398c4dc0c0c07398f",     // no hyphens
		"919108f7-52d1-4320-9bac-f847db4148a8", // version 4
		"017f22e2-79b0-7cc3-d8c4-dc0c0c07398f", // variant 11
	} {
		if u, err := parseUUID(s); err == nil {
			t.Errorf("parseUUID(%q) = %s, want an error", s, u)
		}
	}
}

func TestDecodeUUIDs(t *testing.T) {
	const a, b = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f", "017f22e2-79b0-7cc3-98c4-dc0c0c073990"
	prior := []uuidv7.UUID{{1}}
	for _, tt := range []struct {
		body string
		list bool
		want int
		ok   bool
	}{
		{`{"uuid":"` + a + `"}`, false, 1, true},
		{`{"uuids":["` + a + `","` + b + `"]}` + "\n", true, 2, true}, // seqd's form: the fast path
		{`{"uuids": ["` + a + `", "` + b + `"]}`, true, 2, true},      // spaces: the slow path
		{`{"uuids":["` + a + `"]}`, false, 1, false},                  // list without count
		{`{"uuid":"` + a + `"}`, true, 1, false},                      // single with count
		{`{"uuids":["` + a + `"]}`, true, 2, false},                   // too few
		{`{"uuids":["` + a + `","` + strings.ToUpper(b) + `"]}`, true, 2, false},
		{`{"uuids":["` + a + `","919108f7-52d1-4320-9bac-f847db4148a8"]}`, true, 2, false},
		{`{"uuid":"` + a[:35] + `"}`, false, 1, false},
		{`{"oid":"5a17b9d9ab102555b9c38874"}`, false, 1, false},
		{`{}`, false, 1, false},
	} {
		got, err := decodeUUIDs(slices.Clone(prior), []byte(tt.body), tt.list, tt.want)
		switch {
		case tt.ok && (err != nil || len(got) != 1+tt.want || got[1].String() != a):
			t.Errorf("decode(%s, list %v, %d) = %v, %v", tt.body, tt.list, tt.want, got, err)
		case !tt.ok && (err == nil || !slices.Equal(got, prior)):
			t.Errorf("decode(%s, list %v, %d) = %v, %v; want an error and the prior ids", tt.body, tt.list, tt.want, got, err)
		}
	}
}

// seqd's own answer takes the fast path: no allocation beyond dst.
func TestDecodeUUIDListFast(t *testing.T) {
	ids := make([]uuidv7.UUID, 1000)
	uuidv7.Fill(ids)
	body := []byte(`{"uuids":[`)
	for i, id := range ids {
		if i > 0 {
			body = append(body, ',')
		}
		body = append(body, '"')
		body, _ = id.AppendText(body)
		body = append(body, '"')
	}
	body = append(body, "]}\n"...)
	dst := make([]uuidv7.UUID, 0, len(ids))
	if allocs := testing.AllocsPerRun(10, func() {
		var ok bool
		if dst, ok = appendUUIDList(dst[:0], body, len(ids)); !ok {
			t.Fatal("seqd's answer missed the fast path")
		}
	}); allocs != 0 {
		t.Errorf("fast path: %v allocations, want 0", allocs)
	}
	if !slices.Equal(dst, ids) {
		t.Error("fast path decoded other ids")
	}
}

// TestRunUUIDChecks gives seqload UUIDs that repeat or go backwards: both fail the run.
func TestRunUUIDChecks(t *testing.T) {
	for _, tt := range []struct {
		name string
		b    behavior
		args []string
		want string
		dup  int64 // duplicates in the summary
		ord  int64 // order violations in the summary
	}{
		// One client, so that the repeat always follows the answer it repeats: the
		// id is then received twice and is not above the one before it, both failures.
		// (With several clients it depended on which client the fourth answer went to.)
		{"repeated", repeat, []string{"-c", "1"}, "duplicate uuid 00000000-0000-7000-8000-000000100004: received 2 times", 1, 1},
		{"backwards", backwards, []string{"-c", "1"}, "order: client 0", 0, 1},
		{"swapped", swapped, []string{"-c", "3", "-count", "4"}, "uuid #", 0, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, url := newFake(t, &fake{script: func(n int) behavior {
				if n == 5 {
					return tt.b
				}
				return correct
			}})
			s, err := runJSON(t, t.Context(), append(tt.args, "-addr", url, "-n", "30", "-target", "uuid")...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("run: %v, want a failure saying %q", err, tt.want)
			}
			if s.Passed || s.Duplicates != tt.dup || s.OrderErrors != tt.ord {
				t.Errorf("summary: passed %v, %d duplicates, %d order violations; want %d and %d", s.Passed, s.Duplicates, s.OrderErrors, tt.dup, tt.ord)
			}
		})
	}
}
