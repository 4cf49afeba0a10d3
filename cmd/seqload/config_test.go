package main

import (
	"io"
	"slices"
	"testing"
	"time"
)

func TestNormalizeAddr(t *testing.T) {
	tests := []struct{ in, want string }{
		{"localhost:8080", "http://localhost:8080"},
		{" http://a:1/ ", "http://a:1"},
		{"https://a/seqd/", "https://a/seqd"},
		{"[::1]:80", "http://[::1]:80"},
	}
	for _, tt := range tests {
		if got, err := normalizeAddr(tt.in); got != tt.want || err != nil {
			t.Errorf("normalizeAddr(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	for _, in := range []string{"", "ftp://a", "http://", "http://a?x=1", "http://a#f"} {
		if got, err := normalizeAddr(in); err == nil {
			t.Errorf("normalizeAddr(%q) = %q, want an error", in, got)
		}
	}
}

func TestParseFlags(t *testing.T) {
	c, err := parseFlags([]string{"-addr", "a:1,b:2", "-addr", "c:3", "-target", "seq", "-name", "x y", "-count", "10", "-strategy", "counter", "-n", "5"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"http://a:1", "http://b:2", "http://c:3"}; !slices.Equal(c.addrs, want) {
		t.Errorf("addrs %q, want %q", c.addrs, want)
	}
	if c.duration != 0 || c.requests != 5 {
		t.Errorf("-n without -d: duration %v, requests %d; want no time bound", c.duration, c.requests)
	}
	if got, want := c.path(), "/seq/x%20y/next?count=10&strategy=counter"; got != want {
		t.Errorf("path %q, want %q", got, want)
	}

	c, err = parseFlags([]string{"-n", "5", "-d", "3s"}, io.Discard)
	if err != nil || c.duration != 3*time.Second || c.path() != "/oid" || c.addrs[0] != "http://localhost:8080" {
		t.Errorf("-n and -d: %+v, %v", c, err)
	}
}
