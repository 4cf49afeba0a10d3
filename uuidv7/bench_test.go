package uuidv7_test

import (
	"strconv"
	"testing"

	"github.com/google/uuid"

	"github.com/seqd/seqd/uuidv7"
)

// Sinks keep the compiler from discarding the work being measured.
var (
	sinkUUID   uuidv7.UUID
	sinkGoogle uuid.UUID
	sinkBuf    []byte
)

// BenchmarkNew and BenchmarkGoogleNewV7 measure the same thing, a version 7
// UUID that sorts after the process's last, for the ratio between them: here
// one clock read, one atomic add and a random number from the runtime's
// generator; google/uuid takes a mutex, reads the clock and reads 16 bytes from
// crypto/rand.
func BenchmarkNew(b *testing.B) {
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		var u uuidv7.UUID
		for b.Loop() {
			u = uuidv7.New()
		}
		sinkUUID = u
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			var u uuidv7.UUID
			for pb.Next() {
				u = uuidv7.New()
			}
			_ = u
		})
	})
}

func BenchmarkGoogleNewV7(b *testing.B) {
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		var u uuid.UUID
		for b.Loop() {
			u, _ = uuid.NewV7()
		}
		sinkGoogle = u
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			var u uuid.UUID
			for pb.Next() {
				u, _ = uuid.NewV7()
			}
			_ = u
		})
	})
}

// BenchmarkFill reports ns/id next to ns/op: the cost per id of a batch.
func BenchmarkFill(b *testing.B) {
	for _, n := range []int{1, 100, 10000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			dst := make([]uuidv7.UUID, n)
			for b.Loop() {
				uuidv7.Fill(dst)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/id")
			sinkUUID = dst[n-1]
		})
	}
}

func BenchmarkAppendText(b *testing.B) {
	b.ReportAllocs()
	u := uuidv7.New()
	buf := make([]byte, 0, 36)
	for b.Loop() {
		buf, _ = u.AppendText(buf[:0])
	}
	sinkBuf = buf
}

func BenchmarkParse(b *testing.B) {
	b.ReportAllocs()
	s := uuidv7.New().String()
	var u uuidv7.UUID
	for b.Loop() {
		u, _ = uuidv7.Parse(s)
	}
	sinkUUID = u
}
