//go:build integration

package integration

import (
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/seqd/seqd/snowflake"
)

// TestSnowflakeCeilingTracksTheClock: the lastMs a renewal records is "its
// clock's, plus the lease, plus MaxBorrow" (Lessor doc), so it stays within a
// lease and MaxBorrow of the clock however many renewals there have been. A
// ceiling computed from the previous ceiling instead grows by a lease every
// third of a lease, running ahead of the clock without bound; a holder that
// then dies leaves a lastMs its successor must wait for (ErrClockBehind) for
// as long as the holder ran, twice over.
func TestSnowflakeCeilingTracksTheClock(t *testing.T) {
	db := be.Database(t)
	l := sfLessor(t, db, 1, nil)
	slack := (sfLease + snowflake.MaxBorrow + 200*time.Millisecond).Milliseconds()
	renewals, last := 0, int64(0)
	deadline := time.Now().Add(40 * sfLease)
	for renewals < 12 {
		if time.Now().After(deadline) {
			t.Fatalf("only %d renewals within %v", renewals, 40*sfLease)
		}
		s := l.Status()
		if !s.Held || s.LastMs == last {
			time.Sleep(5 * time.Millisecond) // polling the Lessor's own ticker, not synchronising on it
			continue
		}
		renewals++
		last = s.LastMs
		if ahead := s.LastMs - time.Now().UnixMilli(); ahead > slack && renewals == 12 {
			t.Fatalf("after %d renewals of a %v lease, lastMs is %d ms ahead of the clock, want at most %d",
				renewals, sfLease, ahead, slack)
		}
	}
}

// TestSnowflakeSuccessorOfDeadHolderStartsSoon: a holder that ran for 30
// renewals and then is cut off leaves its worker id to another Lessor, which
// makes ids within a few leases of the cut (the lease keeps the new holder
// from waiting for the old one's milliseconds, Lessor doc), not after the
// clock catches up with a ceiling that ran ahead for as long as the holder ran.
func TestSnowflakeSuccessorOfDeadHolderStartsSoon(t *testing.T) {
	be.RequireFailCommand(t)
	db := be.Database(t)
	a := sfLessorOn(t, be.NewAppClient(t, "sfDeadHolder").Database(db.Name()), time.Now)
	renewals, last := 0, int64(0)
	deadline := time.Now().Add(100 * sfLease)
	for renewals < 30 {
		if time.Now().After(deadline) {
			t.Fatalf("only %d renewals within %v", renewals, 100*sfLease)
		}
		if s := a.Status(); s.Held && s.LastMs != last {
			renewals, last = renewals+1, s.LastMs
		}
		time.Sleep(5 * time.Millisecond) // polling the Lessor's own ticker, not synchronising on it
	}
	be.FailCommand(t, "alwaysOn", bson.D{
		{Key: "failCommands", Value: bson.A{"update", "find", "insert"}},
		{Key: "appName", Value: "sfDeadHolder"},
		{Key: "closeConnection", Value: true},
	})
	b := sfLessor(t, db, 1, nil)
	if _, _, err := sfFirst(b.Generator(), 8*sfLease); err != nil {
		t.Fatalf("successor of a holder cut off after %d renewals (its lastMs %d ms ahead of the clock): %v",
			renewals, last-time.Now().UnixMilli(), err)
	}
}
