package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// A testStore is a development store run by the test, as the program runs it.
type testStore struct {
	addr string // the front
	dir  string
}

// startStore runs the store on a free port with its data in a new directory, and
// the flags args, and stops it when tb ends.
func startStore(tb testing.TB, args ...string) *testStore {
	tb.Helper()
	dir := tb.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"-listen", "127.0.0.1:0", "-dir", dir}, args...), pw, io.Discard)
		pw.Close()
	}()
	result := sync.OnceValue(func() error { return <-done })
	line, err := bufio.NewReader(pr).ReadString('\n')
	go io.Copy(io.Discard, pr) // ends when run returns and closes pw
	tb.Cleanup(func() {
		cancel()
		if err := result(); err != nil {
			tb.Errorf("store: %v", err)
		}
	})
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if err != nil || !ok {
		tb.Fatalf("store did not start: %q, %v (%v)", line, err, result())
	}
	return &testStore{addr: addr, dir: dir}
}

// uri is the store's address, through the front.
func (s *testStore) uri() string { return "mongodb://" + s.addr + "/" }

// ferretURI is FerretDB's own socket, without the front.
func (s *testStore) ferretURI() string {
	return "mongodb://" + url.PathEscape(filepath.Join(s.dir, "ferretdb.sock")) + "/"
}

// connect returns a client of its own, as another process would have, closed
// when tb ends.
func connect(tb testing.TB, uri string, opts ...*options.ClientOptions) *mongo.Client {
	tb.Helper()
	c, err := mongo.Connect(append([]*options.ClientOptions{options.Client().ApplyURI(uri)}, opts...)...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c.Disconnect(ctx)
	})
	return c
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// increment is the counter write seqd makes: $inc on one document, upserted,
// returning the value after.
func increment(ctx context.Context, coll *mongo.Collection, name string) (int64, error) {
	var doc struct {
		Seq int64 `bson:"seq"`
	}
	err := coll.FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: name}},
		bson.D{{Key: "$inc", Value: bson.D{{Key: "seq", Value: int64(1)}}}},
		options.FindOneAndUpdate().SetUpsert(true).SetReturnDocument(options.After)).Decode(&doc)
	return doc.Seq, err
}

// Independent clients, each with its own connections, incrementing one document:
// every value from 1 to the number of increments exactly once.
func TestIndependentClientsIncrementAtomically(t *testing.T) {
	s := startStore(t)
	ctx := testContext(t)
	const clients, each = 32, 25

	// Create the document first: racing upserts are a different subject (E11000).
	coll := connect(t, s.uri()).Database("atomic").Collection("counters")
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: "n"}, {Key: "seq", Value: int64(0)}}); err != nil {
		t.Fatal(err)
	}
	values := make([][]int64, clients)
	var wg sync.WaitGroup
	for i := range clients {
		c := connect(t, s.uri()).Database("atomic").Collection("counters")
		wg.Go(func() {
			for range each {
				v, err := increment(ctx, c, "n")
				if err != nil {
					t.Error(err)
					return
				}
				values[i] = append(values[i], v)
			}
		})
	}
	wg.Wait()
	all := slices.Concat(values...)
	slices.Sort(all)
	for i, v := range all {
		if v != int64(i+1) {
			t.Fatalf("values are not exactly 1..%d: at %d found %d (%d values)", clients*each, i, v, len(all))
		}
	}
	if len(all) != clients*each {
		t.Fatalf("%d values, want %d", len(all), clients*each)
	}
}

// Racing upserts of a new document: exactly one inserts it, the others find it.
func TestRacingUpsertsNeverDuplicate(t *testing.T) {
	s := startStore(t)
	ctx := testContext(t)
	const clients = 16
	colls := make([]*mongo.Collection, clients)
	for i := range colls {
		colls[i] = connect(t, s.uri()).Database("race").Collection("counters")
	}
	for round := range 10 {
		name := fmt.Sprint("new-", round)
		var mu sync.Mutex
		var got []int64
		var wg sync.WaitGroup
		for _, c := range colls {
			wg.Go(func() {
				v, err := increment(ctx, c, name)
				if mongo.IsDuplicateKeyError(err) {
					return
				}
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				got = append(got, v)
				mu.Unlock()
			})
		}
		wg.Wait()
		// Writes run one at a time, so the first upsert inserts and the others
		// find the document: no E11000 either, and every value once.
		slices.Sort(got)
		if len(got) != clients || got[0] != 1 || got[len(got)-1] != clients || len(slices.Compact(slices.Clone(got))) != clients {
			t.Fatalf("round %d: values %v, want exactly 1..%d", round, got, clients)
		}
	}
}

