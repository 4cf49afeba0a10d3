package httpapi_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/seqd/seqd/httpapi"
	"github.com/seqd/seqd/snowflake"
)

// Response bodies of /snowflake, as a client reads them.
type (
	snowflakeResponse struct {
		Snowflake int64 `json:"snowflake"`
	}
	snowflakesResponse struct {
		Snowflakes []int64 `json:"snowflakes"`
	}
	snowflakeStrings struct {
		Snowflakes []string `json:"snowflakes"`
	}
	snowflakeInfo struct {
		Snowflake int64  `json:"snowflake"`
		Time      string `json:"time"`
		UnixMS    int64  `json:"unix_ms"`
		Worker    int    `json:"worker"`
		Sequence  int    `json:"sequence"`
		Layout    string `json:"layout"`
	}
	snowflakeBounds struct {
		Time string `json:"time"`
		Min  int64  `json:"min"`
		Max  int64  `json:"max"`
	}
)

func withSnowflake(t testing.TB, layout snowflake.Layout, worker int) func(*httpapi.Config) {
	g, err := snowflake.NewGenerator(layout, worker)
	if err != nil {
		t.Fatal(err)
	}
	return func(c *httpapi.Config) { c.Snowflake = g }
}

func TestNewSnowflake(t *testing.T) {
	s := newServer(t, withSnowflake(t, snowflake.JS53, 9))
	before := time.Now().UnixMilli()
	first := decode[snowflakeResponse](t, s.get(t, "/snowflake"), http.StatusOK).Snowflake
	ids := decode[snowflakesResponse](t, s.get(t, "/snowflake?count=1000"), http.StatusOK).Snowflakes
	if len(ids) != 1000 {
		t.Fatalf("count=1000: %d ids", len(ids))
	}
	prev := first
	for i, id := range ids {
		if id <= prev {
			t.Fatalf("snowflakes[%d] = %d is not above %d", i, id, prev)
		}
		prev = id
	}
	p, err := snowflake.JS53.Decode(snowflake.ID(first))
	if err != nil || p.Worker != 9 || p.UnixMilli < before || p.UnixMilli > time.Now().UnixMilli()+5 {
		t.Errorf("first id %d: %+v, %v; want worker 9 at the time of the request", first, p, err)
	}
	strs := decode[snowflakeStrings](t, s.get(t, "/snowflake?count=2&int64=string"), http.StatusOK).Snowflakes
	if n, err := strconv.ParseInt(strs[0], 10, 64); err != nil || n <= prev {
		t.Errorf("int64=string: %q, want a decimal string above %d", strs, prev)
	}
}

func TestNewSnowflakeBadInput(t *testing.T) {
	s := newServer(t, withSnowflake(t, snowflake.Twitter, 1))
	for target, code := range map[string]string{
		"/snowflake?count=0":     "invalid_count",
		"/snowflake?count=10001": "invalid_count",
		"/snowflake?int64=text":  "invalid_int64",
		"/snowflake?layout=js53": "unknown_parameter",
	} {
		wantError(t, s.get(t, target), http.StatusBadRequest, code)
	}
}

// TestSnowflakeWithoutWorker: an instance holding no worker id answers 503
// with Retry-After, quickly.
func TestSnowflakeWithoutWorker(t *testing.T) {
	s := newServer(t)
	rec := s.get(t, "/snowflake")
	wantError(t, rec, http.StatusServiceUnavailable, "unavailable")
	if rec.Header().Get("Retry-After") == "" {
		t.Error("503 without Retry-After")
	}
}

func TestDecodeSnowflake(t *testing.T) {
	s := newServer(t, withSnowflake(t, snowflake.Twitter, 1))
	got := decode[snowflakeInfo](t, s.get(t, "/snowflake/119520048439119879"), http.StatusOK)
	want := snowflakeInfo{Snowflake: 119520048439119879, Time: "2026-11-26T19:30:00.123Z", UnixMS: 1795721400123, Worker: 5, Sequence: 7, Layout: "twitter"}
	if got != want {
		t.Errorf("decode = %+v, want %+v", got, want)
	}
	for _, id := range []string{"-1", "abc", "9223372036854775808", "1.5"} {
		wantError(t, s.get(t, "/snowflake/"+id), http.StatusBadRequest, "invalid_id")
	}
	js := newServer(t, withSnowflake(t, snowflake.JS53, 1))
	wantError(t, js.get(t, "/snowflake/9007199254740992"), http.StatusBadRequest, "invalid_id")
}

func TestSnowflakeRange(t *testing.T) {
	s := newServer(t, withSnowflake(t, snowflake.Twitter, 1))
	got := decode[snowflakeBounds](t, s.get(t, "/snowflake/at/2026-11-26T00:00:00Z"), http.StatusOK)
	if want := (snowflakeBounds{Time: "2026-11-26T00:00:00.000Z", Min: 119225607782400000, Max: 119225607786594303}); got != want {
		t.Errorf("at = %+v, want %+v", got, want)
	}
	for _, at := range []string{"2025-12-31T23:59:59.999Z", "2095-09-07T15:47:35.552Z", "yesterday"} {
		wantError(t, s.get(t, "/snowflake/at/"+at), http.StatusBadRequest, "invalid_time")
	}
}
