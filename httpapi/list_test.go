package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/seqd/seqd/counters"
	"github.com/seqd/seqd/httpapi"
)

// listing is a Sequencer whose List returns a fixed list; nothing else is called.
type listing struct {
	counters.Sequencer
	list []counters.Sequence
}

func (l listing) Strategy() string { return counters.StrategyCounter }

func (l listing) List(context.Context) ([]counters.Sequence, error) { return l.list, nil }

// TestListMarksInvalidCounters checks that a sequence whose stored record seqd
// cannot use is listed with its error, between the others, instead of failing
// the whole list.
func TestListMarksInvalidCounters(t *testing.T) {
	bad := fmt.Errorf(`counters: list "b": %w: seq is a string "x"`, counters.ErrInvalidCounter)
	s := newServer(t, func(c *httpapi.Config) {
		c.Sequencers = []counters.Sequencer{listing{list: []counters.Sequence{
			{Name: "a", Value: 1}, {Name: "b", Err: bad}, {Name: "c", Value: 0},
		}}}
	})
	rec := s.get(t, "/seq")
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /seq = %d %s, want 200", rec.Code, rec.Body)
	}
	var got struct {
		Sequences []struct {
			Name  string
			Value *int64
			Error *struct{ Code, Message string }
		}
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Sequences) != 3 {
		t.Fatalf("GET /seq = %s, want 3 sequences", rec.Body)
	}
	for i, want := range []struct {
		name  string
		value int64 // -1: an error instead
	}{{"a", 1}, {"b", -1}, {"c", 0}} {
		e := got.Sequences[i]
		switch {
		case e.Name != want.name:
			t.Errorf("sequence %d is %q, want %q", i, e.Name, want.name)
		case want.value < 0 && (e.Value != nil || e.Error == nil || e.Error.Code != "invalid_counter" || e.Error.Message == ""):
			t.Errorf("%s: value %v, error %+v; want no value and error code invalid_counter", e.Name, e.Value, e.Error)
		case want.value >= 0 && (e.Value == nil || *e.Value != want.value || e.Error != nil):
			t.Errorf("%s: value %v, error %+v; want value %d", e.Name, e.Value, e.Error, want.value)
		}
	}
}

// TestInvalidCounterIsNotInternal checks that a request for a sequence whose
// record seqd cannot use gets a 500 that says so, without Retry-After: asking
// again will not help.
func TestInvalidCounterIsNotInternal(t *testing.T) {
	s := newServer(t)
	s.counter.FailWith(fmt.Errorf(`counters: next "orders": %w: the seq of "orders" is a double 41.5`, counters.ErrInvalidCounter))
	for _, target := range []string{"/seq/orders/next", "/seq/orders"} {
		rec := s.get(t, target)
		wantError(t, rec, http.StatusInternalServerError, "invalid_counter")
		if ra := rec.Header().Get("Retry-After"); ra != "" {
			t.Errorf("GET %s: Retry-After %q, want none", target, ra)
		}
		// The operator learns which sequence and what is stored there.
		if body := rec.Body.String(); !strings.Contains(body, `of \"orders\" is a double 41.5`) {
			t.Errorf("GET %s: %s, want the message to name the sequence and what was found", target, body)
		}
	}
}
