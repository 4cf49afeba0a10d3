package main

import (
	"os"
	"path/filepath"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// The store has no authentication: its directory is 0700 and its files 0600,
// those it creates and those an earlier store left world-readable.
func TestDataIsPrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(dir, "notes.txt") // left by an earlier store, or its user
	if err := os.WriteFile(old, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil { // whatever the test's umask
		t.Fatal(err)
	}
	s := startStore(t, "-dir", dir)
	ctx := testContext(t)
	if _, err := connect(t, s.uri()).Database("modes").Collection("c").InsertOne(ctx, bson.D{{Key: "x", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("data directory: %v, %v; want 0700", st.Mode(), err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := 0
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		files++
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		if perm := info.Mode().Perm(); perm != 0o600 {
			t.Errorf("%s: %v, want 0600", e.Name(), perm)
		}
	}
	if files < 2 { // notes.txt and at least modes.sqlite
		t.Errorf("%d files in the data directory, want the store's too", files)
	}
}
