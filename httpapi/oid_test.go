package httpapi_test

import (
	"crypto/md5"
	"encoding/binary"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seqd/seqd/objectid"
)

var oidPattern = regexp.MustCompile(`^[0-9a-f]{24}$`)

// parseOID asserts that s is 24 lowercase hex digits and returns the id.
func parseOID(t testing.TB, s string) objectid.ID {
	t.Helper()
	if !oidPattern.MatchString(s) {
		t.Fatalf("id %q is not 24 lowercase hex digits", s)
	}
	return objectid.MustParse(s)
}

// wantIncreasing asserts that ids are valid and strictly increasing.
func wantIncreasing(t testing.TB, ids []string) []objectid.ID {
	t.Helper()
	out := make([]objectid.ID, len(ids))
	for i, s := range ids {
		out[i] = parseOID(t, s)
		if i > 0 && objectid.Compare(out[i-1], out[i]) >= 0 {
			t.Fatalf("ids[%d] = %s is not above ids[%d] = %s", i, s, i-1, ids[i-1])
		}
	}
	return out
}

func TestNewOID(t *testing.T) {
	s := newServer(t)
	before := time.Now().Unix()
	first := parseOID(t, decode[oidResponse](t, s.get(t, "/oid"), http.StatusOK).OID)
	second := parseOID(t, decode[oidResponse](t, s.get(t, "/oid"), http.StatusOK).OID)
	after := time.Now().Unix()

	if objectid.Compare(first, second) >= 0 {
		t.Errorf("second id %s is not above the first %s", second, first)
	}
	// The generator reads the wall clock once a second, so allow that much slack.
	if ts := int64(first.Timestamp()); ts < before-2 || ts > after+2 {
		t.Errorf("id %s has timestamp %d, want about %d..%d", first, ts, before, after)
	}
	if first.Process() != second.Process() {
		t.Errorf("ids %s and %s of one process have different process bytes", first, second)
	}
}

func TestNewOIDCount(t *testing.T) {
	s := newServer(t)
	for _, n := range []int{1, 2, 100, 10000} {
		rec := s.get(t, "/oid?count="+strconv.Itoa(n))
		ids := decode[oidsResponse](t, rec, http.StatusOK).OIDs
		if len(ids) != n {
			t.Fatalf("count=%d: got %d ids", n, len(ids))
		}
		parsed := wantIncreasing(t, ids)
		for _, id := range parsed[1:] {
			if id.Process() != parsed[0].Process() {
				t.Fatalf("count=%d: ids %s and %s differ in their process bytes", n, parsed[0], id)
			}
		}
	}

	// Batches follow each other in order too.
	a := decode[oidsResponse](t, s.get(t, "/oid?count=3"), http.StatusOK).OIDs
	b := decode[oidsResponse](t, s.get(t, "/oid?count=3"), http.StatusOK).OIDs
	wantIncreasing(t, append(a, b...))
}

func TestNewOIDLegacy(t *testing.T) {
	host, err := os.Hostname()
	if err != nil || host == "" {
		t.Skipf("no hostname (%v): the legacy machine bytes are random", err)
	}
	sum := md5.Sum([]byte(host))
	wantMachine := hex.EncodeToString(sum[:3])
	wantPid := uint16(os.Getpid())
	s := newServer(t)

	check := func(t *testing.T, id objectid.ID) {
		t.Helper()
		m := id.Machine()
		if got := hex.EncodeToString(m[:]); got != wantMachine {
			t.Errorf("legacy id %s: machine %s, want md5(%q)[:3] = %s", id, got, host, wantMachine)
		}
		if id.Pid() != wantPid {
			t.Errorf("legacy id %s: pid %d, want %d", id, id.Pid(), wantPid)
		}
	}

	t.Run("single", func(t *testing.T) {
		check(t, parseOID(t, decode[oidResponse](t, s.get(t, "/oid?layout=legacy"), http.StatusOK).OID))
	})
	t.Run("count", func(t *testing.T) {
		ids := decode[oidsResponse](t, s.get(t, "/oid?layout=legacy&count=50"), http.StatusOK).OIDs
		if len(ids) != 50 {
			t.Fatalf("got %d ids, want 50", len(ids))
		}
		for _, id := range wantIncreasing(t, ids) {
			check(t, id)
		}
	})
	t.Run("spec is not legacy", func(t *testing.T) {
		spec := parseOID(t, decode[oidResponse](t, s.get(t, "/oid?layout=spec"), http.StatusOK).OID)
		legacy := parseOID(t, decode[oidResponse](t, s.get(t, "/oid?layout=legacy"), http.StatusOK).OID)
		if spec.Process() == legacy.Process() {
			t.Errorf("spec id %s and legacy id %s share their process bytes", spec, legacy)
		}
	})
}

