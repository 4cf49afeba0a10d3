package main

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/seqd/seqd/objectid"
)

func TestDecodeObjectIDs(t *testing.T) {
	const a, b = "65a1b2c3d4e5f60718293a4b", "65a1b2c3d4e5f60718293a4c"
	prior := []objectid.ID{{1}}
	tests := []struct {
		body string
		list bool
		want int
		ok   bool
	}{
		{`{"oid":"` + a + `"}`, false, 1, true},
		{`{"oids":["` + a + `","` + b + `"]}`, true, 2, true},
		{`{"oids":["` + a + `"]}`, true, 1, true},
		{`{"oids":["` + a + `"]}`, false, 1, false}, // list without count
		{`{"oid":"` + a + `"}`, true, 1, false},     // single with count
		{`{"oids":["` + a + `"]}`, true, 2, false},  // too few
		{`{"oids":["` + a + `","` + b + `","` + b + `"]}`, true, 2, false},
		{`{"oids":["` + a + `","65A1B2C3D4E5F60718293A4C"]}`, true, 2, false},
		{`{"oid":""}`, false, 1, false},
		{`{"oid":`, false, 1, false},
		{`{}`, false, 1, false},
	}
	for _, tt := range tests {
		got, err := decodeObjectIDs(slices.Clone(prior), []byte(tt.body), tt.list, tt.want)
		switch {
		case tt.ok && (err != nil || len(got) != 1+tt.want || got[1].String() != a):
			t.Errorf("decode(%s, list %v, %d) = %v, %v", tt.body, tt.list, tt.want, got, err)
		case !tt.ok && (err == nil || !slices.Equal(got, prior)):
			t.Errorf("decode(%s, list %v, %d) = %v, %v; want an error and the prior ids", tt.body, tt.list, tt.want, got, err)
		}
	}
}

func TestDecodeSequence(t *testing.T) {
	want := seqWant{name: "orders", count: 3, strategy: "counter"}
	tests := []struct {
		body string
		want seqWant
		ok   bool
	}{
		{`{"name":"orders","value":12,"first":10,"count":3,"strategy":"counter"}`, want, true},
		{`{"name":"orders","value":12,"first":10,"count":3,"strategy":"optimistic"}`, seqWant{name: "orders", count: 3}, true},
		{`{"name":"orders","value":12,"first":10,"count":3,"strategy":"optimistic"}`, want, false},
		{`{"name":"other","value":12,"first":10,"count":3,"strategy":"counter"}`, want, false},
		{`{"name":"orders","value":12,"first":11,"count":3,"strategy":"counter"}`, want, false},
		{`{"name":"orders","value":11,"first":10,"count":2,"strategy":"counter"}`, want, false},
		{`{"name":"orders","value":8,"first":10,"count":3,"strategy":"counter"}`, want, false},
		{`{"name":"orders","value":12,"count":3,"strategy":"counter"}`, want, false},
		{`{"name":"orders","first":10,"count":3,"strategy":"counter"}`, want, false},
		{`{"name":"orders","value":"12"}`, want, false},
	}
	for _, tt := range tests {
		first, last, err := decodeSequence([]byte(tt.body), tt.want)
		switch {
		case tt.ok && (err != nil || first != 10 || last != 12):
			t.Errorf("decode(%s) = %d..%d, %v; want 10..12", tt.body, first, last, err)
		case !tt.ok && err == nil:
			t.Errorf("decode(%s) = %d..%d, want an error", tt.body, first, last)
		}
	}
}

// seqd's own answer takes the fast path: no allocation beyond dst.
func TestDecodeObjectIDListFast(t *testing.T) {
	ids := make([]objectid.ID, 1000)
	objectid.Fill(ids)
	body := []byte(`{"oids":[`)
	for i, id := range ids {
		if i > 0 {
			body = append(body, ',')
		}
		body = append(body, '"')
		body = id.AppendHex(body)
		body = append(body, '"')
	}
	body = append(body, "]}\n"...)
	dst := make([]objectid.ID, 0, len(ids))
	allocs := testing.AllocsPerRun(10, func() {
		var err error
		if dst, err = decodeObjectIDs(dst[:0], body, true, len(ids)); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 || !slices.Equal(dst, ids) {
		t.Errorf("%v allocations, ids equal: %v", allocs, slices.Equal(dst, ids))
	}
}

// Whatever the fast path accepts, encoding/json reads the same way.
func FuzzDecodeObjectIDList(f *testing.F) {
	f.Add([]byte(`{"oids":["65a1b2c3d4e5f60718293a4b","65a1b2c3d4e5f60718293a4c"]}`+"\n"), 2)
	f.Add([]byte(`{"oids":["65a1b2c3d4e5f60718293a4b"]}`), 1)
	f.Add([]byte(`{"oids":["65A1b2c3d4e5f60718293a4b"]}`), 1)
	f.Fuzz(func(t *testing.T, body []byte, want int) {
		if want < 0 || want > 100 {
			return
		}
		fast, ok := appendOIDList(nil, body, want)
		if !ok {
			return
		}
		var resp struct{ OIDs []string }
		if err := json.Unmarshal(body, &resp); err != nil || len(resp.OIDs) != want {
			t.Fatalf("fast path took %q (%d ids), encoding/json: %v, %d ids", body, want, err, len(resp.OIDs))
		}
		for i, s := range resp.OIDs {
			if fast[i].Hex() != s {
				t.Fatalf("id %d: fast %s, encoding/json %s", i, fast[i], s)
			}
		}
	})
}
