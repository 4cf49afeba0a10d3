package httpapi_test

import (
	"net/http"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/seqd/seqd/uuidv7"
)

// Response bodies of /uuid, as a client reads them.
type (
	uuidResponse struct {
		UUID string `json:"uuid"`
	}
	uuidsResponse struct {
		UUIDs []string `json:"uuids"`
	}
	uuidInfo struct {
		UUID    string `json:"uuid"`
		Version int    `json:"version"`
		Time    string `json:"time"`
		UnixMS  *int64 `json:"unix_ms"`
	}
	uuidBounds = oidBounds // the same answer: time, min, max
)

var uuidPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// parseUUID asserts that s is a version 7 UUID in lowercase canonical form and
// returns it.
func parseUUID(t testing.TB, s string) uuidv7.UUID {
	t.Helper()
	if !uuidPattern.MatchString(s) {
		t.Fatalf("%q is not a lowercase version 7 UUID of variant 10", s)
	}
	return uuidv7.MustParse(s)
}

// wantUUIDsIncreasing asserts that ids are version 7 and strictly increasing.
func wantUUIDsIncreasing(t testing.TB, ids []string) []uuidv7.UUID {
	t.Helper()
	out := make([]uuidv7.UUID, len(ids))
	for i, s := range ids {
		out[i] = parseUUID(t, s)
		if i > 0 && uuidv7.Compare(out[i-1], out[i]) >= 0 {
			t.Fatalf("uuids[%d] = %s is not above uuids[%d] = %s", i, s, i-1, ids[i-1])
		}
	}
	return out
}

func TestNewUUID(t *testing.T) {
	s := newServer(t)
	before := time.Now().UnixMilli()
	first := parseUUID(t, decode[uuidResponse](t, s.get(t, "/uuid"), http.StatusOK).UUID)
	second := parseUUID(t, decode[uuidResponse](t, s.get(t, "/uuid"), http.StatusOK).UUID)
	after := time.Now().UnixMilli()

	if uuidv7.Compare(first, second) >= 0 {
		t.Errorf("second id %s is not above the first %s", second, first)
	}
	// Other tests' batches may make the counter borrow a few milliseconds.
	if ms := first.UnixMilli(); ms < before || ms > after+10 {
		t.Errorf("id %s has millisecond %d, want about %d..%d", first, ms, before, after)
	}
}

func TestNewUUIDCount(t *testing.T) {
	s := newServer(t)
	for _, n := range []int{1, 2, 100, 10000} {
		rec := s.get(t, "/uuid?count="+strconv.Itoa(n))
		ids := decode[uuidsResponse](t, rec, http.StatusOK).UUIDs
		if len(ids) != n {
			t.Fatalf("count=%d: got %d ids", n, len(ids))
		}
		wantUUIDsIncreasing(t, ids)
	}

	// Batches follow each other in order too, and single ids between them.
	a := decode[uuidsResponse](t, s.get(t, "/uuid?count=3"), http.StatusOK).UUIDs
	b := decode[uuidResponse](t, s.get(t, "/uuid"), http.StatusOK).UUID
	c := decode[uuidsResponse](t, s.get(t, "/uuid?count=3"), http.StatusOK).UUIDs
	wantUUIDsIncreasing(t, append(append(a, b), c...))
}

func TestNewUUIDBadInput(t *testing.T) {
	s := newServer(t)
	for _, tt := range []struct {
		query string
		code  string
	}{
		{"count=0", "invalid_count"},
		{"count=-1", "invalid_count"},
		{"count=10001", "invalid_count"},
		{"count=99999999999999999999", "invalid_count"},
		{"count=abc", "invalid_count"},
		{"count=1.5", "invalid_count"},
		{"count=", "invalid_count"},
		{"count=1&count=2", "invalid_query"},
		{"count=%zz", "invalid_query"},
		{"layout=spec", "unknown_parameter"}, // /oid's, not /uuid's
		{"count=2&x=1", "unknown_parameter"},
	} {
		t.Run(tt.query, func(t *testing.T) {
			wantError(t, s.get(t, "/uuid?"+tt.query), http.StatusBadRequest, tt.code)
		})
	}
	t.Run("POST", func(t *testing.T) {
		if rec := s.serve(t, newRequest(http.MethodPost, "/uuid", "")); rec.Code != http.StatusMethodNotAllowed {
			t.Errorf("POST /uuid: status %d, want 405", rec.Code)
		}
	})
	t.Run("HEAD", func(t *testing.T) { // a probe must not spend an id
		if rec := s.serve(t, newRequest(http.MethodHead, "/uuid", "")); rec.Code != http.StatusMethodNotAllowed {
			t.Errorf("HEAD /uuid: status %d, want 405", rec.Code)
		}
	})
}