// failpointFixture starts a store and returns a test context, a client of it and
// the collection the failpoint tests write. The client does not retry writes:
// on a replica set, the driver retries a write whose error is retryable as long
// as its context lasts, and these tests see what the failpoint does to one
// command.
func failpointFixture(t *testing.T) (context.Context, *mongo.Client, *mongo.Collection) {
	t.Helper()
	s := startStore(t)
	c := connect(t, s.uri(), options.Client().SetRetryWrites(false))
	return testContext(t), c, c.Database("fp").Collection("counters")
}

// failPoint configures failCommand with c and turns it off when t ends.
func failPoint(t *testing.T, c *mongo.Client, mode any, data bson.D) {
	t.Helper()
	ctx := testContext(t)
	cmd := bson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: mode}, {Key: "data", Value: data}}
	if err := c.Database("admin").RunCommand(ctx, cmd).Err(); err != nil {
		t.Fatalf("configureFailPoint: %v", err)
	}
	t.Cleanup(func() {
		off := bson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: "off"}}
		if err := c.Database("admin").RunCommand(context.Background(), off).Err(); err != nil {
			t.Errorf("turning the failpoint off: %v", err)
		}
	})
}

func failFindAndModify(extra ...bson.E) bson.D {
	return append(bson.D{{Key: "failCommands", Value: bson.A{"findAndModify"}}}, extra...)
}

// seqOf reads the counter document n directly, or -1 if there is none.
func seqOf(t *testing.T, coll *mongo.Collection, name string) int64 {
	t.Helper()
	var doc struct {
		Seq int64 `bson:"seq"`
	}
	err := coll.FindOne(testContext(t), bson.D{{Key: "_id", Value: name}}).Decode(&doc)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return -1
	}
	if err != nil {
		t.Fatal(err)
	}
	return doc.Seq
}

func serverError(t *testing.T, err error) mongo.ServerError {
	t.Helper()
	var se mongo.ServerError
	if !errors.As(err, &se) {
		t.Fatalf("want a server error, got %T: %v", err, err)
	}
	return se
}

func TestFailCommandErrorCode(t *testing.T) {
	ctx, c, coll := failpointFixture(t)
	if _, err := increment(ctx, coll, "n"); err != nil {
		t.Fatal(err)
	}
	failPoint(t, c, "alwaysOn", failFindAndModify(
		bson.E{Key: "errorCode", Value: 10107},
		bson.E{Key: "errorLabels", Value: bson.A{"RetryableWriteError"}}))

	_, err := increment(ctx, coll, "n")
	se := serverError(t, err)
	if !se.HasErrorCode(10107) || !se.HasErrorLabel("RetryableWriteError") {
		t.Errorf("got %v, want code 10107 with label RetryableWriteError", err)
	}
	if got := seqOf(t, coll, "n"); got != 1 {
		t.Errorf("seq = %d after the failed command, want 1: it must not run", got)
	}
	// Other commands are not affected.
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: "other"}, {Key: "seq", Value: int64(7)}}); err != nil {
		t.Errorf("insert while findAndModify fails: %v", err)
	}
}

func TestFailCommandCloseConnection(t *testing.T) {
	ctx, c, coll := failpointFixture(t)
	if _, err := increment(ctx, coll, "n"); err != nil {
		t.Fatal(err)
	}
	failPoint(t, c, bson.D{{Key: "times", Value: 1}}, failFindAndModify(bson.E{Key: "closeConnection", Value: true}))

	_, err := increment(ctx, coll, "n")
	if !mongo.IsNetworkError(err) {
		t.Fatalf("got %v, want a network error", err)
	}
	if got := seqOf(t, coll, "n"); got != 1 {
		t.Errorf("seq = %d after the closed connection, want 1: the command must not run", got)
	}
	// {times: 1}: the next one runs.
	if v, err := increment(ctx, coll, "n"); err != nil || v != 2 {
		t.Errorf("after the failpoint: %d, %v; want 2", v, err)
	}
}

