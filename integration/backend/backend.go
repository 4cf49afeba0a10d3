//go:build integration

// Package backend chooses the MongoDB server for an integration test run and gives
// each test a database of its own on it.
//
// Open tries these in order and uses the first that works:
//
//  1. MONGODB_URI, if it is set. The server is not started or stopped.
//  2. A mongo:8.0 single-node replica set ("rs0") in Docker, through
//     testcontainers-go. This is tried only if the Docker engine answers within
//     DockerProbeTimeout; a docker CLI without an engine is skipped quickly.
//  3. The dev store: FerretDB on SQLite, built from cmd/devstore and run from a
//     temporary directory (internal/proc), as the one-node replica set "rs0",
//     connected with ?replicaSet=rs0 so that the driver retries writes as it does
//     on MongoDB. SEQD_DEVSTORE_REPLSET, if set, names another set, or none
//     (SEQD_DEVSTORE_REPLSET= ) for a standalone store, connected directly.
//
// A TestMain opens one Backend for the whole package, and tests call Database.
// Every backend must keep MongoDB's promises for single-document writes. What not
// every server offers is asked of the server: RequireFailCommand skips a test when
// the server refuses the failCommand failpoint (mongod without
// enableTestCommands), RequireReplicaSet when it is not a replica set member
// (retryable writes, transactions).
package backend

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"
	"github.com/testcontainers/testcontainers-go/modules/mongodb"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/seqd/seqd/internal/proc"
)

// Kinds of backend.
const (
	KindURI      = "MONGODB_URI"
	KindDocker   = "mongo:8.0 replica set (testcontainers)"
	KindDevStore = "dev store (FerretDB on SQLite)"
)

// DevStoreReplSet is the replica set the dev store answers as, unless
// SEQD_DEVSTORE_REPLSET says otherwise.
const DevStoreReplSet = "rs0"

// DockerProbeTimeout bounds the check for a Docker engine.
const DockerProbeTimeout = 3 * time.Second

// A Backend is the server that a test run uses.
type Backend struct {
	Kind    string        // KindURI, KindDocker or KindDevStore
	URI     string        // connection string; clients should add SetDirect(Direct)
	Direct  bool          // connect directly, not by replica set discovery
	Client  *mongo.Client // shared by the tests
	Version string        // the server's buildInfo version

	// ReplSet is the dev store's replica set name, "" for a standalone or
	// another server.
	ReplSet string

	stop     func(context.Context) error
	devStore *devStoreRun // the dev store Open started, for Restart; nil for the others
}

// Open chooses and starts a backend. logf reports the choice and why the earlier
// options were passed over; it may be nil.
func Open(ctx context.Context, logf func(format string, args ...any)) (*Backend, error) {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	if uri := os.Getenv("MONGODB_URI"); uri != "" {
		return connect(ctx, &Backend{Kind: KindURI, URI: uri})
	}

	probe := time.Now()
	if err := dockerHealthy(ctx); err != nil {
		logf("backend: no Docker (%v, after %v); using the dev store",
			firstLine(err), time.Since(probe).Round(time.Microsecond))
	} else {
		b, err := startDocker(ctx)
		if err == nil {
			return b, nil
		}
		logf("backend: Docker answers, but mongo:8.0 did not start (%v); using the dev store", err)
	}
	replSet := DevStoreReplSet
	if name, ok := os.LookupEnv("SEQD_DEVSTORE_REPLSET"); ok {
		replSet = name
	}
	return StartDevStore(ctx, replSet)
}

// Close disconnects the shared client and stops what Open started.
func (b *Backend) Close(ctx context.Context) error {
	err := b.Client.Disconnect(ctx)
	if b.stop != nil {
		err = errors.Join(err, b.stop(ctx))
	}
	return err
}

// String describes the backend in one line.
func (b *Backend) String() string {
	return fmt.Sprintf("%s, server version %s", b.Kind, b.Version)
}

// NewClient returns a client of its own, with its own connection pool, as a
// separate process would have. It is disconnected when tb ends.
func (b *Backend) NewClient(tb testing.TB) *mongo.Client {
	tb.Helper()
	return b.NewAppClient(tb, "")
}

// NewAppClient is NewClient with an application name in the handshake, which a
// failpoint's appName can aim at; "" names none.
func (b *Backend) NewAppClient(tb testing.TB, app string) *mongo.Client {
	tb.Helper()
	opts := b.clientOptions()
	if app != "" {
		opts.SetAppName(app)
	}
	return Connect(tb, opts)
}

// Connect returns a client of its own made with opts, disconnected when tb ends:
// one of the backend seen through a relay, say, which NewClient cannot give.
func Connect(tb testing.TB, opts *options.ClientOptions) *mongo.Client {
	tb.Helper()
	c, err := mongo.Connect(opts)
	if err != nil {
		tb.Fatalf("connect: %v", err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c.Disconnect(ctx)
	})
	return c
}

