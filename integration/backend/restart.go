//go:build integration

package backend

import (
	"context"
	"fmt"
	"sync"

	"github.com/seqd/seqd/internal/proc"
)

// devStoreRun is the dev store process Open started; Restart replaces it.
type devStoreRun struct {
	bin string
	mu  sync.Mutex
	srv *proc.DevStore
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
	srv, err := proc.StartDevStore(ctx, d.bin, old.Dir(), old.Addr(), old.Args()...)
	if err != nil {
		return fmt.Errorf("backend: restart: %w", err)
	}
	d.srv = srv
	return nil
}
