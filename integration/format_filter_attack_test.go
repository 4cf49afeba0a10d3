//go:build integration

package integration

import (
	"testing"

	"github.com/seqd/seqd/counters"
)

// A Set on a sequence whose format another instance set, from an instance
// that has not learned it, is not contention: no other writer got there
// first. With MaxRetries -1 ("no retries") it must still set the value.
// Observed: ErrContention ("0 duplicate key retries"), the value not set:
// the write that learns the format counted as a duplicate key retry.
func TestSetFormatLearnedWithoutRetries(t *testing.T) {
	ctx := testContext(t)
	db := be.Database(t)
	b := counters.NewCounter(db, counters.Options{})
	if err := b.SetNumbering(ctx, "f", counters.Numbering{Format: "F-{seq}"}); err != nil {
		t.Fatal(err)
	}
	a := counters.NewCounter(db, counters.Options{MaxRetries: -1})
	if err := a.Set(ctx, "f", 5, false); err != nil {
		t.Errorf("Set(f, 5) on a format set by another instance, MaxRetries -1: %v, want nil", err)
	}
	if got := mustNumbered(t, a, "f", 1, ""); got.Last != 6 || got.Formatted != "F-6" {
		t.Errorf("after Set 5: %+v, want 6, F-6", got)
	}
}
