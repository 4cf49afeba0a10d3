//go:build integration

package integration

import (
	"testing"

	"github.com/seqd/seqd"
	"github.com/seqd/seqd/counters"
)

// BenchmarkCounterNext is one Counter's Next on one name in each mode, from
// parallel callers, in-process against the suite's backend:
//
//	go test -tags integration -run '^$' -bench CounterNext -benchtime 2000x ./integration/
func BenchmarkCounterNext(b *testing.B) {
	for _, mode := range []seqd.Mode{seqd.ModeStrict, seqd.ModeCached} {
		b.Run(string(mode), func(b *testing.B) {
			c := counters.NewCounter(be.Database(b), counters.Options{})
			b.Cleanup(func() { c.Close(b.Context()) })
			if err := c.SetMode(b.Context(), "bench", mode, 0, 0); err != nil {
				b.Fatal(err)
			}
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := c.Next(b.Context(), "bench"); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
