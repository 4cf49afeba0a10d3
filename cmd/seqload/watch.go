package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// What a sequence promises depends on its mode, and its mode may change while the
// load runs. So a counter sequence's mode is read with GET /seq/{name} from the
// first address before the load, every -mode-poll during it, and once more after
// it; each request is then judged by the mode the readings around it show
// (promise.go).

// Modes as a reading shows them. A sequence leaving cached mode reads "strict"
// with a strict_from: instances may still serve blocks under their leases until
// the drain ends, so it is not yet strict for the check.
const (
	modeStrict   = "strict"
	modeCached   = "cached"
	modeDraining = "draining"
)

// A modeReading is one GET /seq/{name}: sent and read are durations since the
// load began, on the clock of the seqOps; mode is "" when the answer told
// nothing, and err then says why.
type modeReading struct {
	sent, read time.Duration
	mode       string
	err        string
}

// watchesMode reports whether a run reads the mode: a sequence of the counter
// strategy over HTTP. The optimistic strategy has one mode, strict; with
// -client-cache every value comes from one Go client's cache, whose promise
// does not depend on the server's mode.
func (c *config) watchesMode() bool {
	return c.target == targetSeq && !c.clientCache && c.strategy != strategyOptimistic
}

// readMode sends one GET /seq/{name} to the first address, bounded by -timeout.
// A sequence not found is strict: a new name starts so.
func (l *load) readMode(ctx context.Context) modeReading {
	ctx, cancel := context.WithTimeout(ctx, l.cfg.timeout)
	defer cancel()
	u := l.cfg.addrs[0] + "/seq/" + url.PathEscape(l.cfg.name)
	if l.cfg.strategy != "" {
		u += "?strategy=" + url.QueryEscape(l.cfg.strategy)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		panic(err) // the address and name were validated with the flags
	}
	if l.cfg.token != "" {
		req.Header.Set("Authorization", "Bearer "+l.cfg.token)
	}
	r := modeReading{sent: time.Since(l.began)}
	resp, err := l.client.Do(req)
	var body []byte
	if err == nil {
		body, err = io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		resp.Body.Close()
	}
	r.read = time.Since(l.began)
	if err != nil {
		r.err = fmt.Sprintf("GET %s: %v", u, err)
		return r
	}
	var answer struct {
		Mode       string     `json:"mode"`
		StrictFrom *time.Time `json:"strict_from"`
		Error      struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	decodeErr := json.Unmarshal(body, &answer)
	switch {
	case resp.StatusCode == http.StatusNotFound && answer.Error.Code == "sequence_not_found":
		r.mode = modeStrict
	case resp.StatusCode != http.StatusOK || decodeErr != nil:
		r.err = fmt.Sprintf("GET %s: %s: %s", u, resp.Status, excerpt(body))
	case answer.Mode == modeStrict && answer.StrictFrom != nil:
		r.mode = modeDraining
	case answer.Mode == modeStrict || answer.Mode == modeCached:
		r.mode = answer.Mode
	default:
		r.err = fmt.Sprintf("GET %s: mode %q", u, answer.Mode)
	}
	return r
}

// watchMode reads the mode every interval until ctx ends, and returns the
// readings. One reading is in flight at a time, and a reading's own time is
// bounded by -timeout.
func (l *load) watchMode(ctx context.Context, every time.Duration) []modeReading {
	var readings []modeReading
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return readings
		case <-tick.C:
		}
		r := l.readMode(ctx)
		if ctx.Err() != nil {
			return readings // cut short by the end of the load, not an answer
		}
		readings = append(readings, r)
	}
}
