//go:build integration

package robustness

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/seqd/seqd/blocks"
	"github.com/seqd/seqd/client"
)

// opKind is what an operation did.
type opKind string

const (
	opNext opKind = "next" // took values
	opSet  opKind = "set"  // PUT {"value": v}: the next value will be above v
	opRead opKind = "read" // GET /seq/{name}
	opMode opKind = "mode" // PUT {"mode": …}

	opSnowflake opKind = "snowflake" // GET /snowflake?count=N: ids
)

// via is how a client reached seqd.
const (
	viaHTTP    = "http"     // a raw request to one instance
	viaGo      = "go"       // the Go client without its cache, bound to one instance
	viaGoCache = "go-cache" // the Go client with its cache: answers from its memory
	viaAdmin   = "admin"
)

// An op is one operation of the history: invoked at Start, answered at End.
// An op that is not OK has an unknown outcome (it may have taken effect), except
// a Set answered backwards, which is OK with Backwards set.
type op struct {
	Kind     opKind    `json:"kind"`
	Name     string    `json:"name"`
	Client   string    `json:"client"`
	Via      string    `json:"via"`
	Instance int       `json:"instance"` // -1: none (a caching client's answer), or several
	Gen      int       `json:"gen"`      // the instance's process that answered; -1 if unknown
	Start    time.Time `json:"start"`
	End      time.Time `json:"end"`
	OK       bool      `json:"ok"`
	Err      string    `json:"err,omitempty"`

	Count int64 `json:"count,omitempty"` // next: values asked for
	First int64 `json:"first,omitempty"` // next: values received
	Last  int64 `json:"last,omitempty"`

	Value     int64 `json:"value,omitempty"`     // set: the value set; read: the value read
	Backwards bool  `json:"backwards,omitempty"` // set: answered 409 backwards

	Mode       string    `json:"mode,omitempty"` // mode: asked for; read: as stored
	MinBlock   int64     `json:"min_block,omitempty"`
	MaxBlock   int64     `json:"max_block,omitempty"`
	StrictFrom time.Time `json:"strict_from,omitzero"` // mode, read: while the name drains

	IDs []int64 `json:"ids,omitempty"` // snowflake: the ids received, in the answer's order
}

// who names the op's client and the process that answered, for messages.
func (o op) who() string {
	switch {
	case o.Instance < 0:
		return o.Client + " (from its cache)"
	case o.Gen < 0:
		return fmt.Sprintf("%s via seqd-%d (across a restart)", o.Client, o.Instance)
	}
	return fmt.Sprintf("%s via seqd-%d gen %d", o.Client, o.Instance, o.Gen)
}

// An attempt is one HTTP request for values as it went to seqd, whoever sent
// it: a raw request, one of the Go client's (which asks again after a 503), or
// a caching client's block. Values a caching client has not handed out yet,
// and values a 503 hides from a Go client's caller, are in the attempts.
type attempt struct {
	Name   string    `json:"name"`
	Start  time.Time `json:"start"`
	End    time.Time `json:"end"`
	Status int       `json:"status"` // 0: no answer
	Err    string    `json:"err,omitempty"`
	Count  int64     `json:"count"`
	First  int64     `json:"first,omitempty"` // answered 200: the values
	Last   int64     `json:"last,omitempty"`
}

// ok reports whether seqd handed the attempt's values out.
func (a attempt) ok() bool { return a.Status == http.StatusOK && a.Err == "" }

// recorder collects the ops and attempts of a run from every goroutine.
type recorder struct {
	mu       sync.Mutex
	ops      []op
	attempts []attempt
}

func (r *recorder) add(o op) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ops = append(r.ops, o)
}

func (r *recorder) addAttempt(a attempt) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.attempts = append(r.attempts, a)
}

func (r *recorder) all() []op {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]op(nil), r.ops...)
}

func (r *recorder) allAttempts() []attempt {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]attempt(nil), r.attempts...)
}