func TestFailCommandBlockConnection(t *testing.T) {
	ctx, c, coll := failpointFixture(t)
	const block = 300 * time.Millisecond
	failPoint(t, c, bson.D{{Key: "times", Value: 2}}, failFindAndModify(
		bson.E{Key: "blockConnection", Value: true},
		bson.E{Key: "blockTimeMS", Value: block.Milliseconds()}))

	// A client that gives up before the block ends sees a timeout; its command
	// runs once its block is over, which may be before or after the next one.
	short, cancel := context.WithTimeout(ctx, block/3)
	_, err := increment(short, coll, "n")
	cancel()
	if !mongo.IsTimeout(err) {
		t.Fatalf("got %v, want a timeout", err)
	}
	// A patient client waits the block, then gets its answer: the command ran.
	start := time.Now()
	v, err := increment(ctx, coll, "n")
	if err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(start); waited < block {
		t.Errorf("answered after %v, want at least blockTimeMS %v", waited, block)
	}
	if v != 1 && v != 2 {
		t.Errorf("value %d, want 1 (or 2 if the abandoned command ran first)", v)
	}
}

func TestFailCommandWriteConcernError(t *testing.T) {
	ctx, c, coll := failpointFixture(t)
	failPoint(t, c, "alwaysOn", failFindAndModify(bson.E{Key: "writeConcernError",
		Value: bson.D{{Key: "code", Value: 64}, {Key: "errmsg", Value: "waiting for replication timed out"}}}))

	_, err := increment(ctx, coll, "n")
	var we mongo.WriteException
	if !errors.As(err, &we) || we.WriteConcernError == nil || we.WriteConcernError.Code != 64 {
		t.Fatalf("got %T %v, want a write-concern error with code 64", err, err)
	}
	// A read takes no write concern: named or not, it is not failed.
	failPoint(t, c, "alwaysOn", bson.D{{Key: "failCommands", Value: bson.A{"find"}}, {Key: "writeConcernError",
		Value: bson.D{{Key: "code", Value: 64}, {Key: "errmsg", Value: "waiting for replication timed out"}}}})
	if err := coll.FindOne(ctx, bson.D{}).Err(); err != nil {
		t.Errorf("find under a writeConcernError failpoint: %v", err)
	}
	if got := seqOf(t, coll, "n"); got != 1 {
		t.Errorf("seq = %d, want 1: with writeConcernError the command runs", got)
	}
}

func TestFailCommandAppName(t *testing.T) {
	s := startStore(t)
	ctx := testContext(t)
	admin := connect(t, s.uri())
	victim := connect(t, s.uri(), options.Client().SetAppName("victim")).Database("fp").Collection("counters")
	bystander := connect(t, s.uri(), options.Client().SetAppName("bystander")).Database("fp").Collection("counters")
	failPoint(t, admin, "alwaysOn", failFindAndModify(
		bson.E{Key: "errorCode", Value: 91}, bson.E{Key: "appName", Value: "victim"}))

	if _, err := increment(ctx, bystander, "n"); err != nil {
		t.Errorf("another application's client failed: %v", err)
	}
	_, err := increment(ctx, victim, "n")
	if se := serverError(t, err); !se.HasErrorCode(91) {
		t.Errorf("got %v, want ShutdownInProgress (91)", err)
	}
}

func TestFailCommandModes(t *testing.T) {
	ctx, c, coll := failpointFixture(t)
	outcomes := func(n int) string {
		var b strings.Builder
		for range n {
			if _, err := increment(ctx, coll, "n"); err != nil {
				b.WriteByte('x')
			} else {
				b.WriteByte('.')
			}
		}
		return b.String()
	}
	fail := failFindAndModify(bson.E{Key: "errorCode", Value: 2})
	for _, tc := range []struct {
		mode any
		want string
	}{
		{bson.D{{Key: "times", Value: 2}}, "xx..."},
		{bson.D{{Key: "skip", Value: 2}}, "..xxx"},
		{"alwaysOn", "xxxxx"},
		{"off", "....."},
	} {
		t.Run(fmt.Sprint(tc.mode), func(t *testing.T) {
			failPoint(t, c, tc.mode, fail)
			if got := outcomes(len(tc.want)); got != tc.want {
				t.Errorf("outcomes %s, want %s (x: failed)", got, tc.want)
			}
		})
	}
}

