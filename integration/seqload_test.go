//go:build integration

package integration

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/seqd/seqd/internal/loadreport"
	"github.com/seqd/seqd/internal/proc"
)

// seqload against two seqd on one store, as an operator runs it: a cached
// sequence, whose instances' answers are in order each but not across the two,
// and a sequence switched from cached to strict while the load runs. seqload
// passes both, and says which promise it checked.
func TestSeqloadTwoInstances(t *testing.T) {
	ctx := testContext(t)
	bin, err := proc.Build(ctx, "./cmd/seqload")
	if err != nil {
		t.Fatal(err)
	}
	const lease = 2 * time.Second
	c := startCluster(t, 2, 8, "SEQD_BLOCK_LEASE="+lease.String(), "SEQD_MODE_REFRESH=200ms")
	addrs := c.seqds[0].URL() + "," + c.seqds[1].URL()
	// seqload starts seqload; the function it returns waits for it and checks
	// that it passed, and returns its summary's promise.
	seqload := func(t *testing.T, args ...string) (wait func() string) {
		t.Helper()
		cmd := exec.CommandContext(ctx, bin, append([]string{"-addr", addrs, "-target", "seq", "-c", "8", "-json", "-progress", "0"}, args...)...)
		var stdout strings.Builder
		cmd.Stdout = &stdout
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return func() string {
			t.Helper()
			err := cmd.Wait()
			s, rerr := loadreport.Read([]byte(stdout.String()))
			var promise struct{ Promise string }
			json.Unmarshal([]byte(stdout.String()), &promise)
			if err != nil || rerr != nil || !s.Passed || s.Duplicates != 0 || s.OK == 0 {
				t.Fatalf("seqload %s: %v, %v; passed %v, %d ok, %d duplicates, %d order violations, failures %q; promise %q",
					strings.Join(args, " "), err, rerr, s.Passed, s.OK, s.Duplicates, s.OrderErrors, s.Failures, promise.Promise)
			}
			t.Logf("%d values, %d requests; promise %q", s.Values, s.Requests, promise.Promise)
			return promise.Promise
		}
	}

	t.Run("cached", func(t *testing.T) {
		promise := seqload(t, "-name", "orders.cached", "-mode", "cached", "-admin-token", adminToken, "-d", "3s")()
		if !strings.HasPrefix(promise, "cached (read ") {
			t.Errorf("promise %q, want cached's", promise)
		}
	})

	t.Run("switched", func(t *testing.T) {
		const name = "orders.switched"
		putSequence(t, c.seqds[0], name, `{"mode":"cached"}`)
		wait := seqload(t, "-name", name, "-d", "4s", "-mode-poll", "100ms")
		// Once a block is reserved, seqload has read the mode and sent requests.
		for deadline := time.Now().Add(10 * time.Second); getSequence(t, c.seqds[0], name).Value == 0; {
			if time.Now().After(deadline) {
				t.Fatal("no block reserved within 10 s of starting seqload")
			}
			time.Sleep(20 * time.Millisecond)
		}
		putSequence(t, c.seqds[1], name, `{"mode":"strict"}`)
		if promise := wait(); !strings.HasPrefix(promise, "switched, cached ") {
			t.Errorf("promise %q, want a switch from cached", promise)
		}
	})
}
