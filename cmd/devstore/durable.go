package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
)

// FerretDB's SQLite runs with synchronous=NORMAL (main.go), and the front makes
// writes durable itself: SQLite's default in WAL mode, FULL, syncs the log at
// every transaction's commit, and FerretDB commits each statement of an update
// or delete command on its own, so an update command of 50 statements waited
// for 50 syncs (about 0.6 ms each on an ordinary disk: most of the time a
// statement took). With NORMAL, a commit writes its frames to the log without a
// sync; the front syncs the log once a write command's reply is back from
// FerretDB, before the reply goes to the client: every statement the command
// committed is then on disk, as with FULL. SQLite still syncs at each
// checkpoint, so the database file is as safe as before.

// durableCommands are the commands, besides writeCommands, that can change a
// database's files; the front syncs every log after them (they are rare).
var durableCommands = map[string]bool{
	"create":           true,
	"createIndexes":    true,
	"drop":             true,
	"dropDatabase":     true,
	"dropIndexes":      true,
	"renameCollection": true,
	"collMod":          true,
}

// logSync syncs the write-ahead logs of the databases in dir.
type logSync struct {
	dir string

	mu    sync.Mutex
	known map[string]uint64 // each log's inode when its directory entry was last synced
}

func newLogSync(dir string) *logSync {
	return &logSync{dir: dir, known: make(map[string]uint64)}
}

// syncAfter makes what command (on database db) wrote durable: its database's
// log for a write command, every log for the commands that change collections.
func (l *logSync) syncAfter(command, db string) error {
	switch {
	case writeCommands[command]:
		if db == "" || filepath.Base(db) != db {
			return nil // FerretDB refuses such a name: nothing was written
		}
		return l.syncLog(filepath.Join(l.dir, db+".sqlite-wal"))
	case durableCommands[command]:
		logs, err := filepath.Glob(filepath.Join(l.dir, "*.sqlite-wal"))
		if err != nil {
			return err
		}
		for _, p := range logs {
			if err := l.syncLog(p); err != nil {
				return err
			}
		}
	}
	return nil
}

// syncLog syncs the log at path, and the directory too the first time it sees
// that file (SQLite creates the log when a database is opened, and with FULL
// it syncs the directory at the log's first sync). A log that does not exist
// holds nothing to sync: FerretDB wrote nothing there, or dropped the database.
func (l *logSync) syncLog(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", filepath.Base(path), err)
	}
	info, err := f.Stat()
	if err != nil {
		return err
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.known[path] == st.Ino {
		return nil
	}
	d, err := os.Open(l.dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", l.dir, err)
	}
	l.known[path] = st.Ino
	return nil
}
