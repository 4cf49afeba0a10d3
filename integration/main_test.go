//go:build integration

// The integration suite runs seqd against a real server: MONGODB_URI, a mongo:8.0
// replica set in Docker, or the dev store, whichever package backend finds first.
//
//	go test -race -tags integration -count=1 ./integration/...
package integration

import (
	"context"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seqd/seqd/counters"
	"github.com/seqd/seqd/integration/backend"
)

// be is the backend for every test in the package, chosen in TestMain.
var be *backend.Backend

func TestMain(m *testing.M) {
	os.Exit(backend.RunSuite(m, "integration", &be))
}

// testContext returns a context for one test: it ends with the test, or after a
// minute, so that a hung server fails the test instead of the whole run.
func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// observer counts what a strategy reports through counters.Observer.
type observer struct {
	retries atomic.Int64
	batches atomic.Int64
	callers atomic.Int64
	blocks  atomic.Int64 // block fetches that succeeded
	values  atomic.Int64 // the values they reserved
}

func (o *observer) Retry(string) { o.retries.Add(1) }

func (o *observer) Batch(callers int) {
	o.batches.Add(1)
	o.callers.Add(int64(callers))
}

func (o *observer) Block(values int64, _ time.Duration, err error) {
	if err == nil {
		o.blocks.Add(1)
		o.values.Add(values)
	}
}

var _ counters.Observer = (*observer)(nil)
