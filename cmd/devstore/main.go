// Command devstore runs a MongoDB-compatible development server, so that seqd can
// be run and tested on a machine without mongod.
//
//	devstore -listen 127.0.0.1:27017 -dir ./data [-repl-set rs0]
//
// Clients connect with mongodb://ADDR/?replicaSet=rs0, or, through a relay
// that changes the address, with directConnection=true (hello names the
// store's own address, which the relay's clients must not follow).
//
// It prints "listening on ADDR" to stdout once it accepts connections and stops
// cleanly on SIGINT or SIGTERM. It lives in its own module so that the seqd module
// does not depend on FerretDB.
//
// # What it is
//
// FerretDB 1.x on SQLite (files in -dir), listening only on a Unix socket in -dir
// (ferretdb.sock), behind a front that serves -listen. The front relays each
// client connection to a FerretDB connection of its own, reading every message
// with the MongoDB Go driver's wire-protocol packages. It changes these things:
//
//   - Write commands (insert, update, delete, findAndModify) run one at a time, from
//     the moment the front sends one to FerretDB until its reply is back.
//     FerretDB runs each as a read followed by a write, so two clients could both
//     read seq = 5 and both write 6; one at a time, they cannot. Commands that
//     change collections or indexes (create, createIndexes, drop, dropDatabase,
//     dropIndexes, renameCollection, collMod) wait for the write command that
//     runs too, and it for them: each would hold what the other waits for (below).
//     Every other command passes straight through, concurrently.
//   - An update command's statements run in one SQLite transaction
//     (ferretdb/README.md lists the change), not one each: an update of 50
//     statements was 50 commits, each writing the log. Its answers and the
//     documents it stores are FerretDB's, errors included (see What it does not
//     do). What changes is what a reader beside it sees: none of its statements,
//     then all of them, never some. The transaction holds SQLite's write lock from
//     its start, and reads FerretDB's catalog of collections at each statement; a
//     command that changes collections holds that catalog while it waits for the
//     lock, hence the wait above.
//   - It speaks mongod's failCommand failpoint (configureFailPoint and
//     waitForFailPoint on the admin database), as mongod does with
//     enableTestCommands=1, so that tests can make commands fail the way a replica
//     set makes them fail. See failCommand for what each field does.
//   - It makes writes durable itself: SQLite runs with synchronous=NORMAL, so
//     FerretDB's commits write the log without syncing it, and the front syncs
//     the database's log once a write command's reply is back from FerretDB,
//     before the client gets it (durable.go). FerretDB commits each statement
//     of a delete on its own (and did so for an update), so with SQLite's
//     default (FULL) a delete of 50 statements waited for 50 syncs; now it
//     waits for one.
//   - It answers endSessions itself: FerretDB keeps no server sessions.
//   - It answers as the one member of a replica set (-repl-set, "rs0" by
//     default; -repl-set "" for a standalone server), so that drivers find a
//     replica set with a primary and retry writes as they do on MongoDB
//     (replSet in replset.go): hello with setName, hosts, topologyVersion and
//     awaitable hello; retryable writes (lsid and txnNumber) run once and a
//     retry gets the first execution's reply (retryTable in retry.go);
//     RetryableWriteError on the retryable errors of retryable writes, and
//     topologyVersion on not-primary errors (operation.go);
//     {replSetStepDown: secs, force: true} on admin makes it a secondary for
//     secs, refusing writes and linearizable or majority reads with
//     NotWritablePrimary and interrupting those the front holds with
//     InterruptedDueToReplStateChange, then elects it again. A command's
//     maxTimeMS bounds the waits the front adds (the write token, a retry
//     waiting for the first execution): MaxTimeMSExpired.
//     Standalone, it refuses txnNumber and read concern linearizable as a
//     standalone mongod does.
//
// A client costs the front what it has sent: a message's buffer grows as its
// bytes arrive (up to mongod's 48 MB), and FerretDB is dialed at a connection's
// first whole message. A message begun must arrive whole within 30 seconds, a
// connection with no message for 10 minutes is closed, and past 1024 client
// connections a new one is closed at once. Drivers keep idle pooled connections
// forever unless told otherwise: set maxIdleTimeMS below 10 minutes, or the first
// command after a longer pause fails with a network error.
//
// # Its files
//
// Each database is a file in -dir, DB.sqlite, with SQLite's write-ahead log
// (DB.sqlite-wal) and the log's index (DB.sqlite-shm) next to it. SQLite's own
// checkpoint, run by each commit once the log holds 1000 pages (4 MiB), copies
// the log into the database up to the oldest snapshot a reader still holds, and
// the log starts over only once all of it has been copied. FerretDB's
// findAndModify keeps its read of the document open while it writes it (an
// update did too, until its statements ran in one transaction), so every such
// write is committed with a reader on the snapshot before it: the checkpoint
// never catches up, and the log grows by every write (8 KB a counter
// increment) until the store stops cleanly. No pragma helps:
// wal_autocheckpoint only says when that same checkpoint runs, and
// journal_size_limit applies only when the log starts over. So the store
// checkpoints itself: every 100 ms, a log past 4 MiB is checkpointed with
// TRUNCATE, which waits for the readers and empties the log, on a connection of
// the store's own, holding the front's write token so that no write command,
// and so none of those readers, is at FerretDB (without the token, the
// checkpoint and a findAndModify would wait for each other). A read command's
// reader kept longer than 100 ms (a cursor left open) makes it give up and try
// again, less often while it stays.
//
// # What it guarantees
//
// Single-document writes are atomic with respect to each other, as on mongod: a
// findAndModify's read and write see no other write in between, an update with
// a filter on the document's current value is a compare-and-set, and a unique
// index (_id's included) refuses duplicates with E11000. Acknowledged writes are
// durable in SQLite when their reply is sent.
//
// # What it does not do
//
// It is one node: no secondaries, so no replication, no rollback of writes a
// majority never had, no loss of a majority (a linearizable read never waits for
// one), and no majority write concern to wait for (w: "majority" is accepted and
// means the one node). A stepdown makes no other node primary: the same node is
// elected again after the seconds asked. No multi-document transactions
// (startTransaction or autocommit is refused with IllegalOperation) and no
// change streams. A retryable write that wrote some of its statements beside
// writeErrors is recorded whole: its retry gets the same reply, where mongod
// would run the failed statements again (they fail again unless their
// documents changed). Only the failCommand failpoint exists, in the modes alwaysOn, off,
// {times: n} and {skip: n}, and it does not fail the OP_QUERY handshake that opens
// a connection. Use it for development and tests, and MongoDB in production.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "devstore:", err)
		os.Exit(1)
	}
}