var databases atomic.Int64

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9_]+`)

// DatabaseName returns a database name unique to this run and recognisable as tb's.
func DatabaseName(tb testing.TB) string {
	name := fmt.Sprintf("it%d_%d_%s", os.Getpid()%100000, databases.Add(1),
		unsafeChars.ReplaceAllString(tb.Name(), "_"))
	return name[:min(len(name), 63)]
}

// Database returns a new database for tb on the shared client. It is dropped when
// tb ends. Clients from NewClient can open it by its name.
func (b *Backend) Database(tb testing.TB) *mongo.Database {
	tb.Helper()
	db := b.Client.Database(DatabaseName(tb))
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := db.Drop(ctx); err != nil {
			tb.Errorf("drop database %s: %v", db.Name(), err)
		}
	})
	return db
}

func (b *Backend) clientOptions() *options.ClientOptions {
	return options.Client().ApplyURI(b.URI).SetDirect(b.Direct)
}

// connect gives b its shared client and learns what server it is.
func connect(ctx context.Context, b *Backend) (*Backend, error) {
	client, err := mongo.Connect(b.clientOptions())
	if err != nil {
		return nil, fmt.Errorf("backend: connect to %s: %w", b.Kind, err)
	}
	var info bson.M
	if err := client.Database("admin").RunCommand(ctx, bson.D{{Key: "buildInfo", Value: 1}}).Decode(&info); err != nil {
		client.Disconnect(ctx)
		return nil, fmt.Errorf("backend: buildInfo on %s: %w", b.Kind, err)
	}
	b.Client = client
	b.Version, _ = info["version"].(string)
	return b, nil
}

// dockerHealthy asks the Docker engine for its info, within DockerProbeTimeout.
// testcontainers panics when it finds no Docker host at all, so the probe runs in
// a goroutine that recovers. The probe's context ends at the timeout, so the
// goroutine ends then too.
func dockerHealthy(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, DockerProbeTimeout)
	defer cancel()
	quiet := tclog.Default()
	tclog.SetDefault(discard{})
	defer tclog.SetDefault(quiet)

	errc := make(chan error, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				errc <- fmt.Errorf("%v", r)
			}
		}()
		p, err := testcontainers.ProviderDocker.GetProvider()
		if err != nil {
			errc <- err
			return
		}
		errc <- p.Health(ctx)
	}()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

type discard struct{}

func (discard) Printf(string, ...any) {}

// startDocker runs mongo:8.0 as a single-node replica set with the test commands
// on, so that the fault tests can configure the failCommand failpoint. The module
// appends "--replSet rs0" after these arguments; the image's entrypoint puts
// mongod in front of arguments that start with a dash.
func startDocker(ctx context.Context) (*Backend, error) {
	ctr, err := mongodb.Run(ctx, "mongo:8.0", mongodb.WithReplicaSet("rs0"),
		testcontainers.WithCmdArgs("--setParameter", "enableTestCommands=1"))
	if err != nil {
		testcontainers.TerminateContainer(ctr)
		return nil, err
	}
	uri, err := ctr.ConnectionString(ctx)
	if err != nil {
		testcontainers.TerminateContainer(ctr)
		return nil, err
	}
	b, err := connect(ctx, &Backend{Kind: KindDocker, URI: uri, Direct: true})
	if err != nil {
		testcontainers.TerminateContainer(ctr)
		return nil, err
	}
	b.stop = func(context.Context) error { return testcontainers.TerminateContainer(ctr) }
	return b, nil
}

// StartDevStore builds and starts a dev store of its own as the replica set
// replSet ("" for a standalone store), with the further flags args
// (cmd/devstore), in a temporary directory that Close removes: the third choice
// of Open, or a store with other flags beside it.
func StartDevStore(ctx context.Context, replSet string, args ...string) (*Backend, error) {
	bin, err := proc.Build(ctx, "./cmd/devstore")
	if err != nil {
		return nil, fmt.Errorf("backend: %w", err)
	}
	dir, err := os.MkdirTemp("", "seqd-devstore-data-")
	if err != nil {
		return nil, fmt.Errorf("backend: %w", err)
	}
	cleanup := func(ctx context.Context, srv *proc.DevStore) error {
		var err error
		if srv != nil {
			err = srv.Stop(ctx)
		}
		return errors.Join(err, os.RemoveAll(dir))
	}
	args = append([]string{"-repl-set", replSet}, args...)
	srv, err := proc.StartDevStore(ctx, bin, dir, "127.0.0.1:0", args...)
	if err != nil {
		cleanup(ctx, nil)
		return nil, fmt.Errorf("backend: %w", err)
	}
	be := &Backend{Kind: KindDevStore, URI: srv.URI(), Direct: true, ReplSet: replSet}
	if replSet != "" {
		be.URI, be.Direct = srv.URI()+"?replicaSet="+replSet, false
	}
	b, err := connect(ctx, be)
	if err != nil {
		cleanup(ctx, srv)
		return nil, err
	}
	b.devStore = &devStoreRun{bin: bin, srv: srv, args: args}
	b.stop = func(ctx context.Context) error { return cleanup(ctx, b.devStore.current()) }
	return b, nil
}

func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

// RunSuite is a test suite's TestMain body: it opens the backend, sets *be to
// it, runs m, then closes the backend and removes the binaries built for the
// suite. suite names the suite in what it prints, such as the line saying which
// backend it chose. It returns m's exit code, or 1 with no backend.
func RunSuite(m *testing.M, suite string, be **Backend) int {
	logf := func(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	start := time.Now()
	b, err := Open(ctx, logf)
	cancel()
	if err != nil {
		logf("%s: no backend: %v", suite, err)
		return 1
	}
	*be = b
	logf("%s: backend: %s (ready in %v)", suite, b, time.Since(start).Round(time.Millisecond))
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := b.Close(ctx); err != nil {
			logf("%s: closing the backend: %v", suite, err)
		}
	}()
	defer proc.Clean()
	return m.Run()
}
