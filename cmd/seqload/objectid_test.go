package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestParseObjectID(t *testing.T) {
	for _, s := range []string{
		"47cc67093475061e3d95369d",
		"5a17b9d9ab102555b9c38874",
		"53102b43bf1044ed8b0ba36b",
		"50c758800000000000000000",
		"000000000000000000000000",
		"ffffffffffffffffffffffff",
	} {
		id, err := parseObjectID(s)
		if err != nil || id.String() != s {
			t.Errorf("parseObjectID(%q) = %s, %v", s, id, err)
		}
	}
	if id, _ := parseObjectID("5a17b9d9ab102555b9c38874"); id != (objectID{0x5a, 0x17, 0xb9, 0xd9, 0xab, 0x10, 0x25, 0x55, 0xb9, 0xc3, 0x88, 0x74}) {
		t.Errorf("bytes of 5a17b9d9ab102555b9c38874: %x", id[:])
	}
	for _, s := range []string{
		"",
		"47cc67093475061e3d95369",   // 23 digits
		"47cc67093475061e3d95369d0", // 25
		"47CC67093475061E3D95369D",  // upper case
		"47cc67093475061e3d95369g",
		"47cc67093475061e3d9536 d",
	} {
		if id, err := parseObjectID(s); err == nil {
			t.Errorf("parseObjectID(%q) = %s, want an error", s, id)
		}
	}
}

func TestCompareObjectIDs(t *testing.T) {
	ids := []objectID{{}, {11: 1}, {8: 1}, {7: 1}, {0: 1}, {0: 0xff, 11: 0xff}, {0: 0x80}, {3: 0x7f, 8: 0xff}}
	for _, a := range ids {
		for _, b := range ids {
			want := bytes.Compare(a[:], b[:])
			if got := compareObjectIDs(a, b); got != want {
				t.Errorf("compare(%s, %s) = %d, want %d", a, b, got, want)
			}
			if got := strings.Compare(a.String(), b.String()); got != want {
				t.Errorf("hex order of %s, %s is %d, byte order %d", a, b, got, want)
			}
		}
	}
}

func FuzzParseObjectID(f *testing.F) {
	f.Add("47cc67093475061e3d95369d")
	f.Add("47CC67093475061E3D95369D")
	f.Fuzz(func(t *testing.T, s string) {
		id, err := parseObjectID(s)
		if err == nil && id.String() != s {
			t.Errorf("parseObjectID(%q) = %s", s, id)
		}
	})
}
