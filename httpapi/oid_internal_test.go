package httpapi

import (
	"testing"

	"github.com/seqd/seqd/objectid"
)

// appendEach is the list as answer writes it for kinds without appendList, one
// appendJSON per id: what appendOIDs replaced for ObjectIds.
func appendEach(dst []byte, ids []objectid.ID) []byte {
	for i, id := range ids {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendOID(dst, id)
	}
	return dst
}

func TestAppendOIDs(t *testing.T) {
	for _, n := range []int{0, 1, 2, 1000} {
		ids := make([]objectid.ID, n)
		objectid.Fill(ids)
		want := string(appendEach([]byte(`[`), ids))
		if got := string(appendOIDs([]byte(`[`), ids)); got != want {
			t.Errorf("%d ids: appendOIDs wrote\n%.80s…, want\n%.80s…", n, got, want)
		}
		// A buffer without room grows, and keeps what it held.
		if got := string(appendOIDs(make([]byte, 1, 1), ids)); got != "\x00"+want[1:] {
			t.Errorf("%d ids into a full buffer: %.80s…", n, got)
		}
	}
}

var sinkJSON []byte

// BenchmarkAppendOIDs writes the 1,000 ids of a GET /oid?count=1000 answer with
// appendOIDs and, for the ratio, with appendOID for each id, as answer did before;
// with -count the two alternate. It reports ns/id.
func BenchmarkAppendOIDs(b *testing.B) {
	ids := make([]objectid.ID, 1000)
	objectid.Fill(ids)
	buf := make([]byte, 0, oidJSONLen*len(ids))
	for _, enc := range []struct {
		name string
		list func([]byte, []objectid.ID) []byte
	}{{"appendOIDs", appendOIDs}, {"appendOID-each", appendEach}} {
		b.Run(enc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				buf = enc.list(buf[:0], ids)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(ids)), "ns/id")
			sinkJSON = buf
		})
	}
}
