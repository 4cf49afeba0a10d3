//go:build integration

package integration

import (
	"errors"
	"testing"

	"github.com/seqd/seqd"
	"github.com/seqd/seqd/counters"
)

// SetNumberingValue with no numbering on a cached sequence is a Set (memseq,
// which the HTTP tests trust, takes it): PUT {"period":"none","value":5} on a
// cached sequence. Observed: ErrContention after MaxRetries retries, since
// its write matches only a strict document.
func TestNumberingValueNoneOnCached(t *testing.T) {
	ctx := testContext(t)
	c := counters.NewCounter(be.Database(t), counters.Options{MaxRetries: 3})
	mustSetMode(t, c, "orders", seqd.ModeCached, 0, 0)
	if err := c.SetNumberingValue(ctx, "orders", counters.Numbering{}, 5, false); err != nil {
		t.Errorf("SetNumberingValue(none, 5) on a cached sequence: %v, want nil (as Set)", err)
	} else if err := c.Set(ctx, "orders", 4, false); !errors.Is(err, counters.ErrBackwards) {
		t.Errorf("Set 4 after SetNumberingValue(none, 5): %v, want ErrBackwards", err)
	}
	if err := c.SetNumbering(ctx, "orders", counters.Numbering{}); err != nil {
		t.Errorf("SetNumbering(none) on a cached sequence: %v, want nil", err)
	}
}
