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
)

func TestMain(m *testing.M) {
	code := m.Run()
	Clean()
	os.Exit(code)
}

func TestListenWatch(t *testing.T) {
	w := &listenWatch{addr: make(chan string, 1)}
	for _, chunk := range []string{"starting\nlisten", "ing on 127.0.0.1:4", "242\nlistening on ignored\n"} {
		if n, err := w.Write([]byte(chunk)); n != len(chunk) || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	if got := <-w.addr; got != "127.0.0.1:4242" {
		t.Errorf("address %q, want 127.0.0.1:4242", got)
	}
}

func TestTail(t *testing.T) {
	tl := &tail{max: 4}
	tl.Write([]byte("abc"))
	tl.Write([]byte("defg"))
	if got := tl.String(); got != "defg" {
		t.Errorf("tail %q, want %q", got, "defg")
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
