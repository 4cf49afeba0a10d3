//go:build integration

package robustness

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/seqd/seqd/integration/backend"
	"github.com/seqd/seqd/integration/relay"
	"github.com/seqd/seqd/internal/proc"
)

// Timings every seqd of the cluster runs with: short leases, so that a switch out
// of cached mode drains in two seconds.
const (
	lease     = 2 * time.Second
	refresh   = 200 * time.Millisecond
	drainWait = lease + lease/50 // how long a drain lasts from when it was seen (counters: drainWait)
	instances = 3
)

const adminToken = "robustness-admin-token"

// An instance is one seqd of the cluster across its restarts: the same address,
// the same relay to the store, a new process (a new generation) each time.
type instance struct {
	idx   int
	relay *relay.Relay // nil when the store's URI cannot be relayed
	bin   string
	env   []string

	mu      sync.Mutex
	srv     *proc.Seqd // nil while down
	gen     int        // processes started so far, this one included
	addr    string     // kept across restarts, so that clients find it again
	paused  bool       // between SIGSTOP and SIGCONT: the admin goes elsewhere
	outputs []string   // the output of the processes that ended
}

// name is how reports call the instance.
func (in *instance) name() string { return fmt.Sprintf("seqd-%d", in.idx) }

// base is the instance's URL, the same across restarts.
func (in *instance) base() string { return "http://" + in.addr }

// available reports whether the instance runs and is not paused.
func (in *instance) available() bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.srv != nil && !in.paused
}

// state is the instance's generation now, and whether a process runs.
func (in *instance) state() (gen int, up bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.gen, in.srv != nil
}

// start starts a new process of the instance on its address (a free port the
// first time).
func (in *instance) start(ctx context.Context) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	addr := "127.0.0.1:0"
	if in.addr != "" {
		addr = in.addr
	}
	srv, err := proc.StartSeqd(ctx, in.bin, in.env, "--addr", addr)
	if err != nil {
		return fmt.Errorf("%s: %w", in.name(), err)
	}
	in.srv, in.addr = srv, srv.Addr()
	in.gen++
	return nil
}

// down takes the running process away and returns it, or nil if none runs; its
// output goes to the report once it has ended.
func (in *instance) down() *proc.Seqd {
	in.mu.Lock()
	defer in.mu.Unlock()
	srv := in.srv
	in.srv = nil
	return srv
}

func (in *instance) ended(srv *proc.Seqd) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.outputs = append(in.outputs, fmt.Sprintf("--- %s, generation ending %s ---\n%s", in.name(), time.Now().Format(time.RFC3339Nano), srv.Output()))
}

// kill ends the process like a crash.
func (in *instance) kill() {
	if srv := in.down(); srv != nil {
		srv.Kill()
		in.ended(srv)
	}
}

// stop ends the process with SIGTERM: it gives back what its blocks hold.
func (in *instance) stop(ctx context.Context) error {
	srv := in.down()
	if srv == nil {
		return nil
	}
	err := srv.Stop(ctx)
	in.ended(srv)
	return err
}

// signal sends sig to the running process.
func (in *instance) signal(sig syscall.Signal) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.srv == nil {
		return fmt.Errorf("%s is down", in.name())
	}
	switch sig {
	case syscall.SIGSTOP:
		in.paused = true
	case syscall.SIGCONT:
		in.paused = false
	}
	return in.srv.Signal(sig)
}

// output is what every process of the instance wrote, the running one's so far.
func (in *instance) output() string {
	in.mu.Lock()
	defer in.mu.Unlock()
	out := strings.Join(in.outputs, "\n")
	if in.srv != nil {
		out += fmt.Sprintf("\n--- %s, generation %d, running ---\n%s", in.name(), in.gen, in.srv.Output())
	}
	return out
}

// A cluster is the store and the seqd instances of one run.
type cluster struct {
	store *backend.Backend
	db    string
	insts []*instance
}

// storeURI is the store's connection string as seqd takes it: direct, when
// the store is reached directly.
func storeURI(st *backend.Backend) string {
	if !st.Direct {
		return st.URI
	}
	u, err := url.Parse(st.URI)
	if err != nil {
		return st.URI
	}
	q := u.Query()
	q.Set("directConnection", "true")
	u.RawQuery = q.Encode()
	if u.Path == "" {
		u.Path = "/"
	}
	return u.String()
}

// startCluster starts the instances on database db of st, each behind a relay
// of its own where the store's URI allows one. mutant, if not empty, runs seqd
// built with -tags seqdmutants and SEQD_MUTANT=mutant. Everything stops when tb
// ends.
func startCluster(tb testing.TB, ctx context.Context, st *backend.Backend, db, mutant string) (*cluster, error) {
	tags := ""
	if mutant != "" {
		tags = "seqdmutants"
	}
	bin, err := proc.BuildTags(ctx, "./cmd/seqd", tags)
	if err != nil {
		return nil, err
	}
	c := &cluster{store: st, db: db}
	host := ""
	if u, err := url.Parse(storeURI(st)); err == nil {
		host = u.Host
	}
	for i := range instances {
		in := &instance{idx: i, bin: bin}
		uri := storeURI(st)
		if host != "" && !strings.Contains(host, ",") {
			in.relay = relay.Start(tb, host)
			if uri, err = in.relay.Through(uri); err != nil {
				return nil, err
			}
		}
		in.env = []string{
			"MONGODB_URI=" + uri, "SEQD_DB=" + db, "SEQD_ADMIN_TOKEN=" + adminToken,
			"SEQD_BLOCK_LEASE=" + lease.String(), "SEQD_MODE_REFRESH=" + refresh.String(),
			// Instance i keeps up to i+1 coalesced writes of a name in flight.
			fmt.Sprintf("SEQD_WRITES_IN_FLIGHT=%d", i+1),
		}
		if mutant != "" {
			in.env = append(in.env, "SEQD_MUTANT="+mutant)
		}
		if err := in.start(ctx); err != nil {
			return nil, err
		}
		tb.Cleanup(func() {
			if in.relay != nil {
				in.relay.Heal()
			}
			in.signal(syscall.SIGCONT)
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			in.stop(ctx)
		})
		c.insts = append(c.insts, in)
	}
	return c, nil
}

// stopAll stops every instance with SIGTERM, so that each gives back what it holds.
func (c *cluster) stopAll(ctx context.Context) error {
	var errs []string
	for _, in := range c.insts {
		if err := in.stop(ctx); err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", in.name(), err))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("stopping the cluster: %s", strings.Join(errs, "; "))
	}
	return nil
}
