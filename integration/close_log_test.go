//go:build integration

package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seqd/seqd"
	"github.com/seqd/seqd/blocks"
	"github.com/seqd/seqd/counters"
)

// lineLog is a log's output, one JSON record a line, safe for the Counter's
// goroutines.
type lineLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lineLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// records returns the records whose msg contains what.
func (l *lineLog) records(t *testing.T, what string) []map[string]any {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for line := range strings.Lines(l.buf.String()) {
		var r map[string]any
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if msg, _ := r["msg"].(string); strings.Contains(msg, what) {
			out = append(out, r)
		}
	}
	return out
}

// Close says what it gave back in one line at info: how many names, tails
// given back and their values, reports of what was served, and the tails
// it could not give back and why (here another instance wrote past one).
func TestCloseLogsWhatItGaveBack(t *testing.T) {
	ctx := testContext(t)
	db := be.Database(t)
	lines := &lineLog{}
	opts := counters.Options{ModeRefresh: time.Hour, BlockLease: time.Minute, Blocks: blocks.Options{MinBlock: 100, MaxBlock: 100}}
	aOpts := opts
	aOpts.Logger = slog.New(slog.NewJSONHandler(lines, nil))
	a := counters.NewCounter(db, aOpts)
	other := counters.NewCounter(be.NewClient(t).Database(db.Name()), opts)
	t.Cleanup(func() { a.Close(context.Background()); other.Close(context.Background()) })
	for _, name := range []string{"x", "y", "z"} {
		mustSetMode(t, a, name, seqd.ModeCached, 0, 0)
		mustNext(t, a, name, 1) // a holds 2…100
	}
	mustNext(t, other, "y", 101) // a's tail of y no longer ends the sequence
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	recs := lines.records(t, "given back")
	if len(recs) != 1 {
		t.Fatalf("Close logged %d lines about what it gave back, want 1:\n%s", len(recs), &lines.buf)
	}
	r := recs[0]
	want := map[string]any{"level": "INFO", "names": 3.0, "given_back": 2.0, "values_returned": 198.0, "served_reports": 3.0, "not_given_back": 1.0}
	for k, v := range want {
		if r[k] != v {
			t.Errorf("%s = %v, want %v (the line: %v)", k, r[k], v, r)
		}
	}
	if why, _ := r["not_given_back_why"].(string); !strings.Contains(why, "reserved past") {
		t.Errorf("not_given_back_why = %q, want the reason", why)
	}
}

// A Close whose time has run out names, in its one line, the sequences it
// could not give back, with the error.
func TestCloseLogsWhatItCouldNotGiveBack(t *testing.T) {
	ctx := testContext(t)
	lines := &lineLog{}
	a := counters.NewCounter(be.Database(t), counters.Options{ModeRefresh: time.Hour, BlockLease: time.Minute,
		Blocks: blocks.Options{MinBlock: 100, MaxBlock: 100}, Logger: slog.New(slog.NewJSONHandler(lines, nil))})
	for _, name := range []string{"x", "y"} {
		mustSetMode(t, a, name, seqd.ModeCached, 0, 0)
		mustNext(t, a, name, 1)
	}
	ended, cancel := context.WithCancel(ctx)
	cancel()
	if err := a.Close(ended); err == nil {
		t.Fatal("Close with its context ended: no error")
	}
	recs := lines.records(t, "given back")
	if len(recs) != 1 {
		t.Fatalf("Close logged %d lines about what it gave back, want 1:\n%s", len(recs), &lines.buf)
	}
	r := recs[0]
	names, _ := r["failed_names"].([]any)
	if r["given_back"] != 0.0 || r["failed"] != 2.0 || len(names) != 2 || names[0] != "x" || names[1] != "y" || r["err"] == nil {
		t.Errorf("the line: %v; want given_back 0, failed 2, failed_names [x y], and the error", r)
	}
}