// Commands the failpoint does not name pass, and configureFailPoint is never
// failed, even when named.
func TestFailCommandLeavesOthersAlone(t *testing.T) {
	s := startStore(t)
	ctx := testContext(t)
	c := connect(t, s.uri())
	failPoint(t, c, "alwaysOn", bson.D{
		{Key: "failCommands", Value: bson.A{"findAndModify", "configureFailPoint"}},
		{Key: "closeConnection", Value: true}})

	fresh := connect(t, s.uri())
	if err := fresh.Ping(ctx, nil); err != nil {
		t.Errorf("a new client could not connect and ping: %v", err)
	}
	off := bson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: "off"}}
	if err := c.Database("admin").RunCommand(ctx, off).Err(); err != nil {
		t.Errorf("configureFailPoint failed: %v", err)
	}
	if _, err := increment(ctx, fresh.Database("fp").Collection("counters"), "n"); err != nil {
		t.Errorf("after off: %v", err)
	}
}

func TestConfigureFailPointRefusesBadInput(t *testing.T) {
	s := startStore(t)
	ctx := testContext(t)
	c := connect(t, s.uri())
	for _, tc := range []struct {
		name string
		db   string
		cmd  bson.D
	}{
		{"not on admin", "fp", bson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: "off"}}},
		{"unknown failpoint", "admin", bson.D{{Key: "configureFailPoint", Value: "hangBeforeWrite"}, {Key: "mode", Value: "alwaysOn"}}},
		{"unknown mode", "admin", bson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: "sometimes"}}},
		{"negative times", "admin", bson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: bson.D{{Key: "times", Value: -1}}}}},
		{"block without time", "admin", bson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: "alwaysOn"},
			{Key: "data", Value: bson.D{{Key: "failCommands", Value: bson.A{"find"}}, {Key: "blockConnection", Value: true}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := c.Database(tc.db).RunCommand(ctx, tc.cmd).Err()
			var ce mongo.CommandError
			if !errors.As(err, &ce) || ce.Message == "" {
				t.Errorf("got %v, want a command error that says what is wrong", err)
			}
		})
	}
}

// waitForFailPoint returns once the failpoint has fired the given number of
// times in all; configureFailPoint answers the count before it.
func TestWaitForFailPoint(t *testing.T) {
	ctx, c, coll := failpointFixture(t)
	admin := c.Database("admin")
	failPoint(t, c, bson.D{{Key: "times", Value: 3}}, failFindAndModify(bson.E{Key: "errorCode", Value: 2}))

	done := make(chan error, 1)
	go func() {
		done <- admin.RunCommand(ctx, bson.D{{Key: "waitForFailPoint", Value: "failCommand"},
			{Key: "timesEntered", Value: 3}, {Key: "maxTimeMS", Value: 30_000}}).Err()
	}()
	for range 3 {
		increment(ctx, coll, "n")
	}
	if err := <-done; err != nil {
		t.Fatalf("waitForFailPoint: %v", err)
	}
	var reply struct {
		Count int64 `bson:"count"`
	}
	if err := admin.RunCommand(ctx, bson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: "off"}}).Decode(&reply); err != nil {
		t.Fatal(err)
	}
	if reply.Count != 3 {
		t.Errorf("count = %d, want 3", reply.Count)
	}
	err := admin.RunCommand(ctx, bson.D{{Key: "waitForFailPoint", Value: "failCommand"},
		{Key: "timesEntered", Value: 4}, {Key: "maxTimeMS", Value: 50}}).Err()
	if se := serverError(t, err); !se.HasErrorCode(codeMaxTimeMSExpired) {
		t.Errorf("waiting for an entry that never comes: %v, want MaxTimeMSExpired", err)
	}
}

