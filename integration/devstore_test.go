//go:build integration

package integration

import (
	"context"
	"net"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/seqd/seqd/internal/proc"
)

// The life of a dev store as the fault tests use it: start, crash, restart on the same
// address and directory with the data intact, stop.
func TestDevStoreLifecycle(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin, err := proc.Build(ctx, "./cmd/devstore")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()

	srv, err := proc.StartDevStore(ctx, bin, dir, "127.0.0.1:0")
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

	again, err := proc.StartDevStore(ctx, bin, dir, srv.Addr())
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
		t.Errorf("Stop: %v\n%s", err, again.Output())
	}
	if c, err := net.DialTimeout("tcp", again.Addr(), time.Second); err == nil {
		c.Close()
		t.Errorf("%s still accepts connections after Stop", again.Addr())
	}
}

func TestDevStoreStartFailure(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin, err := proc.Build(ctx, "./cmd/devstore")
	if err != nil {
		t.Fatal(err)
	}
	if srv, err := proc.StartDevStore(ctx, bin, t.TempDir(), "not-an-address"); err == nil {
		srv.Stop(ctx)
		t.Fatal("StartDevStore on a bad address succeeded")
	} else {
		t.Log(err)
	}
}
