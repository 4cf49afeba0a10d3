package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "modernc.org/sqlite" // FerretDB's SQLite driver, registered as "sqlite"
)

// walLimit is the size past which a database's write-ahead log is checkpointed
// and truncated: SQLite's own automatic checkpoint comes at 1000 pages, 4 MiB.
const walLimit = 4 << 20

// checkpointEvery is how often the logs' sizes are looked at; checkpointMaxPause
// is the longest pause between tries while they fail.
const (
	checkpointEvery    = 100 * time.Millisecond
	checkpointMaxPause = 5 * time.Second
)

// errReaderInTheWay is a checkpoint that could not empty the log: a reader kept
// an older snapshot for longer than the checkpoint waits (a cursor left open).
var errReaderInTheWay = errors.New("a reader holds an older snapshot")

// checkpointLogs truncates the write-ahead log of each database in dir that has
// grown past walLimit, until ctx ends. It does so holding writes, the front's
// write token, so that no write command is at FerretDB: see the package comment
// for why SQLite's own checkpoints do not suffice.
func checkpointLogs(ctx context.Context, dir string, writes chan struct{}, log *slog.Logger) {
	pause := checkpointEvery
	t := time.NewTimer(pause)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-ctx.Done():
			return
		}
		failed := false
		for _, db := range grownDatabases(dir) {
			err := checkpointBetweenWrites(ctx, db, writes)
			switch {
			case err == nil:
				continue
			case errors.Is(err, errReaderInTheWay):
				log.Debug("write-ahead log not emptied; trying again later", "db", db, "err", err)
			case ctx.Err() == nil:
				log.Warn("write-ahead log checkpoint failed", "db", db, "err", err)
			}
			failed = true
		}
		// Each try holds up writers for as long as it waits: back off while
		// tries fail.
		if failed {
			pause = min(2*pause, checkpointMaxPause)
		} else {
			pause = checkpointEvery
		}
		t.Reset(pause)
	}
}

// grownDatabases returns the database files in dir whose logs are past walLimit.
func grownDatabases(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var dbs []string
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".sqlite-wal")
		if !ok {
			continue
		}
		if info, err := e.Info(); err != nil || info.Size() <= walLimit {
			continue
		}
		db := filepath.Join(dir, name+".sqlite")
		if _, err := os.Stat(db); err == nil { // a log without its database is no one's
			dbs = append(dbs, db)
		}
	}
	return dbs
}

// checkpointBetweenWrites takes the write token, then copies db's log into db and
// truncates it, on a connection of its own. With the token, the only readers are
// read commands, which end quickly; a reader that does not end within the busy
// timeout leaves the log as it is and the write token is given back.
func checkpointBetweenWrites(ctx context.Context, db string, writes chan struct{}) error {
	select {
	case writes <- struct{}{}:
		defer func() { <-writes }()
	case <-ctx.Done():
		return ctx.Err()
	}
	// mode=rw: a database dropped since it was listed is not created again.
	conn, err := sql.Open("sqlite", "file:"+db+"?mode=rw&_pragma=busy_timeout(100)")
	if err != nil {
		return err
	}
	defer conn.Close()
	var busy, frames, copied int
	err = conn.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &frames, &copied)
	if err != nil {
		return err
	}
	if busy != 0 {
		return fmt.Errorf("%w: %d of %d frames copied", errReaderInTheWay, copied, frames)
	}
	return nil
}
