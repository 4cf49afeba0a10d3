//go:build integration

package integration

import (
	"context"
	"net/http"

	"github.com/seqd/seqd/internal/metrics"
)

// goroutines reads go_goroutines from seqd's /metrics. hc should not keep
// connections alive, so that the scrape leaves no connection goroutine behind.
func goroutines(ctx context.Context, hc *http.Client, base string) (int, error) {
	v, err := metrics.Value(ctx, hc, base, "go_goroutines")
	return int(v), err
}
