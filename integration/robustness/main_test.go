//go:build integration

package robustness

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/seqd/seqd/integration/backend"
	"github.com/seqd/seqd/internal/proc"
)

// The defaults are make test's short run; make robustness asks for more.
var (
	flagSeed     = flag.Uint64("robustness.seed", 0, "run this seed only (0: -robustness.runs seeds drawn from the clock)")
	flagRuns     = flag.Int("robustness.runs", 2, "runs, each with a seed of its own")
	flagDuration = flag.Duration("robustness.duration", 30*time.Second, "how long each run's traffic and faults last")
	flagMutants  = flag.String("robustness.mutants", "", "TestRobustnessMutants: the mutants to run, comma-separated, or all (no-lease, no-fence, early-answer); none by default")
	flagReport   = flag.String("robustness.report", "", "where a failing run writes its report (default: a new directory under the system's temporary directory)")
)

// be is the store of every run, chosen in TestMain.
var be *backend.Backend

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	logf := func(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	start := time.Now()
	b, err := backend.Open(ctx, logf)
	cancel()
	if err != nil {
		logf("robustness: no backend: %v", err)
		return 1
	}
	be = b
	logf("robustness: backend: %s (ready in %v)", b, time.Since(start).Round(time.Millisecond))
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := b.Close(ctx); err != nil {
			logf("robustness: closing the backend: %v", err)
		}
	}()
	defer proc.Clean()
	return m.Run()
}
