//go:build integration

package robustness

import (
	"flag"
	"os"
	"testing"
	"time"

	"github.com/seqd/seqd/integration/backend"
)

// The defaults are make test's short run; make robustness asks for more.
var (
	flagSeed     = flag.Uint64("robustness.seed", 0, "run this seed only (0: -robustness.runs seeds drawn from the clock)")
	flagRuns     = flag.Int("robustness.runs", 2, "runs, each with a seed of its own")
	flagDuration = flag.Duration("robustness.duration", 30*time.Second, "how long each run's traffic and faults last")
	flagMutants  = flag.String("robustness.mutants", "", "TestRobustnessMutants: the mutants to run, comma-separated, or all (no-lease, no-fence, early-answer, store-rerun-retries); none by default")
	flagStore    = flag.String("robustness.store", storeBackend, "TestRobustness's store: backend (the suite's: a one-node replica set when it is the dev store), standalone (a dev store of its own with -repl-set ''), or both (runs take turns, the first on the backend)")
	flagReport   = flag.String("robustness.report", "", "where a failing run writes its report (default: a new directory under the system's temporary directory)")
)

// be is the store of every run, chosen in TestMain.
var be *backend.Backend

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(backend.RunSuite(m, "robustness", &be))
}
