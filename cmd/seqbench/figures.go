package main

import (
	"context"
)

// The loads' shapes. The machine has few cores, so concurrencies beyond a few dozen
// measure the scheduler more than seqd; figure 4's are the issue's.
const (
	oidClients      = 32 // figure 2, both servers
	oidBatchClients = 4  // figure 3: each response is 1000 ids, the load tool's parsing dominates
	oidBatch        = 1000
	seqBatchClients = 16 // figure 5
	seqBatch        = 1000
	latencyCalls    = 2000 // figure 6, each side
	latencyWarmup   = 200
)

var (
	seqConcurrencies        = []int{1, 16, 64, 256} // figure 4
	optimisticConcurrencies = []int{1, 16, 64}      // figure 7
)

// Published anchors: not measured here, quoted for scale.
const (
	leafIDsPerS = 50_000 // Meituan Leaf, per node (4 cores, TP999 1 ms)
	leafAnchor  = "Leaf ≈ 50,000/s per node (published; 4 cores)"
)

// Targets.
const (
	targetOIDRatio       = 1.0        // figure 2: seqd/bare
	targetOIDBatchPerS   = 15_000_000 // figure 3
	targetCoalesceRatio  = 20.0       // figure 4 at c = 64
	targetCoalesceC      = 64
	targetSeqValuesPerS  = 50_000 // figure 4 at c = 64
	targetLatencyRatio   = 1.2    // figure 6
	optimisticRetryLabel = "optimistic"
	// Figure 7 at c = 64: no 503 and at least this many values/s, ten times the
	// 49 values/s that c = 16 reached when callers of one process still collided.
	targetOptimisticC    = 64
	targetOptimisticPerS = 490
)

// A figure is one numbered item of the report.
type figure struct {
	id    int
	title string
	run   func(ctx context.Context, b *bench) (figureResult, error)
}

// figureResult is what a figure found: its table rows, the commands that measured it,
// and notes that explain the rows.
type figureResult struct {
	id       int
	title    string
	rows     []row
	commands []string
	notes    []string
}

// row is one line of the report's table, already formatted.
type row struct {
	figure, seqd, anchor, ratio, target, met string
}

var figures = []figure{
	{1, "objectid.New vs the driver's bson.NewObjectID", figureObjectID},
	{2, "GET /oid requests/s vs a bare Echo handler", figureOID},
	{3, "GET /oid?count=1000 ObjectIds/s", figureOIDBatch},
	{4, "/seq/{name}/next: coalescing vs one findOneAndUpdate per request", figureCoalescing},
	{5, "/seq/{name}/next?count=1000 values/s", figureSeqBatch},
	{6, "c = 1 latency of /seq/{name}/next vs a raw driver round trip", figureLatency},
	{7, "optimistic strategy: values/s, retries, contention", figureOptimistic},
}

func figureByID(id int) *figure {
	for i := range figures {
		if figures[i].id == id {
			return &figures[i]
		}
	}
	return nil
}
