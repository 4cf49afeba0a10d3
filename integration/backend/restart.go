//go:build integration

package backend

import (
	"context"
	"fmt"
	"sync"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/seqd/seqd/internal/proc"
)

// devStoreRun is the dev store process Open started; Restart replaces it.
type devStoreRun struct {
	bin  string
	args []string // the flags after -listen and -dir
	mu   sync.Mutex
	srv  *proc.DevStore
}

func (d *devStoreRun) current() *proc.DevStore {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.srv
}

// CanRestart reports whether Restart can restart the server: only the dev store
// that Open started itself can be (MONGODB_URI's server is not ours to stop, and
// a container's port may change on restart).
func (b *Backend) CanRestart() bool { return b.devStore != nil }

// Restart stops the dev store, with SIGKILL if crash (a crash: what its
// write-ahead log holds survives) or else SIGTERM, and starts it again on the same
// address and data directory, so that clients find it where it was. It returns once
// the new process listens. While it runs, every command fails.
func (b *Backend) Restart(ctx context.Context, crash bool) error {
	d := b.devStore
	if d == nil {
		return fmt.Errorf("backend: %s cannot be restarted", b.Kind)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	old := d.srv
	if crash {
		old.Kill()
	} else if err := old.Stop(ctx); err != nil {
		return fmt.Errorf("backend: restart: stopping the dev store: %w", err)
	}
	srv, err := proc.StartDevStore(ctx, d.bin, old.Dir(), old.Addr(), d.args...)
	if err != nil {
		return fmt.Errorf("backend: restart: %w", err)
	}
	d.srv = srv
	return nil
}

// Addr is the dev store's address (host:port), for a relay in front of it;
// "" for the other backends. Through a relay, connect with directConnection:
// hello names the store's own address, which the relay's clients must not follow.
func (b *Backend) Addr() string {
	if b.devStore == nil {
		return ""
	}
	return b.devStore.current().Addr()
}

// StepDown makes the server's primary step down for secs seconds with
// {replSetStepDown: secs, force: true}, as a failover would: writes are refused
// with NotWritablePrimary until it is primary again (after secs on the dev
// store, where it is elected again; a real replica set elects another member).
func (b *Backend) StepDown(ctx context.Context, secs int) error {
	cmd := bson.D{{Key: "replSetStepDown", Value: secs}, {Key: "force", Value: true}}
	if err := b.Client.Database("admin").RunCommand(ctx, cmd).Err(); err != nil {
		return fmt.Errorf("backend: replSetStepDown %d: %w", secs, err)
	}
	return nil
}
