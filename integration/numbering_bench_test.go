//go:build integration

package integration

import (
	"runtime"
	"testing"

	"github.com/seqd/seqd/counters"
)

// BenchmarkNumberedNext is a strict sequence's NextNumbered from 64 callers of
// one Counter, in-process against the suite's backend: plain, and with a
// period and a format (the invoice numbering of the README). The two run in
// turn with -count, so that the figures compare within one run:
//
//	go test -tags integration -run '^$' -bench NumberedNext -benchtime 4000x -count 6 ./integration/
func BenchmarkNumberedNext(b *testing.B) {
	for _, tc := range []struct {
		name string
		nb   counters.Numbering
	}{
		{"plain", counters.Numbering{}},
		{"periodic", counters.Numbering{Period: "year", TimeZone: "Europe/Berlin", Format: "INV-{yyyy}-{seq:6}"}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			c := counters.NewCounter(be.Database(b), counters.Options{})
			if err := c.SetNumbering(b.Context(), "bench", tc.nb); err != nil {
				b.Fatal(err)
			}
			if _, err := c.NextNumbered(b.Context(), "bench", 1); err != nil { // learns the numbering
				b.Fatal(err)
			}
			b.SetParallelism(max(64/runtime.GOMAXPROCS(0), 1))
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					r, err := c.NextNumbered(b.Context(), "bench", 1)
					if err != nil || tc.nb.Format != "" && r.Formatted == "" {
						b.Error(r, err)
						return
					}
				}
			})
		})
	}
}
