package objectid_test

import (
	"encoding/hex"
	"strconv"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/seqd/seqd/objectid"
)

// Sinks keep the compiler from discarding the work being measured.
var (
	sinkID  objectid.ID
	sinkOID bson.ObjectID
	sinkBuf []byte
)

// BenchmarkNew measures New against the driver's bson.NewObjectID, which do the
// same thing, one clock read and one atomic operation per id, for the ratio
// between them. Each is measured right after the other, serially and from every
// thread, so that with -count the two alternate: this VM's parallel runs switch
// between two speeds every few seconds (a contended cache line changes hands in
// about 48 ns or about 340 ns), and a switch between two distant runs would move
// one side only.
func BenchmarkNew(b *testing.B) {
	b.Run("serial/objectid", func(b *testing.B) {
		b.ReportAllocs()
		var id objectid.ID
		for b.Loop() {
			id = objectid.New()
		}
		sinkID = id
	})
	b.Run("serial/driver", func(b *testing.B) {
		b.ReportAllocs()
		var id bson.ObjectID
		for b.Loop() {
			id = bson.NewObjectID()
		}
		sinkOID = id
	})
	b.Run("parallel/objectid", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			var id objectid.ID
			for pb.Next() {
				id = objectid.New()
			}
			_ = id
		})
	})
	b.Run("parallel/driver", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			var id bson.ObjectID
			for pb.Next() {
				id = bson.NewObjectID()
			}
			_ = id
		})
	})
}

func BenchmarkNewLegacy(b *testing.B) {
	b.ReportAllocs()
	var id objectid.ID
	for b.Loop() {
		id = objectid.NewLegacy()
	}
	sinkID = id
}

// BenchmarkFill reports ns/id next to ns/op: the cost per id of a batch.
func BenchmarkFill(b *testing.B) {
	for _, n := range []int{1, 100, 10000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			dst := make([]objectid.ID, n)
			for b.Loop() {
				objectid.Fill(dst)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/id")
			sinkID = dst[n-1]
		})
	}
}

// BenchmarkAppendHex writes 1,000 ids as GET /oid?count=1000 does, with
// AppendHex and, for the ratio, with encoding/hex, which AppendHex used before;
// with -count the two alternate. It reports ns/id.
func BenchmarkAppendHex(b *testing.B) {
	ids := make([]objectid.ID, 1000)
	objectid.Fill(ids)
	buf := make([]byte, 0, 24*len(ids))
	perID := func(b *testing.B) {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(ids)), "ns/id")
		sinkBuf = buf
	}
	b.Run("objectid", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			buf = buf[:0]
			for _, id := range ids {
				buf = id.AppendHex(buf)
			}
		}
		perID(b)
	})
	b.Run("encoding-hex", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			buf = buf[:0]
			for _, id := range ids {
				buf = hex.AppendEncode(buf, id[:])
			}
		}
		perID(b)
	})
}

func BenchmarkParse(b *testing.B) {
	b.ReportAllocs()
	s := objectid.New().Hex()
	var id objectid.ID
	for b.Loop() {
		id, _ = objectid.Parse(s)
	}
	sinkID = id
}