// run serves until ctx ends.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("devstore", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:27017", "TCP address to serve MongoDB clients on (port 0 picks a free port)")
	dir := fs.String("dir", "data", "directory for the SQLite files and FerretDB's socket")
	replyDelay := fs.Duration("reply-delay", 0, "hold each of FerretDB's replies this long before it goes to the client, with no write held meanwhile: a store at a distance, for measurements")
	replSetName := fs.String("repl-set", "rs0", "replica set name: the store answers as the one member of this set (connect with ?replicaSet=NAME); '' runs a standalone server")
	rerunRetries := fs.Bool("mutant-rerun-retries", false, "BREAKS THE STORE, for tests that must catch it: run a retried write again instead of answering the first execution's reply")
	var level slog.Level
	fs.Usage = func() { // -mutant-* flags are for test suites, not for users
		fmt.Fprintln(fs.Output(), "Usage of devstore:")
		fs.VisitAll(func(fl *flag.Flag) {
			if !strings.HasPrefix(fl.Name, "mutant-") {
				name, usage := flag.UnquoteUsage(fl)
				fmt.Fprintf(fs.Output(), "  -%s %s\n    \t%s (default %q)\n", fl.Name, name, usage, fl.DefValue)
			}
		})
	}
	fs.TextVar(&level, "log-level", slog.LevelWarn, "log level: debug, info, warn or error (on stderr)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	// FerretDB allocates several times a document's size for each statement it
	// runs; collecting at 4x the live heap rather than 2x took 12% less CPU in
	// a clean stop's give-backs (a few MB of heap more). GOGC still wins.
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(400)
	}

	abs, err := filepath.Abs(*dir)
	if err != nil {
		return err
	}
	// The store has no authentication, so its files are its owner's only: the
	// directory 0700 and every file 0600, those FerretDB and SQLite create (the
	// umask) and those a store before this one left.
	syscall.Umask(0o077)
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return err
	}
	if err := privateFiles(abs); err != nil {
		return err
	}
	sock, err := socketPath(abs)
	if err != nil {
		return err
	}
	f, err := ferretdb.New(&ferretdb.Config{
		Listener: ferretdb.ListenerConfig{Unix: sock},
		Logger:   log,
		Handler:  "sqlite",
		// The front syncs the logs after each write command (durable.go).
		// A transaction takes the write lock as it begins (BEGIN IMMEDIATE):
		// an update command's reads and writes share one (InTransaction in
		// ferretdb/internal/backends/sqlite/transaction.go), and its first
		// write must not find another connection's write after its reads.
		SQLiteURL: "file:" + abs + "/?_pragma=synchronous(normal)&_txlock=immediate",
	})
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		// FerretDB is listening already; Run with a done context closes it.
		done, cancel := context.WithCancel(ctx)
		cancel()
		f.Run(done)
		return err
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ferretDone := make(chan struct{})
	go func() {
		defer close(ferretDone)
		defer cancel() // FerretDB stopping stops the front too
		if err := f.Run(ctx); err != nil && ctx.Err() == nil {
			log.Error("FerretDB stopped", "err", err)
		}
	}()
	var d net.Dialer
	fr := newFront(func(ctx context.Context) (net.Conn, error) { return d.DialContext(ctx, "unix", sock) }, log)
	fr.replyDelay = *replyDelay
	fr.syncAfter = newLogSync(abs).syncAfter
	fr.retries.rerun = *rerunRetries
	if *replSetName != "" {
		fr.rs = newReplSet(*replSetName, l.Addr().String())
		defer fr.rs.stop()
	}
	checkpointsDone := make(chan struct{})
	go func() {
		defer close(checkpointsDone)
		checkpointLogs(ctx, abs, fr.writes, log)
	}()
	fmt.Fprintf(stdout, "listening on %s\n", l.Addr())
	err = fr.serve(ctx, l)
	cancel()
	<-checkpointsDone
	<-ferretDone
	return err
}

// privateFiles makes dir 0700 and the regular files in it 0600.
func privateFiles(dir string) error {
	if err := os.Chmod(dir, 0o700); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Type().IsRegular() {
			if err := os.Chmod(filepath.Join(dir, e.Name()), 0o600); err != nil {
				return err
			}
		}
	}
	return nil
}

// socketPath returns where FerretDB listens: ferretdb.sock in dir. A socket left
// there by a store that was killed is removed; one that answers belongs to a store
// that still runs on dir, and two must not share one SQLite directory.
func socketPath(dir string) (string, error) {
	sock := filepath.Join(dir, "ferretdb.sock")
	if len(sock) >= 104 { // sun_path holds 108 bytes on Linux, 104 on the BSDs
		return "", fmt.Errorf("the socket path %s is too long for a Unix socket; use a shorter -dir", sock)
	}
	if _, err := os.Stat(sock); err != nil {
		return sock, nil
	}
	if c, err := net.DialTimeout("unix", sock, time.Second); err == nil {
		c.Close()
		return "", fmt.Errorf("another development store is running on %s", dir)
	}
	return sock, os.Remove(sock)
}
