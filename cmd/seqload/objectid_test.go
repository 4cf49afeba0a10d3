package main

import (
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