func TestNewOIDBadInput(t *testing.T) {
	s := newServer(t)
	tests := []struct {
		query string
		code  string
	}{
		{"count=0", "invalid_count"},
		{"count=-1", "invalid_count"},
		{"count=10001", "invalid_count"},
		{"count=99999999999999999999", "invalid_count"},
		{"count=abc", "invalid_count"},
		{"count=1.5", "invalid_count"},
		{"count=0x10", "invalid_count"},
		{"count=", "invalid_count"},
		{"count=1&count=2", "invalid_query"},
		{"count=%zz", "invalid_query"},
		{"count=1;layout=spec", "invalid_query"},
		{"layout=bogus", "invalid_layout"},
		{"layout=LEGACY", "invalid_layout"},
		{"layout=", "invalid_layout"},
		{"layout=spec&layout=legacy", "invalid_query"},
		{"counts=2", "unknown_parameter"},
		{"count=2&x=1", "unknown_parameter"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			wantError(t, s.get(t, "/oid?"+tt.query), http.StatusBadRequest, tt.code)
		})
	}
}

func TestDecodeOID(t *testing.T) {
	s := newServer(t)
	tests := []struct {
		hex  string
		want oidInfo
	}{
		{"5a17b9d9ab102555b9c38874", oidInfo{
			OID: "5a17b9d9ab102555b9c38874", Time: "2017-11-24T06:19:05Z", Unix: 1511504345,
			Counter: 0xc38874, Process: "ab102555b9", Machine: "ab1025", Pid: 0x55b9,
		}},
		{"5A17B9D9AB102555B9C38874", oidInfo{ // either case in, lowercase out
			OID: "5a17b9d9ab102555b9c38874", Time: "2017-11-24T06:19:05Z", Unix: 1511504345,
			Counter: 0xc38874, Process: "ab102555b9", Machine: "ab1025", Pid: 0x55b9,
		}},
		{"53102b43bf1044ed8b0ba36b", oidInfo{
			OID: "53102b43bf1044ed8b0ba36b", Time: "2014-02-28T06:22:59Z", Unix: 1393568579,
			Counter: 0x0ba36b, Process: "bf1044ed8b", Machine: "bf1044", Pid: 0xed8b,
		}},
		{"50c758800000000000000000", oidInfo{
			OID: "50c758800000000000000000", Time: "2012-12-11T16:00:00Z", Unix: 1355241600,
			Process: "0000000000", Machine: "000000",
		}},
		{"000000000000000000000000", oidInfo{
			OID: "000000000000000000000000", Time: "1970-01-01T00:00:00Z",
			Process: "0000000000", Machine: "000000",
		}},
		{"7fffffff0000000000000000", oidInfo{
			OID: "7fffffff0000000000000000", Time: "2038-01-19T03:14:07Z", Unix: 0x7fffffff,
			Process: "0000000000", Machine: "000000",
		}},
		{"80000000ffffffffffffffff", oidInfo{
			OID: "80000000ffffffffffffffff", Time: "2038-01-19T03:14:08Z", Unix: 0x80000000,
			Counter: 0xffffff, Process: "ffffffffff", Machine: "ffffff", Pid: 0xffff,
		}},
		{"ffffffffffffffffffffffff", oidInfo{
			OID: "ffffffffffffffffffffffff", Time: "2106-02-07T06:28:15Z", Unix: 0xffffffff,
			Counter: 0xffffff, Process: "ffffffffff", Machine: "ffffff", Pid: 0xffff,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.hex, func(t *testing.T) {
			got := decode[oidInfo](t, s.get(t, "/oid/"+tt.hex), http.StatusOK)
			if got != tt.want {
				t.Errorf("GET /oid/%s\n got %+v\nwant %+v", tt.hex, got, tt.want)
			}
		})
	}

	t.Run("round trip", func(t *testing.T) {
		id := decode[oidResponse](t, s.get(t, "/oid?layout=legacy"), http.StatusOK).OID
		got := decode[oidInfo](t, s.get(t, "/oid/"+id), http.StatusOK)
		raw, _ := hex.DecodeString(id)
		if got.OID != id || got.Unix != int64(binary.BigEndian.Uint32(raw)) || got.Pid != uint16(os.Getpid()) {
			t.Errorf("decoding the new legacy id %s gave %+v", id, got)
		}
	})

	bad := []struct{ name, path, code string }{
		{"23 digits", "/oid/5a17b9d9ab102555b9c3887", "invalid_id"},
		{"25 digits", "/oid/5a17b9d9ab102555b9c388741", "invalid_id"},
		{"not hex", "/oid/5a17b9d9ab102555b9c3887g", "invalid_id"},
		{"0x prefix", "/oid/0x5a17b9d9ab102555b9c388", "invalid_id"},
		{"unicode", "/oid/5a17b9d9ab102555b9c388%C3%A9", "invalid_id"},
		{"escaped slash", "/oid/5a17b9d9ab102555%2F9c38874", "invalid_id"},
		{"space", "/oid/5a17b9d9ab102555b9c3887%20", "invalid_id"},
		{"query", "/oid/5a17b9d9ab102555b9c38874?x=1", "unknown_parameter"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			wantError(t, s.get(t, tt.path), http.StatusBadRequest, tt.code)
		})
	}

	t.Run("malformed escape", func(t *testing.T) {
		// net/http refuses such a request line; a handler reached by another route
		// (a proxy, a test) must still answer 400, not 500.
		req := newRequest(http.MethodGet, "/oid/x", "")
		req.URL.RawPath = "/oid/%zz"
		wantError(t, s.serve(t, req), http.StatusBadRequest, "invalid_id")
	})
}

