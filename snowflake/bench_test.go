package snowflake_test

import (
	"testing"
	"time"

	bwsnowflake "github.com/bwmarrin/snowflake"
	"github.com/sony/sonyflake"

	"github.com/seqd/seqd/snowflake"
)

var (
	sinkID    snowflake.ID
	sinkBW    bwsnowflake.ID
	sinkSony  uint64
	sinkParts snowflake.Parts
)

// BenchmarkNew measures New against bwmarrin/snowflake's Generate and
// sony/sonyflake's NextID, which make the same kind of id: each is measured
// right after the other, serially and from every thread, so that with -count
// they alternate. Here one clock read and one atomic add; bwmarrin takes a
// mutex and reads time.Now; sonyflake takes a mutex, reads time.Now, and
// sleeps past its 256 ids per 10 ms.
func BenchmarkNew(b *testing.B) {
	g, err := snowflake.NewGenerator(snowflake.Twitter, 1)
	if err != nil {
		b.Fatal(err)
	}
	node, err := bwsnowflake.NewNode(1)
	if err != nil {
		b.Fatal(err)
	}
	sf, err := sonyflake.New(sonyflake.Settings{StartTime: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), MachineID: func() (uint16, error) { return 1, nil }})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("serial/snowflake", func(b *testing.B) {
		b.ReportAllocs()
		var id snowflake.ID
		for b.Loop() {
			id, _ = g.New()
		}
		sinkID = id
	})
	b.Run("serial/bwmarrin", func(b *testing.B) {
		b.ReportAllocs()
		var id bwsnowflake.ID
		for b.Loop() {
			id = node.Generate()
		}
		sinkBW = id
	})
	b.Run("serial/sonyflake", func(b *testing.B) {
		b.ReportAllocs()
		var id uint64
		for b.Loop() {
			id, _ = sf.NextID()
		}
		sinkSony = id
	})
	b.Run("parallel/snowflake", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				g.New()
			}
		})
	})
	b.Run("parallel/bwmarrin", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				node.Generate()
			}
		})
	})
	b.Run("parallel/sonyflake", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				sf.NextID()
			}
		})
	})
}

func BenchmarkDecode(b *testing.B) {
	b.ReportAllocs()
	var p snowflake.Parts
	for b.Loop() {
		p, _ = snowflake.Twitter.Decode(119520048439119879)
	}
	sinkParts = p
}