func TestEndSessionsAnswered(t *testing.T) {
	s := startStore(t)
	c := connect(t, s.uri())
	err := c.Database("admin").RunCommand(testContext(t), bson.D{{Key: "endSessions", Value: bson.A{}}}).Err()
	if err != nil {
		t.Errorf("endSessions: %v", err)
	}
}

// A socket left by a killed store does not stop a new one on the same directory;
// a store that still runs there does.
func TestSocketLeftBehind(t *testing.T) {
	s := startStore(t)
	ctx := testContext(t)
	err := run(ctx, []string{"-listen", "127.0.0.1:0", "-dir", s.dir}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "another development store") {
		t.Errorf("second store on a running store's directory: %v", err)
	}

	dir := t.TempDir()
	sock, err := socketPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	leaveSocket(t, sock)
	if _, err := socketPath(dir); err != nil {
		t.Errorf("a stale socket: %v", err)
	}
}

// leaveSocket leaves a socket file at path with nobody listening, as a killed
// process does.
func leaveSocket(t *testing.T, path string) {
	t.Helper()
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	l.SetUnlinkOnClose(false)
	l.Close()
}

// failCommands naming a command by an alias fails it under its other name, as on
// mongod: drivers send findAndModify, the legacy shell findandmodify.
func TestFailCommandAliases(t *testing.T) {
	ctx, c, coll := failpointFixture(t)
	failPoint(t, c, "alwaysOn", bson.D{{Key: "failCommands", Value: bson.A{"findandmodify"}}, {Key: "errorCode", Value: 2}})
	if _, err := increment(ctx, coll, "n"); err == nil {
		t.Error("findAndModify passed a failpoint on findandmodify")
	}
}

// An unacknowledged write (w: 0) gets no reply, but FerretDB answers it all the
// same: the front must drop that answer, or it would answer the next request on
// the connection. It also runs one at a time with the other writes.
func TestUnacknowledgedWriteKeepsTheConnectionInStep(t *testing.T) {
	s := startStore(t)
	ctx := testContext(t)
	c := connect(t, s.uri(), options.Client().SetMaxPoolSize(1))
	w0 := c.Database("w0").Collection("docs", options.Collection().SetWriteConcern(writeconcern.Unacknowledged()))
	if _, err := w0.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	coll := c.Database("w0").Collection("docs")
	n, err := coll.CountDocuments(ctx, bson.D{})
	if err != nil || n != 1 {
		t.Fatalf("after a w:0 insert on the same connection: %d documents, %v; want 1", n, err)
	}
	if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: 1}}).Err(); err != nil {
		t.Errorf("find: %v", err)
	}
}

// A client that sends a write and never reads its reply holds up nobody: the
// write token is given back before the reply is written to the client.
func TestClientThatDoesNotReadHoldsUpNoWriter(t *testing.T) {
	s := startStore(t)
	ctx := testContext(t)
	c := connect(t, s.uri())
	coll := c.Database("slow").Collection("docs")
	big := strings.Repeat("x", 15<<20) // far more than the sockets' buffers hold
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "big", Value: big}}); err != nil {
		t.Fatal(err)
	}

	raw, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	cmd := bsoncore.NewDocumentBuilder().
		AppendString("findAndModify", "docs").
		AppendDocument("query", bsoncore.NewDocumentBuilder().AppendInt32("_id", 1).Build()).
		AppendDocument("update", bsoncore.NewDocumentBuilder().AppendDocument("$set",
			bsoncore.NewDocumentBuilder().AppendInt32("touched", 1).Build()).Build()).
		AppendBoolean("new", true).
		AppendString("$db", "slow").
		Build()
	if _, err := raw.Write(appendMsg(nil, 0, cmd)); err != nil {
		t.Fatal(err)
	}
	// raw never reads. Another client's write must still go through. It waits
	// for the findAndModify of 15 MB at FerretDB: 7 s under -race on a quiet
	// machine, 55 s on a loaded one. The bound is not what is tested: with the
	// token held until the reply is written, the write would wait for as long as
	// raw does not read, that is for ever. So the bound is generous, and counts
	// from here, not from the start of the test.
	wait, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if _, err := coll.InsertOne(wait, bson.D{{Key: "_id", Value: 2}}); err != nil {
		t.Errorf("a write while another client does not read its reply: %v", err)
	}
}