func TestOIDRange(t *testing.T) {
	s := newServer(t)
	dec2012 := oidBounds{Time: "2012-12-11T16:00:00Z", Min: "50c758800000000000000000", Max: "50c75880ffffffffffffffff"}
	tests := []struct {
		name, time string
		want       oidBounds
	}{
		{"RFC 3339 UTC", "2012-12-11T16:00:00Z", dec2012},
		{"unix seconds", "1355241600", dec2012},
		{"leading zeros", "001355241600", dec2012},
		{"fraction truncated", "2012-12-11T16:00:00.999999999Z", dec2012},
		{"offset", "2012-12-11T11:00:00-05:00", dec2012},
		{"offset and fraction", "2012-12-11T17:00:00.5+01:00", dec2012},
		{"escaped plus", "2012-12-11T17:00:00.5%2B01:00", dec2012},
		{"escaped colons", "2012-12-11T16%3A00%3A00Z", dec2012},
		{"zero", "0", oidBounds{"1970-01-01T00:00:00Z", "000000000000000000000000", "00000000ffffffffffffffff"}},
		{"epoch", "1970-01-01T00:00:00Z", oidBounds{"1970-01-01T00:00:00Z", "000000000000000000000000", "00000000ffffffffffffffff"}},
		{"0x7fffffff", "2147483647", oidBounds{"2038-01-19T03:14:07Z", "7fffffff0000000000000000", "7fffffffffffffffffffffff"}},
		{"0x80000000", "2147483648", oidBounds{"2038-01-19T03:14:08Z", "800000000000000000000000", "80000000ffffffffffffffff"}},
		{"0xffffffff", "4294967295", oidBounds{"2106-02-07T06:28:15Z", "ffffffff0000000000000000", "ffffffffffffffffffffffff"}},
		{"last second RFC 3339", "2106-02-07T06:28:15.999Z", oidBounds{"2106-02-07T06:28:15Z", "ffffffff0000000000000000", "ffffffffffffffffffffffff"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := decode[oidBounds](t, s.get(t, "/oid/at/"+tt.time), http.StatusOK)
			if got != tt.want {
				t.Errorf("GET /oid/at/%s\n got %+v\nwant %+v", tt.time, got, tt.want)
			}
		})
	}

	bad := []struct{ name, time string }{
		{"past 0xffffffff", "4294967296"},
		{"far past", "99999999999999999999999"},
		{"negative", "-1"},
		{"before 1970", "1969-12-31T23:59:59Z"},
		{"before 1970 by a fraction", "1969-12-31T23:59:59.5Z"},
		{"after 2106", "2106-02-07T06:28:16Z"},
		{"year 9999", "9999-12-31T23:59:59Z"},
		{"date only", "2012-12-11"},
		{"no zone", "2012-12-11T16:00:00"},
		{"words", "yesterday"},
		{"fractional seconds", "1355241600.5"},
		{"plus sign", "+1355241600"},
		{"hex", "0x50c75880"},
		{"unicode digits", "%D9%A1"},
		{"escaped slash", "2012%2F12%2F11"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			rec := s.get(t, "/oid/at/"+tt.time)
			wantError(t, rec, http.StatusBadRequest, "invalid_time")
		})
	}
	t.Run("empty", func(t *testing.T) {
		// Echo routes /oid/at/ to /oid/{hex}; either way it is bad input.
		if rec := s.get(t, "/oid/at/"); rec.Code != http.StatusBadRequest {
			t.Errorf("GET /oid/at/: status %d, want 400", rec.Code)
		}
	})
	t.Run("query", func(t *testing.T) {
		wantError(t, s.get(t, "/oid/at/0?count=1"), http.StatusBadRequest, "unknown_parameter")
	})
}

