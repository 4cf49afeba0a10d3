package uuidv7

import "testing"

// TestBuildLayout checks the bit layout of the package comment on one state.
func TestBuildLayout(t *testing.T) {
	v := uint64(0x017f22e279b0)<<16 | 0xabcd
	u := build(v, 0xffffffffffffffc0) // the 58 bits used all ones, the 6 dropped zero
	if got, want := u.String(), "017f22e2-79b0-7abc-b7ff-ffffffffffff"; got != want {
		t.Errorf("build = %s, want %s", got, want)
	}
	if u.UnixMilli() != 0x017f22e279b0 || u.Counter() != 0xabcd || !u.IsV7() {
		t.Errorf("build = %s: millisecond %#x, counter %#x, v7 %v", u, u.UnixMilli(), u.Counter(), u.IsV7())
	}
	if got, want := build(v, 0).String(), "017f22e2-79b0-7abc-b400-000000000000"; got != want {
		t.Errorf("build with no random bits = %s, want %s", got, want)
	}
}
