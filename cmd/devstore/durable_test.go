package main

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// A write command is answered only after the front has made what it wrote
// durable (SQLite runs with synchronous=NORMAL: durable.go), once for the
// whole command; a sync that fails closes the connection instead of answering
// ok, as a store that lost the write would look; a read syncs nothing.
func TestWriteAnsweredAfterItsSync(t *testing.T) {
	tf := newTestFront()
	var mu sync.Mutex
	var synced []string
	tf.syncAfter = func(command, db string) error {
		mu.Lock()
		synced = append(synced, command+" "+db)
		mu.Unlock()
		if db == "broken" {
			return errors.New("input/output error")
		}
		return nil
	}
	c := dialFront(t, tf.serve(t, listen(t)))
	r := bufio.NewReader(c)
	answer := func(command, db string) error {
		msg := appendMsg(nil, 0, bsoncore.NewDocumentBuilder().
			AppendString(command, "counters").AppendString("$db", db).Build())
		if _, err := c.Write(msg); err != nil {
			return err
		}
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, err := readMessage(r, nil)
		return err
	}
	took := func() []string {
		mu.Lock()
		defer mu.Unlock()
		s := synced
		synced = nil
		return s
	}

	if err := answer("find", "app"); err != nil {
		t.Fatalf("find: %v", err)
	}
	if s := took(); len(s) != 0 {
		t.Errorf("a find synced %q", s)
	}
	if err := answer("update", "app"); err != nil {
		t.Fatalf("update: %v", err)
	}
	if s := took(); !slices.Equal(s, []string{"update app"}) {
		t.Errorf("by the time an update was answered, the front had synced %q, want [update app]", s)
	}
	if err := answer("insert", "broken"); err == nil {
		t.Errorf("an insert whose sync failed was answered")
	}
}

// logSync syncs the log of the database a write command named; a database
// with no log (never written, or dropped) is nothing to sync, not an error.
func TestLogSyncOfMissingAndPresentLogs(t *testing.T) {
	dir := t.TempDir()
	l := newLogSync(dir)
	if err := l.syncAfter("update", "none"); err != nil {
		t.Errorf("a database with no log: %v", err)
	}
	wal := filepath.Join(dir, "app.sqlite-wal")
	if err := os.WriteFile(wal, []byte("frames"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, command := range []string{"update", "createIndexes"} {
		if err := l.syncAfter(command, "app"); err != nil {
			t.Errorf("%s: %v", command, err)
		}
	}
	if l.known[wal] == 0 {
		t.Errorf("the directory entry of %s was never synced", wal)
	}
}