// recording is the clients' http.RoundTripper: it records every request for
// values (/seq/{name}/next) as an attempt, its answer read whole.
type recording struct {
	next http.RoundTripper
	rec  *recorder
}

func (rt recording) RoundTrip(req *http.Request) (*http.Response, error) {
	rest, ok := strings.CutPrefix(req.URL.Path, "/seq/")
	name, next := strings.CutSuffix(rest, "/next")
	if !ok || !next {
		return rt.next.RoundTrip(req)
	}
	a := attempt{Name: name, Count: 1, Start: time.Now()}
	if c := req.URL.Query().Get("count"); c != "" {
		if _, err := fmt.Sscan(c, &a.Count); err != nil {
			a.Count = 1
		}
	}
	defer func() { a.End = time.Now(); rt.rec.addAttempt(a) }()
	resp, err := rt.next.RoundTrip(req)
	if err != nil {
		a.Err = err.Error()
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	a.Status = resp.StatusCode
	if err != nil {
		a.Err = err.Error()
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if a.Status == http.StatusOK {
		var v struct{ First, Value int64 }
		if err := json.Unmarshal(body, &v); err != nil || v.First < 1 || v.Value < v.First {
			a.Err = fmt.Sprintf("malformed answer %q", body)
		} else {
			a.First, a.Last = v.First, v.Value
		}
	}
	return resp, nil
}

// nameKind is how the admin treats a name.
type nameKind int

const (
	kindStrict    nameKind = iota // never cached
	kindSwitching                 // strict and cached in turn
	kindCached                    // cached from before the traffic starts
)

func (k nameKind) String() string {
	return [...]string{"strict", "switching", "cached"}[k]
}

// A seqName is one sequence of the run.
type seqName struct {
	name string
	kind nameKind
}

// blockBounds are the cached bounds the admin picks from: small blocks, so that
// a run reserves many, and what an instance holds stays small.
var blockBounds = [][2]int64{{1, 10}, {10, 100}, {50, 500}}

// maxBlock is the largest of blockBounds.
const maxBlock = 500

// traffic is what the clients and the admin of one run share.
type traffic struct {
	c     *cluster
	names []seqName
	rec   *recorder
	hc    *http.Client
	t0    time.Time
	// nudge, sent by a fault that cuts an instance off (a partition, a
	// pause), makes the admin switch its cached switching names to strict now,
	// so that switches meet instances that cannot see them.
	nudge chan struct{}
}

// call sends one request to in and reads the whole answer. gen is the process
// that answered, -1 if a restart came between the request and its answer.
func (tr *traffic) call(ctx context.Context, in *instance, method, path, token, body string) (status int, answer []byte, gen int, err error) {
	genBefore, upBefore := in.state()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, in.base()+path, rd)
	if err != nil {
		return 0, nil, -1, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := tr.hc.Do(req)
	if err == nil {
		answer, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		status = resp.StatusCode
	}
	genAfter, _ := in.state()
	switch {
	case upBefore && genAfter == genBefore:
		gen = genBefore
	case !upBefore && genAfter == genBefore+1: // down when sent: the next process answered
		gen = genAfter
	default:
		gen = -1
	}
	return status, answer, gen, err
}

// pause waits d, or until ctx ends: a client's pace, not a synchronisation.
func pause(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// count draws how many values a request asks for: mostly one.
func count(rng *rand.Rand) int64 {
	if rng.IntN(10) < 7 {
		return 1
	}
	return 2 + rng.Int64N(9)
}

// httpClient takes values with raw requests to any instance until ctx ends.
func (tr *traffic) httpClient(ctx context.Context, rng *rand.Rand, id int) {
	client := fmt.Sprintf("http-%d", id)
	for ctx.Err() == nil {
		name := tr.names[rng.IntN(len(tr.names))].name
		in := tr.c.insts[rng.IntN(len(tr.c.insts))]
		n := count(rng)
		method := http.MethodPost
		if rng.IntN(2) == 0 {
			method = http.MethodGet
		}
		path := "/seq/" + name + "/next"
		if n > 1 {
			path += fmt.Sprintf("?count=%d", n)
		}
		// A client gives up after 1 to 3 s, and asks again: at an instance that
		// is paused, too, so that some of its requests start late in the pause.
		rctx, cancel := context.WithTimeout(ctx, time.Duration(1000+rng.IntN(2000))*time.Millisecond)
		o := op{Kind: opNext, Name: name, Client: client, Via: viaHTTP, Instance: in.idx, Count: n, Start: time.Now()}
		status, body, gen, err := tr.call(rctx, in, method, path, "", "")
		o.End, o.Gen = time.Now(), gen
		cancel()
		if ctx.Err() != nil && err != nil {
			return // cut short by the end of the run: not an outcome
		}
		switch {
		case err != nil:
			o.Err = err.Error()
		case status != http.StatusOK:
			o.Err = fmt.Sprintf("%d %s", status, strings.TrimSpace(string(body)))
		default:
			var a struct {
				Name         string
				First, Value int64
				Count        int64
			}
			if err := json.Unmarshal(body, &a); err != nil || a.Name != name || a.Count != n || a.Value-a.First+1 != n || a.First < 1 {
				o.Err = fmt.Sprintf("malformed answer %q", body)
			} else {
				o.OK, o.First, o.Last = true, a.First, a.Value
			}
		}
		tr.rec.add(o)
		pause(ctx, time.Duration(2+rng.IntN(10))*time.Millisecond)
	}
}

// snowflakeClient takes snowflake ids from any instance until ctx ends.
func (tr *traffic) snowflakeClient(ctx context.Context, rng *rand.Rand, id int) {
	client := fmt.Sprintf("snowflake-%d", id)
	for ctx.Err() == nil {
		in := tr.c.insts[rng.IntN(len(tr.c.insts))]
		n := count(rng)
		rctx, cancel := context.WithTimeout(ctx, time.Duration(1000+rng.IntN(2000))*time.Millisecond)
		o := op{Kind: opSnowflake, Client: client, Via: viaHTTP, Instance: in.idx, Count: n, Start: time.Now()}
		status, body, gen, err := tr.call(rctx, in, http.MethodGet, fmt.Sprintf("/snowflake?count=%d", n), "", "")
		o.End, o.Gen = time.Now(), gen
		cancel()
		if ctx.Err() != nil && err != nil {
			return // cut short by the end of the run: not an outcome
		}
		switch {
		case err != nil:
			o.Err = err.Error()
		case status != http.StatusOK:
			o.Err = fmt.Sprintf("%d %s", status, strings.TrimSpace(string(body)))
		default:
			var a struct{ Snowflakes []int64 }
			if err := json.Unmarshal(body, &a); err != nil || int64(len(a.Snowflakes)) != n {
				o.Err = fmt.Sprintf("malformed answer %q", body)
			} else {
				o.OK, o.IDs = true, a.Snowflakes
			}
		}
		tr.rec.add(o)
		pause(ctx, time.Duration(2+rng.IntN(10))*time.Millisecond)
	}
}

// goClient takes values through the Go client of instance in, with its cache or
// without, until ctx ends.
func (tr *traffic) goClient(ctx context.Context, rng *rand.Rand, id int, in *instance, cached bool) error {
	opts := []client.Option{client.WithHTTPClient(tr.hc)}
	via, who, inst := viaGo, fmt.Sprintf("go-%d", id), in.idx
	if cached {
		opts = append(opts, client.WithCache(blocks.Options{MinBlock: 5, MaxBlock: 50, Target: time.Second}))
		via, who, inst = viaGoCache, fmt.Sprintf("go-cache-%d", id), -1
	}
	c, err := client.New(in.base(), opts...)
	if err != nil {
		return err
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		c.Close(ctx)
	}()
	for ctx.Err() == nil {
		name := tr.names[rng.IntN(len(tr.names))].name
		n := count(rng)
		o := op{Kind: opNext, Name: name, Client: who, Via: via, Instance: inst, Gen: -1, Count: n, Start: time.Now()}
		genBefore, upBefore := in.state()
		octx, cancel := context.WithTimeout(ctx, time.Duration(1500+rng.IntN(2500))*time.Millisecond)
		r, err := c.NextN(octx, name, n)
		cancel()
		o.End = time.Now()
		if genAfter, _ := in.state(); !cached && upBefore && genAfter == genBefore {
			o.Gen = genBefore
		}
		if ctx.Err() != nil && err != nil {
			return nil
		}
		if err != nil {
			o.Err = err.Error()
		} else {
			o.OK, o.First, o.Last = true, r.First, r.Last
		}
		tr.rec.add(o)
		pause(ctx, time.Duration(2+rng.IntN(10))*time.Millisecond)
	}
	return nil
}

// sequenceAnswer is GET /seq/{name} and the answer to PUT /seq/{name}.
type sequenceAnswer struct {
	Name       string     `json:"name"`
	Value      int64      `json:"value"`
	Mode       string     `json:"mode"`
	MinBlock   int64      `json:"min_block"`
	MaxBlock   int64      `json:"max_block"`
	StrictFrom *time.Time `json:"strict_from"`
	Blocks     *struct {
		Reserved    int64 `json:"reserved"`
		Served      int64 `json:"served"`
		Returned    int64 `json:"returned"`
		Unaccounted int64 `json:"unaccounted"`
	} `json:"blocks"`
}

// admin sends one admin request (GET, or PUT with body) to a random running
// instance and records it as o.
func (tr *traffic) admin(ctx context.Context, rng *rand.Rand, o op, body string) (op, sequenceAnswer) {
	in := tr.c.insts[rng.IntN(len(tr.c.insts))]
	for range len(tr.c.insts) { // prefer a running one; if none, the request fails
		if in.available() {
			break
		}
		in = tr.c.insts[(in.idx+1)%len(tr.c.insts)]
	}
	o.Client, o.Via, o.Instance = "admin", viaAdmin, in.idx
	method, token := http.MethodGet, ""
	if o.Kind != opRead {
		method, token = http.MethodPut, adminToken
	}
	actx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	o.Start = time.Now()
	status, answer, gen, err := tr.call(actx, in, method, "/seq/"+o.Name, token, body)
	o.End, o.Gen = time.Now(), gen
	var a sequenceAnswer
	switch {
	case err != nil:
		o.Err = err.Error()
	case status == http.StatusConflict && o.Kind == opSet && strings.Contains(string(answer), `"backwards"`):
		o.OK, o.Backwards = true, true
	case status != http.StatusOK:
		o.Err = fmt.Sprintf("%d %s", status, strings.TrimSpace(string(answer)))
	case json.Unmarshal(answer, &a) != nil || a.Name != o.Name:
		o.Err = fmt.Sprintf("malformed answer %q", answer)
	default:
		o.OK = true
		if a.StrictFrom != nil {
			o.StrictFrom = *a.StrictFrom
		}
		if o.Kind == opRead {
			o.Value, o.Mode, o.MinBlock, o.MaxBlock = a.Value, a.Mode, a.MinBlock, a.MaxBlock
		}
	}
	tr.rec.add(o)
	return o, a
}

// read reads name as stored.
func (tr *traffic) read(ctx context.Context, rng *rand.Rand, name string) (op, sequenceAnswer) {
	return tr.admin(ctx, rng, op{Kind: opRead, Name: name}, "")
}

// raise moves name forward to its value read just now plus delta: a value at or
// above the current one, never a forced Set back.
func (tr *traffic) raise(ctx context.Context, rng *rand.Rand, name string, delta int64) {
	r, _ := tr.read(ctx, rng, name)
	if !r.OK {
		return
	}
	v := r.Value + delta
	tr.admin(ctx, rng, op{Kind: opSet, Name: name, Value: v}, fmt.Sprintf(`{"value":%d}`, v))
}

// setMode switches name to mode, with block bounds drawn for cached.
func (tr *traffic) setMode(ctx context.Context, rng *rand.Rand, name, mode string) op {
	o := op{Kind: opMode, Name: name, Mode: mode}
	body := `{"mode":"strict"}`
	if mode == "cached" {
		b := blockBounds[rng.IntN(len(blockBounds))]
		o.MinBlock, o.MaxBlock = b[0], b[1]
		body = fmt.Sprintf(`{"mode":"cached","min_block":%d,"max_block":%d}`, b[0], b[1])
	}
	o, _ = tr.admin(ctx, rng, o, body)
	return o
}

// delta draws how far a Set moves a sequence: often not at all (the value just
// read, which a give-back's fence must respect), else a little or a lot.
func delta(rng *rand.Rand) int64 {
	return []int64{0, 0, 0, 1, 5, 50, 1000}[rng.IntN(7)]
}

// adminLoop is the operator: until ctx ends, every few hundred milliseconds, an
// operation on one name. A switching name stays in a mode 2 to 6 s, and before
// it leaves cached mode its value is often set to the value it has, so that the
// give-backs at the switch meet a Set at their tail.
func (tr *traffic) adminLoop(ctx context.Context, rng *rand.Rand) {
	type phase struct {
		cached bool
		until  time.Time
	}
	phases := map[string]*phase{}
	for _, n := range tr.names {
		if n.kind == kindSwitching {
			phases[n.name] = &phase{until: time.Now().Add(time.Duration(1000+rng.IntN(3000)) * time.Millisecond)}
		}
	}
	toStrict := func(name string, p *phase) {
		if rng.IntN(3) > 0 {
			tr.raise(ctx, rng, name, 0)
		}
		tr.setMode(ctx, rng, name, "strict")
		p.cached = false
		p.until = time.Now().Add(drainWait + time.Duration(1000+rng.IntN(3000))*time.Millisecond)
	}
	for ctx.Err() == nil {
		wait := time.NewTimer(time.Duration(150+rng.IntN(500)) * time.Millisecond)
		nudged := false
		select {
		case <-ctx.Done():
		case <-wait.C:
		case <-tr.nudge:
			nudged = true
		}
		wait.Stop()
		if ctx.Err() != nil {
			return
		}
		if nudged { // every cached switching name to strict, now
			for _, n := range tr.names {
				if p := phases[n.name]; p != nil && p.cached {
					toStrict(n.name, p)
				}
			}
			continue
		}
		n := tr.names[rng.IntN(len(tr.names))]
		switch n.kind {
		case kindStrict:
			if rng.IntN(2) == 0 {
				tr.read(ctx, rng, n.name)
			} else {
				tr.raise(ctx, rng, n.name, delta(rng))
			}
		case kindCached:
			switch rng.IntN(4) {
			case 0:
				tr.setMode(ctx, rng, n.name, "cached") // bounds, maybe other
			case 1:
				tr.raise(ctx, rng, n.name, delta(rng))
			default:
				tr.read(ctx, rng, n.name)
			}
		case kindSwitching:
			p := phases[n.name]
			switch {
			case time.Now().After(p.until) && p.cached:
				toStrict(n.name, p)
			case time.Now().After(p.until):
				tr.setMode(ctx, rng, n.name, "cached")
				p.cached = true
				p.until = time.Now().Add(time.Duration(1500+rng.IntN(3000)) * time.Millisecond)
			case p.cached && rng.IntN(4) == 0:
				tr.setMode(ctx, rng, n.name, "cached")
			case rng.IntN(2) == 0:
				tr.raise(ctx, rng, n.name, delta(rng))
			default:
				tr.read(ctx, rng, n.name)
			}
		}
	}
}