func int64p(v int64) *int64 { return &v }

func TestDecodeUUID(t *testing.T) {
	s := newServer(t)
	for _, tt := range []struct {
		path string
		want uuidInfo
	}{
		// RFC 9562's version 7 example, either case in, lowercase out.
		{"017f22e2-79b0-7cc3-98c4-dc0c0c07398f", uuidInfo{UUID: "017f22e2-79b0-7cc3-98c4-dc0c0c07398f", Version: 7,
			Time: "2022-02-22T19:22:22.000Z", UnixMS: int64p(1645557742000)}},
		{"017F22E2-79B0-7CC3-98C4-DC0C0C07398F", uuidInfo{UUID: "017f22e2-79b0-7cc3-98c4-dc0c0c07398f", Version: 7,
			Time: "2022-02-22T19:22:22.000Z", UnixMS: int64p(1645557742000)}},
		{"00000000-0000-7000-8000-000000000000", uuidInfo{UUID: "00000000-0000-7000-8000-000000000000", Version: 7,
			Time: "1970-01-01T00:00:00.000Z", UnixMS: int64p(0)}},
		{"e677d21f-dbff-7fff-bfff-ffffffffffff", uuidInfo{UUID: "e677d21f-dbff-7fff-bfff-ffffffffffff", Version: 7,
			Time: "9999-12-31T23:59:59.999Z", UnixMS: int64p(253402300799999)}},
		// Other versions: the version only.
		{"919108f7-52d1-4320-9bac-f847db4148a8", uuidInfo{UUID: "919108f7-52d1-4320-9bac-f847db4148a8", Version: 4}},
		{"c232ab00-9414-11ec-b3c8-9f6bdeced846", uuidInfo{UUID: "c232ab00-9414-11ec-b3c8-9f6bdeced846", Version: 1}},
		{"00000000-0000-0000-0000-000000000000", uuidInfo{UUID: "00000000-0000-0000-0000-000000000000", Version: 0}},
		{"ffffffff-ffff-ffff-ffff-ffffffffffff", uuidInfo{UUID: "ffffffff-ffff-ffff-ffff-ffffffffffff", Version: 15}},
		// Version 7 in the version field, but not RFC 9562's variant: no time.
		{"017f22e2-79b0-7cc3-d8c4-dc0c0c07398f", uuidInfo{UUID: "017f22e2-79b0-7cc3-d8c4-dc0c0c07398f", Version: 7}},
	} {
		t.Run(tt.path, func(t *testing.T) {
			rec := s.get(t, "/uuid/"+tt.path)
			got := decode[uuidInfo](t, rec, http.StatusOK)
			if got.UUID != tt.want.UUID || got.Version != tt.want.Version || got.Time != tt.want.Time ||
				(got.UnixMS == nil) != (tt.want.UnixMS == nil) || got.UnixMS != nil && *got.UnixMS != *tt.want.UnixMS {
				t.Errorf("GET /uuid/%s = %s, want %+v", tt.path, rec.Body, tt.want)
			}
			if tt.want.UnixMS == nil {
				if got := keys(t, rec.Body.Bytes()); len(got) != 2 {
					t.Errorf("GET /uuid/%s has keys %v, want uuid and version only", tt.path, got)
				}
			}
		})
	}

	t.Run("round trip", func(t *testing.T) {
		id := decode[uuidResponse](t, s.get(t, "/uuid"), http.StatusOK).UUID
		got := decode[uuidInfo](t, s.get(t, "/uuid/"+id), http.StatusOK)
		u := uuidv7.MustParse(id)
		if got.UUID != id || got.Version != 7 || got.UnixMS == nil || *got.UnixMS != u.UnixMilli() {
			t.Errorf("decoding the new id %s gave %+v", id, got)
		}
	})

	for _, tt := range []struct{ name, path, code, message string }{
		{"35 characters", "/uuid/017f22e2-79b0-7cc3-98c4-dc0c0c07398", "invalid_uuid", "invalid UUID: length 35, want 36 (8-4-4-4-12 hex digits)"},
		{"no hyphens", "/uuid/017f22e279b07cc398c4dc0c0c07398f", "invalid_uuid", "invalid UUID: length 32, want 36 (8-4-4-4-12 hex digits)"},
		{"hyphen moved", "/uuid/017f22e-279b0-7cc3-98c4-dc0c0c07398f", "invalid_uuid", "invalid UUID: want '-' at index 8, got character '2'"},
		{"not hex", "/uuid/017f22e2-79b0-7cc3-98c4-dc0c0c07398g", "invalid_uuid", "invalid UUID: invalid character 'g' at index 35"},
		{"braces", "/uuid/%7B017f22e2-79b0-7cc3-98c4-dc0c0c07398f%7D", "invalid_uuid", ""},
		{"unicode", "/uuid/017f22e2-79b0-7cc3-98c4-dc0c0c0739%C3%A9", "invalid_uuid", "invalid UUID: invalid character 'é' at index 34"},
		{"escaped slash", "/uuid/017f22e2-79b0-7cc3-98c4%2Fdc0c0c07398f", "invalid_uuid", ""},
		{"long", "/uuid/017f22e2-79b0-7cc3-98c4-dc0c0c07398f017f22e2-79b0-7cc3-98c4-dc0c0c07398f", "invalid_uuid", "invalid UUID: length 72, want 36 (8-4-4-4-12 hex digits)"},
		{"query", "/uuid/017f22e2-79b0-7cc3-98c4-dc0c0c07398f?x=1", "unknown_parameter", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := wantError(t, s.get(t, tt.path), http.StatusBadRequest, tt.code)
			if tt.message != "" && e.Message != tt.message {
				t.Errorf("message %q, want %q", e.Message, tt.message)
			}
		})
	}

	t.Run("malformed escape", func(t *testing.T) {
		req := newRequest(http.MethodGet, "/uuid/x", "")
		req.URL.RawPath = "/uuid/%zz"
		wantError(t, s.serve(t, req), http.StatusBadRequest, "invalid_uuid")
	})
}