// TestReplyDelay: with -reply-delay every answer from FerretDB comes at least
// that late, and writes still apply one at a time, each exactly once.
func TestReplyDelay(t *testing.T) {
	const delay = 100 * time.Millisecond
	s := startStore(t, "-reply-delay", delay.String())
	ctx := testContext(t)
	coll := connect(t, s.uri()).Database("far").Collection("counters")
	if _, err := increment(ctx, coll, "n"); err != nil { // connects, creates the document
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	got := make(chan int64, 8)
	for range 8 {
		wg.Go(func() {
			start := time.Now()
			v, err := increment(ctx, coll, "n")
			if err != nil {
				t.Error(err)
				return
			}
			if took := time.Since(start); took < delay {
				t.Errorf("answered in %v, want at least the reply delay %v", took, delay)
			}
			got <- v
		})
	}
	wg.Wait()
	close(got)
	var values []int64
	for v := range got {
		values = append(values, v)
	}
	slices.Sort(values)
	if want := []int64{2, 3, 4, 5, 6, 7, 8, 9}; !slices.Equal(values, want) {
		t.Errorf("values %v, want %v", values, want)
	}
}

// TestReplyDelayHoldsNoWrite: a reply held by -reply-delay does not keep the next
// writer out. Two clients send a write each and read nothing; both writes are
// applied, as FerretDB itself shows, long before either reply is due.
func TestReplyDelayHoldsNoWrite(t *testing.T) {
	s := startStore(t, "-reply-delay", "1h")
	ctx := testContext(t)
	cmd := bsoncore.NewDocumentBuilder().
		AppendString("findAndModify", "docs").
		AppendDocument("query", bsoncore.NewDocumentBuilder().AppendString("_id", "n").Build()).
		AppendDocument("update", bsoncore.NewDocumentBuilder().AppendDocument("$inc",
			bsoncore.NewDocumentBuilder().AppendInt64("seq", 1).Build()).Build()).
		AppendBoolean("upsert", true).
		AppendString("$db", "held").
		Build()
	for range 2 {
		raw, err := net.Dial("tcp", s.addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { raw.Close() })
		if _, err := raw.Write(appendMsg(nil, 0, cmd)); err != nil { // its reply is held for an hour
			t.Fatal(err)
		}
	}
	coll := connect(t, s.ferretURI()).Database("held").Collection("docs")
	seen := int64(0)
	for seen < 2 {
		var doc struct {
			Seq int64 `bson:"seq"`
		}
		if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: "n"}}).Decode(&doc); err == nil {
			seen = doc.Seq
		}
		if ctx.Err() != nil {
			t.Fatalf("seq stayed at %d with both replies held: a held reply keeps the next write out", seen)
		}
	}
}

// An update command of many statements is answered: FerretDB 1.24 kept each
// statement's query open until the command ended, so one of 100 or more waited
// for a connection of SQLite's pool forever, and the store with it.
func TestUpdateOfManyStatements(t *testing.T) {
	s := startStore(t)
	ctx, cancel := context.WithTimeout(testContext(t), 30*time.Second)
	defer cancel()
	coll := connect(t, s.uri()).Database("many").Collection("counters")
	const n = 300
	docs := make([]any, n)
	models := make([]mongo.WriteModel, n)
	for i := range n {
		name := fmt.Sprintf("n%03d", i)
		docs[i] = bson.D{{Key: "_id", Value: name}, {Key: "seq", Value: int64(0)}}
		models[i] = mongo.NewUpdateOneModel().SetFilter(bson.D{{Key: "_id", Value: name}}).
			SetUpdate(bson.D{{Key: "$inc", Value: bson.D{{Key: "seq", Value: int64(1)}}}})
	}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	res, err := coll.BulkWrite(ctx, models, options.BulkWrite().SetOrdered(false))
	if err != nil {
		t.Fatalf("one update command of %d statements: %v", n, err)
	}
	if res.ModifiedCount != n {
		t.Errorf("modified %d of %d", res.ModifiedCount, n)
	}
}
