package main

import (
	"encoding/binary"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	"github.com/seqd/seqd/objectid"
	"github.com/seqd/seqd/uuidv7"
)

// behavior is how the fake answers one request.
type behavior int

const (
	correct     behavior = iota
	unavailable          // 503 with Retry-After
	repeat               // hand out the previous answer's values again
	skip                 // leave one sequence value out
	backwards            // oid: fresh ids, but below every id handed out so far
	swapped              // oid: two ids of the answer swapped
	malformed            // a 2xx body that breaks the API's promises
)

// fake is an httptest stand-in for seqd. Unless script says otherwise it is correct:
// ObjectIds unique and increasing, one gapless sequence. It counts what it serves.
type fake struct {
	prefix [4]byte              // leading bytes of every id: set it to make fakes overlap or not
	token  string               // when set, required as a bearer token
	script func(n int) behavior // by 1-based request number, in arrival order; nil: always correct

	mu       sync.Mutex
	counter  uint32 // last id counter handed out
	low      uint32 // last counter handed out backwards
	seq      int64  // last sequence value handed out
	last     any    // previous correct answer, for repeat
	requests int    // every request, whatever the answer
	values   int    // values in 2xx answers
	statuses map[int]int
	uris     map[string]int
	modes    []string // bodies of PUT /seq/{name}, in arrival order
	mode     string   // what GET /seq/{name} answers as the mode; "" is strict
	gets     int      // GET /seq/{name} requests, not counted in requests
}

func newFake(t *testing.T, f *fake) (*fake, string) {
	t.Helper()
	f.counter, f.low = 1<<20, 1<<20
	f.statuses, f.uris = map[int]int{}, map[string]int{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /oid", f.handle(f.oids))
	mux.HandleFunc("GET /uuid", f.handle(f.uuids))
	mux.HandleFunc("GET /seq/{name}/next", f.handle(f.next))
	mux.HandleFunc("POST /seq/{name}/next", f.handle(f.next))
	mux.HandleFunc("PUT /seq/{name}", f.setMode)
	mux.HandleFunc("GET /seq/{name}", f.sequence)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return f, srv.URL
}

// answerFunc builds the body of a 2xx answer and the number of values in it.
type answerFunc func(r *http.Request, count int, b behavior) (body any, values int)

func (f *fake) handle(answer answerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.requests++
		f.uris[r.URL.RequestURI()]++
		b := correct
		if f.script != nil {
			b = f.script(f.requests)
		}
		status := http.StatusOK
		var body any
		switch count, err := strconv.Atoi(r.URL.Query().Get("count")); {
		case f.token != "" && r.Header.Get("Authorization") != "Bearer "+f.token:
			status, body = http.StatusUnauthorized, apiError("unauthorized", "bad token")
		case r.URL.Query().Has("count") && (err != nil || count < 1 || count > 10000):
			status, body = http.StatusBadRequest, apiError("invalid_count", "bad count")
		case b == unavailable:
			w.Header().Set("Retry-After", "1")
			status, body = http.StatusServiceUnavailable, apiError("unavailable", "backend unavailable")
		default:
			var n int
			body, n = answer(r, max(count, 1), b)
			f.values += n
		}
		if status != http.StatusOK {
			f.statuses[status]++
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(body)
	}
}

func apiError(code, msg string) any {
	return map[string]any{"error": map[string]string{"code": code, "message": msg}}
}

func (f *fake) id(counter uint32) string {
	var id objectid.ID
	copy(id[:4], f.prefix[:])
	binary.BigEndian.PutUint32(id[8:], counter)
	return id.String()
}

// uuid is the version 7 UUID of counter: the prefix, then the counter in its last bytes.
func (f *fake) uuid(counter uint32) string {
	var u uuidv7.UUID
	copy(u[:4], f.prefix[:])
	u[6], u[8] = 0x70, 0x80
	binary.BigEndian.PutUint32(u[12:], counter)
	return u.String()
}

func (f *fake) oids(r *http.Request, count int, b behavior) (any, int) {
	return f.ids(r, count, b, f.id, "oid", "oids")
}

func (f *fake) uuids(r *http.Request, count int, b behavior) (any, int) {
	return f.ids(r, count, b, f.uuid, "uuid", "uuids")
}

// ids answers GET /oid or GET /uuid: {one: id} without a count, {many: [ids]} with it.
func (f *fake) ids(r *http.Request, count int, b behavior, id func(uint32) string, one, many string) (any, int) {
	if b == repeat && f.last != nil {
		return f.last, count
	}
	ids := make([]string, count)
	for i := range ids {
		if b == backwards {
			f.low--
			ids[i] = id(f.low)
			continue
		}
		f.counter++
		ids[i] = id(f.counter)
	}
	if b == swapped && count > 1 {
		ids[0], ids[1] = ids[1], ids[0]
	}
	if b == malformed {
		ids[0] = ids[0][:20]
	}
	var body any = map[string]any{many: ids}
	if !r.URL.Query().Has("count") {
		body = map[string]string{one: ids[0]}
	}
	f.last = body
	return body, count
}

func (f *fake) next(r *http.Request, count int, b behavior) (any, int) {
	if b == repeat && f.last != nil {
		return f.last, count
	}
	if b == skip {
		f.seq++
	}
	strategy := r.URL.Query().Get("strategy")
	if strategy == "" {
		strategy = "counter"
	}
	first := f.seq + 1
	f.seq += int64(count)
	body := map[string]any{"name": r.PathValue("name"), "value": f.seq, "first": first, "count": count, "strategy": strategy}
	if b == malformed {
		body["first"] = first + 1
	}
	f.last = body
	return body, count
}

// setMode takes PUT /seq/{name} with the admin token "admin", as seqd does: it
// counts as a request, and answers the sequence.
func (f *fake) setMode(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests++
	var body struct{ Mode string }
	switch {
	case r.Header.Get("Authorization") != "Bearer admin":
		w.WriteHeader(http.StatusForbidden)
		json.NewEncoder(w).Encode(apiError("forbidden", "not the admin token"))
	case json.NewDecoder(r.Body).Decode(&body) != nil || body.Mode != "strict" && body.Mode != "cached":
		w.WriteHeader(http.StatusBadRequest)
		json.NewEncoder(w).Encode(apiError("invalid_mode", "bad mode"))
	default:
		f.modes = append(f.modes, body.Mode)
		json.NewEncoder(w).Encode(map[string]any{"name": r.PathValue("name"), "value": f.seq, "mode": body.Mode})
	}
}

// sequence answers GET /seq/{name}: the sequence in f.mode, or strict.
func (f *fake) sequence(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gets++
	mode := f.mode
	if mode == "" {
		mode = "strict"
	}
	json.NewEncoder(w).Encode(map[string]any{"name": r.PathValue("name"), "value": f.seq, "mode": mode})
}

// served returns the fake's counts, under its lock.
func (f *fake) served() (requests, values int, statuses map[int]int, uris map[string]int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests, f.values, f.statuses, f.uris
}