func TestUUIDRange(t *testing.T) {
	s := newServer(t)
	nov2026 := uuidBounds{Time: "2026-11-25T12:00:00.123Z",
		Min: "01a21293-b67b-7000-8000-000000000000", Max: "01a21293-b67b-7fff-bfff-ffffffffffff"}
	nov2026s := uuidBounds{Time: "2026-11-25T12:00:00.000Z",
		Min: "01a21293-b600-7000-8000-000000000000", Max: "01a21293-b600-7fff-bfff-ffffffffffff"}
	epoch := uuidBounds{Time: "1970-01-01T00:00:00.000Z",
		Min: "00000000-0000-7000-8000-000000000000", Max: "00000000-0000-7fff-bfff-ffffffffffff"}
	for _, tt := range []struct {
		name, time string
		want       uuidBounds
	}{
		{"RFC 3339 with milliseconds", "2026-11-25T12:00:00.123Z", nov2026},
		{"fraction truncated", "2026-11-25T12:00:00.123999999Z", nov2026},
		{"offset", "2026-11-25T13:00:00.123+01:00", nov2026},
		{"escaped plus", "2026-11-25T13:00:00.123%2B01:00", nov2026},
		{"no fraction", "2026-11-25T12:00:00Z", nov2026s},
		{"unix seconds", "1795608000", nov2026s},
		{"leading zeros", "001795608000", nov2026s},
		{"zero", "0", epoch},
		{"epoch", "1970-01-01T00:00:00Z", epoch},
		{"year 9999", "9999-12-31T23:59:59.999Z", uuidBounds{"9999-12-31T23:59:59.999Z",
			"e677d21f-dbff-7000-8000-000000000000", "e677d21f-dbff-7fff-bfff-ffffffffffff"}},
		{"last unix second", "281474976710", uuidBounds{"10889-08-02T05:31:50.000Z",
			"ffffffff-fd70-7000-8000-000000000000", "ffffffff-fd70-7fff-bfff-ffffffffffff"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := decode[uuidBounds](t, s.get(t, "/uuid/at/"+tt.time), http.StatusOK)
			if got != tt.want {
				t.Errorf("GET /uuid/at/%s\n got %+v\nwant %+v", tt.time, got, tt.want)
			}
		})
	}

	for _, tt := range []struct{ name, time string }{
		{"past the 48 bits", "281474976711"},
		{"far past", "99999999999999999999999"},
		{"negative", "-1"},
		{"before 1970", "1969-12-31T23:59:59Z"},
		{"before 1970 by a fraction", "1969-12-31T23:59:59.9999Z"},
		{"date only", "2026-11-25"},
		{"no zone", "2026-11-25T12:00:00"},
		{"words", "yesterday"},
		{"fractional seconds", "1795608000.5"},
		{"unix milliseconds as a fraction", "1795608000.123"},
		{"plus sign", "+1795608000"},
		{"escaped slash", "2026%2F11%2F25"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			wantError(t, s.get(t, "/uuid/at/"+tt.time), http.StatusBadRequest, "invalid_time")
		})
	}
	t.Run("empty", func(t *testing.T) {
		// Echo routes /uuid/at/ to /uuid/{uuid}; either way it is bad input.
		if rec := s.get(t, "/uuid/at/"); rec.Code != http.StatusBadRequest {
			t.Errorf("GET /uuid/at/: status %d, want 400", rec.Code)
		}
	})
	t.Run("query", func(t *testing.T) {
		wantError(t, s.get(t, "/uuid/at/0?count=1"), http.StatusBadRequest, "unknown_parameter")
	})

	// The bounds bracket the ids made in their millisecond.
	t.Run("brackets new ids", func(t *testing.T) {
		ids := wantUUIDsIncreasing(t, decode[uuidsResponse](t, s.get(t, "/uuid?count=100"), http.StatusOK).UUIDs)
		for _, id := range []uuidv7.UUID{ids[0], ids[99]} {
			b := decode[uuidBounds](t, s.get(t, "/uuid/at/"+id.Time().Format(time.RFC3339Nano)), http.StatusOK)
			lo, hi := uuidv7.MustParse(b.Min), uuidv7.MustParse(b.Max)
			if uuidv7.Compare(lo, id) > 0 || uuidv7.Compare(id, hi) > 0 {
				t.Errorf("id %s is outside %s..%s", id, b.Min, b.Max)
			}
		}
	})
}