// TestNewOIDConcurrent checks that concurrent requests never get the same id.
func TestNewOIDConcurrent(t *testing.T) {
	s := newServer(t)
	const workers, perWorker = 8, 50
	results := make([][]string, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for range perWorker {
				rec := httptestGet(s, "/oid?count=2")
				if rec.code != http.StatusOK {
					results[w] = append(results[w], "status "+strconv.Itoa(rec.code))
					continue
				}
				results[w] = append(results[w], rec.body)
			}
		})
	}
	wg.Wait()
	seen := make(map[string]bool)
	for _, bodies := range results {
		for _, body := range bodies {
			var r oidsResponse
			if err := strictDecode([]byte(body), &r); err != nil || len(r.OIDs) != 2 {
				t.Fatalf("answer %q: %v", body, err)
			}
			for _, id := range r.OIDs {
				if seen[id] {
					t.Fatalf("id %s handed out twice", id)
				}
				seen[id] = true
			}
		}
	}
	if len(seen) != workers*perWorker*2 {
		t.Errorf("got %d distinct ids, want %d", len(seen), workers*perWorker*2)
	}
}

type plainResponse struct {
	code int
	body string
}

// httptestGet serves GET target without a testing.TB, for use off the test goroutine.
func httptestGet(s *server, target string) plainResponse {
	rec := httptest.NewRecorder()
	s.handler.ServeHTTP(rec, newRequest(http.MethodGet, target, ""))
	return plainResponse{rec.Code, strings.TrimSpace(rec.Body.String())}
}
