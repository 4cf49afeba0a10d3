//go:build integration

package robustness

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/seqd/seqd/integration/backend"
)

// The stores a run can be on (-robustness.store): the suite's backend, which
// is a one-node replica set when it is the dev store; a dev store of the test's
// own started as a standalone server (with an empty -repl-set), where the driver neither
// retries writes nor learns of a new primary; or both, runs taking turns.
const (
	storeBackend    = "backend"
	storeStandalone = "standalone"
	storeBoth       = "both"
)

// storeMutant is the mutant store: a dev store that runs a retried write again
// (-mutant-rerun-retries) instead of answering from its record of the first.
const storeMutant = "store-rerun-retries"

// storeNames names the stores the tests started beside the suite's backend:
// storeStandalone or storeMutant.
var storeNames sync.Map // *backend.Backend → string

// storeName names st as -robustness.store and -robustness.mutants do.
func storeName(st *backend.Backend) string {
	if name, ok := storeNames.Load(st); ok {
		return name.(string)
	}
	return storeBackend
}

// openDevStore starts a dev store of t's own, called name, as the replica set
// replSet ("" for a standalone store) with the further flags args; it stops
// when t ends.
func openDevStore(t *testing.T, name, replSet string, args ...string) *backend.Backend {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	st, err := backend.StartDevStore(ctx, replSet, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := st.Close(ctx); err != nil {
			t.Errorf("closing the dev store %v: %v", args, err)
		}
	})
	storeNames.Store(st, name)
	say("robustness: the %s store, a dev store (replica set %q) with %q: %s", name, replSet, args, st)
	return st
}

// storeOf is run i's store under -robustness.store; standalone starts the
// standalone dev store the first time it is needed.
func storeOf(i int, standalone func() *backend.Backend) *backend.Backend {
	switch *flagStore {
	case storeStandalone:
		return standalone()
	case storeBoth:
		if i%2 == 1 {
			return standalone()
		}
	}
	return be
}

var (
	probesMu  sync.Mutex
	failProbe = map[*backend.Backend]bool{}
)

// probeFailCommand reports whether st takes the failCommand failpoint.
func probeFailCommand(t *testing.T, st *backend.Backend) bool {
	probesMu.Lock()
	defer probesMu.Unlock()
	if works, ok := failProbe[st]; ok {
		return works
	}
	works := false
	t.Run("failCommand", func(t *testing.T) {
		st.RequireFailCommand(t)
		works = true
	})
	failProbe[st] = works
	return works
}

// hello is what the store says of itself.
type hello struct {
	SetName           string `bson:"setName"`
	IsWritablePrimary bool   `bson:"isWritablePrimary"`
}

func sayHello(ctx context.Context, st *backend.Backend) (hello, error) {
	var h hello
	err := st.Client.Database("admin").RunCommand(ctx, bson.D{{Key: "hello", Value: 1}}).Decode(&h)
	return h, err
}

// isReplicaSet reports whether st is a replica set member, which can step down.
func isReplicaSet(t *testing.T, st *backend.Backend) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h, err := sayHello(ctx, st)
	if err != nil {
		t.Fatalf("hello to %s: %v", st, err)
	}
	return h.SetName != ""
}

// stepDown has the store's primary step down for secs (backend.StepDown): it
// refuses writes and interrupts those in flight, then, a one-node set, is
// elected again. A network error is taken for the stepdown's: a mongod
// before 4.2 closed every connection.
func stepDown(ctx context.Context, st *backend.Backend, secs int) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := st.StepDown(ctx, secs); err != nil && !mongo.IsNetworkError(err) {
		return err
	}
	return nil
}

// waitPrimary waits until the store is a writable primary again.
func waitPrimary(ctx context.Context, st *backend.Backend) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	err := errors.New("not a writable primary")
	for ctx.Err() == nil {
		hctx, hcancel := context.WithTimeout(ctx, 2*time.Second)
		var h hello
		h, err = sayHello(hctx, st)
		hcancel()
		if err == nil && h.IsWritablePrimary {
			return nil
		}
		if err == nil {
			err = errors.New("not a writable primary")
		}
		pause(ctx, 50*time.Millisecond)
	}
	return fmt.Errorf("the store is not primary again: %w", err)
}
