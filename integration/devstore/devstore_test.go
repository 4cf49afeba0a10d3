//go:build integration

package devstore

import (
	"context"
	"net"
	"os"
	"slices"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/seqd/seqd/integration/proc"
)

func TestMain(m *testing.M) {
	code := m.Run()
	proc.Clean()
	os.Exit(code)
}

func TestListeningOn(t *testing.T) {
	if addr, ok := listeningOn([]byte("listening on 127.0.0.1:4242")); !ok || addr != "127.0.0.1:4242" {
		t.Errorf("listeningOn = %q, %v", addr, ok)
	}
	if _, ok := listeningOn([]byte("2026/11/21 INFO Listening on TCP 127.0.0.1:4242...")); ok {
		t.Error("FerretDB's own log line taken for the ready line")
	}
}

func TestNestedModuleEnv(t *testing.T) {
	got := nestedModuleEnv([]string{"HOME=/root", "GOFLAGS=-buildvcs=false -modfile=/x/go.mod -mod=mod -trimpath"})
	want := []string{"HOME=/root", "GOFLAGS=-buildvcs=false -trimpath"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// The life of a server as fault tests use it: start, crash, restart on the same
// address and directory with the data intact, stop.
func TestServerLifecycle(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin, err := Build(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()

	srv, err := Start(ctx, bin, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop(ctx)
	if srv.Dir() != dir || srv.URI() != "mongodb://"+srv.Addr()+"/" {
		t.Errorf("Dir %q, URI %q", srv.Dir(), srv.URI())
	}
	client, err := mongo.Connect(options.Client().ApplyURI(srv.URI()).SetDirect(true))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Disconnect(ctx)
	coll := client.Database("lifecycle").Collection("c")
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}

	srv.Kill()
	select {
	case <-srv.Done():
	default:
		t.Fatal("Done not closed after Kill")
	}
	if err := srv.Stop(ctx); err != nil {
		t.Errorf("Stop after Kill: %v", err)
	}

	again, err := StartAt(ctx, bin, dir, srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	if again.Addr() != srv.Addr() {
		t.Errorf("restarted on %s, want %s", again.Addr(), srv.Addr())
	}
	if n, err := coll.CountDocuments(ctx, bson.D{}); err != nil || n != 1 {
		t.Errorf("after the restart: %d documents, %v; want the 1 written before the crash", n, err)
	}

	if err := again.Stop(ctx); err != nil {
		t.Errorf("Stop: %v\n%s", err, again.Stderr())
	}
	if c, err := net.DialTimeout("tcp", again.Addr(), time.Second); err == nil {
		c.Close()
		t.Errorf("%s still accepts connections after Stop", again.Addr())
	}
}

func TestStartFailure(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin, err := Build(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if srv, err := StartAt(ctx, bin, t.TempDir(), "not-an-address"); err == nil {
		srv.Stop(ctx)
		t.Fatal("StartAt on a bad address succeeded")
	} else {
		t.Log(err)
	}
}