// TestNewUUIDConcurrent checks that concurrent requests never get the same id.
func TestNewUUIDConcurrent(t *testing.T) {
	s := newServer(t)
	const workers, perWorker = 8, 50
	results := make([][]string, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for range perWorker {
				rec := httptestGet(s, "/uuid?count=2")
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
			var r uuidsResponse
			if err := strictDecode([]byte(body), &r); err != nil || len(r.UUIDs) != 2 {
				t.Fatalf("answer %q: %v", body, err)
			}
			for _, id := range r.UUIDs {
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

// TestUUIDTokensAndRateLimit checks /uuid is guarded as /oid is: a client token
// when tokens are configured, and the client's one bucket of requests.
func TestUUIDTokensAndRateLimit(t *testing.T) {
	bearer := "Bearer " + clientToken
	guarded := newServer(t, withTokens(clientToken))
	for _, path := range []string{"/uuid", "/uuid?count=2", "/uuid/017f22e2-79b0-7cc3-98c4-dc0c0c07398f", "/uuid/at/0"} {
		wantError(t, guarded.get(t, path), http.StatusUnauthorized, "unauthorized")
		wantError(t, guarded.get(t, path, "Authorization", "Bearer wrong"), http.StatusUnauthorized, "unauthorized")
		if rec := guarded.get(t, path, "Authorization", bearer); rec.Code != http.StatusOK {
			t.Errorf("GET %s with the token: status %d, want 200", path, rec.Code)
		}
	}

	s := newServer(t, withTokens(clientToken), withRateLimit(3))
	for _, path := range []string{"/uuid", "/uuid/017f22e2-79b0-7cc3-98c4-dc0c0c07398f", "/oid"} {
		if rec := s.get(t, path, "Authorization", bearer); rec.Code != http.StatusOK {
			t.Fatalf("GET %s with the token: status %d, want 200", path, rec.Code)
		}
	}
	// The three requests above spent the token's burst, /oid's included.
	wantError(t, s.get(t, "/uuid/at/0", "Authorization", bearer), http.StatusTooManyRequests, "too_many_requests")
}

// TestUUIDMetrics checks the ids handed out are counted, and the requests by
// route.
func TestUUIDMetrics(t *testing.T) {
	s := newServer(t)
	wantValue(t, scrape(t, s), "seqd_uuids_issued_total", nil, 0) // before any id
	s.get(t, "/uuid")
	s.get(t, "/uuid?count=7")
	s.get(t, "/uuid?count=0") // refused: issues nothing
	s.get(t, "/uuid/017f22e2-79b0-7cc3-98c4-dc0c0c07398f")
	s.get(t, "/uuid/at/0")

	samples := scrape(t, s)
	wantValue(t, samples, "seqd_uuids_issued_total", nil, 8)
	wantValue(t, samples, "seqd_oids_issued_total", map[string]string{"layout": "spec"}, 0)
	route := func(url, code string) map[string]string {
		return map[string]string{"method": "GET", "url": url, "code": code}
	}
	wantValue(t, samples, "seqd_http_requests_total", route("/uuid", "200"), 2)
	wantValue(t, samples, "seqd_http_requests_total", route("/uuid", "400"), 1)
	wantValue(t, samples, "seqd_http_requests_total", route("/uuid/:uuid", "200"), 1)
	wantValue(t, samples, "seqd_http_requests_total", route("/uuid/at/:time", "200"), 1)
}
