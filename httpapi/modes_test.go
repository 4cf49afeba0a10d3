package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/seqd/seqd"
	"github.com/seqd/seqd/internal/memseq"
)

// TestPutMode checks PUT /seq/{name} with a mode: the sequence as stored after the
// change is the answer, a value is set before the mode, and a body refused for
// any of its fields changes nothing.
func TestPutMode(t *testing.T) {
	tests := []struct {
		name   string
		target string
		body   string
		want   sequence // for 200
		calls  []string // what reached the sequencer, for 200
	}{
		{"cached, new name", "/seq/orders", `{"mode":"cached"}`,
			sequence{Name: "orders", Value: 0, Mode: "cached"}, []string{"setMode orders cached 0..0", "current orders"}},
		{"cached with bounds", "/seq/orders", `{"mode":"cached","min_block":10,"max_block":500}`,
			sequence{Name: "orders", Mode: "cached", MinBlock: 10, MaxBlock: 500}, []string{"setMode orders cached 10..500", "current orders"}},
		{"bounds at their limits", "/seq/orders", `{"max_block":1000000,"min_block":1,"mode":"cached"}`,
			sequence{Name: "orders", Mode: "cached", MinBlock: 1, MaxBlock: 1000000}, []string{"setMode orders cached 1..1000000", "current orders"}},
		{"default bounds given", "/seq/orders", `{"mode":"strict","min_block":0,"max_block":0}`,
			sequence{Name: "orders", Mode: "strict"}, []string{"setMode orders strict 0..0", "current orders"}},
		{"value then mode", "/seq/orders", ` { "mode" : "cached" , "value" : 50 } `,
			sequence{Name: "orders", Value: 50, Mode: "cached"}, []string{"current orders", "set orders 50 false", "setMode orders cached 0..0", "current orders"}},
		{"forced value then mode", "/seq/orders?force=true", `{"value":3,"mode":"strict"}`,
			sequence{Name: "orders", Value: 3, Mode: "strict"}, []string{"set orders 3 true", "setMode orders strict 0..0", "current orders"}},
		{"escaped mode", "/seq/orders", `{"mode":"\u0063ached"}`,
			sequence{Name: "orders", Mode: "cached"}, []string{"setMode orders cached 0..0", "current orders"}},
		// Integers as decimal strings, with or without ?int64=string: what a
		// client that holds numbers as doubles sends past 2^53-1.
		{"quoted bound", "/seq/orders", `{"mode":"cached","min_block":"1","max_block":10}`,
			sequence{Name: "orders", Mode: "cached", MinBlock: 1, MaxBlock: 10}, []string{"setMode orders cached 1..10", "current orders"}},
		{"quoted value with a mode", "/seq/orders", `{"value":"5","mode":"cached"}`,
			sequence{Name: "orders", Value: 5, Mode: "cached"}, []string{"current orders", "set orders 5 false", "setMode orders cached 0..0", "current orders"}},
		{"value only keeps the mode", "/seq/orders", `{"value":7}`,
			sequence{Name: "orders", Value: 7, Mode: "strict"}, []string{"set orders 7 false", "current orders"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, withAdmin(adminToken))
			if got := decode[sequence](t, s.put(t, tt.target, tt.body), http.StatusOK); got != tt.want {
				t.Errorf("PUT %s answered %+v, want %+v", tt.body, got, tt.want)
			}
			if got := callsOf(s.counter); !slices.Equal(got, tt.calls) {
				t.Errorf("sequencer calls %q, want %q", got, tt.calls)
			}
			if got := decode[sequence](t, s.get(t, "/seq/orders"), http.StatusOK); got != tt.want {
				t.Errorf("GET after PUT = %+v, want %+v", got, tt.want)
			}
		})
	}

	refused := []struct {
		name, body, code string
	}{
		{"mode in capitals", `{"mode":"CACHED"}`, "invalid_mode"},
		{"unknown mode", `{"mode":"fast"}`, "invalid_mode"},
		{"empty mode", `{"mode":""}`, "invalid_mode"},
		{"null mode", `{"mode":null}`, "invalid_mode"},
		{"number mode", `{"mode":1}`, "invalid_mode"},
		{"object mode", `{"mode":{"name":"cached"}}`, "invalid_mode"},
		{"bounds without mode", `{"min_block":1,"max_block":10}`, "invalid_mode"},
		{"bounds with a value but no mode", `{"value":5,"min_block":1,"max_block":10}`, "invalid_mode"},
		{"min_block alone", `{"mode":"cached","min_block":10}`, "invalid_mode"},
		{"max_block alone", `{"mode":"cached","max_block":10}`, "invalid_mode"},
		{"min above max", `{"mode":"cached","min_block":11,"max_block":10}`, "invalid_mode"},
		{"min 0, max set", `{"mode":"cached","min_block":0,"max_block":10}`, "invalid_mode"},
		{"max past the limit", `{"mode":"cached","min_block":1,"max_block":1000001}`, "invalid_mode"},
		{"negative bounds", `{"mode":"cached","min_block":-10,"max_block":-1}`, "invalid_mode"},
		{"quoted bound, not as FormatInt writes it", `{"mode":"cached","min_block":"01","max_block":10}`, "invalid_mode"},
		{"fractional bound", `{"mode":"cached","min_block":1.5,"max_block":10}`, "invalid_mode"},
		{"exponent bound", `{"mode":"cached","min_block":1,"max_block":1e3}`, "invalid_mode"},
		{"null bound", `{"mode":"cached","min_block":null,"max_block":10}`, "invalid_mode"},
		{"bad mode after a good value", `{"value":5,"mode":"fast"}`, "invalid_mode"},
		{"bad value before a good mode", `{"value":-5,"mode":"cached"}`, "invalid_value"},
		{"quoted value with a mode, not as FormatInt writes it", `{"value":"+5","mode":"cached"}`, "invalid_value"},
		{"mode twice", `{"mode":"cached","mode":"strict"}`, "invalid_body"},
		{"value twice", `{"value":1,"mode":"cached","value":2}`, "invalid_body"},
		{"bound twice", `{"mode":"cached","min_block":1,"max_block":2,"min_block":1}`, "invalid_body"},
		{"mode in another case", `{"Mode":"cached"}`, "invalid_body"},
		{"unknown field", `{"mode":"cached","block":100}`, "invalid_body"},
		{"strategy in the body", `{"mode":"cached","strategy":"counter"}`, "invalid_body"},
		{"empty object", `{}`, "invalid_body"},
		{"trailing data", `{"mode":"cached"} {"mode":"strict"}`, "invalid_body"},
		{"trailing brace", `{"mode":"cached"}}`, "invalid_body"},
		{"ends early", `{"mode":"cached",`, "invalid_body"},
		{"ends after a key", `{"mode"`, "invalid_body"},
		{"trailing comma", `{"mode":"cached",}`, "invalid_body"},
		{"nested deep", `{"mode":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`, "invalid_mode"},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, withAdmin(adminToken))
			s.counter.Store("orders", 10)
			wantError(t, s.put(t, "/seq/orders", tt.body), http.StatusBadRequest, tt.code)
			if calls := s.counter.Calls(); len(calls) != 0 {
				t.Errorf("a refused body reached the sequencer: %+v", calls)
			}
		})
	}
}

// TestPutModeFailures checks what a PUT of a value and a mode does when a step
// fails: a value refused leaves the mode alone; a client token may not set one.
func TestPutModeFailures(t *testing.T) {
	s := newServer(t, withTokens(clientToken), withAdmin(adminToken))
	s.counter.Store("orders", 10)
	wantError(t, s.put(t, "/seq/orders", `{"value":5,"mode":"cached"}`), http.StatusConflict, "backwards")
	// The read first: a value with mode cached is refused before it is set when the
	// sequence has a period or format (TestNumberingValueWithCachedChangesNothing).
	if got := callsOf(s.counter); !slices.Equal(got, []string{"current orders", "set orders 5 false"}) {
		t.Errorf("after a refused value, sequencer calls %q: the mode must not be set", got)
	}
	wantError(t, s.serve(t, newRequest(http.MethodPut, "/seq/orders", `{"mode":"cached"}`,
		"Content-Type", "application/json", "Authorization", "Bearer "+clientToken)), http.StatusForbidden, "forbidden")
	if got := decode[sequence](t, s.get(t, "/seq/orders", "Authorization", "Bearer "+clientToken), http.StatusOK); got.Mode != "strict" {
		t.Errorf("orders is %+v, want still strict", got)
	}
}

// TestPutModeOptimistic checks that the optimistic strategy, which has no modes,
// refuses one before anything changes, and still takes a value.
func TestPutModeOptimistic(t *testing.T) {
	s := newServer(t, withAdmin(adminToken))
	for _, body := range []string{`{"mode":"cached"}`, `{"mode":"strict"}`, `{"value":5,"mode":"strict"}`} {
		e := wantError(t, s.put(t, "/seq/orders?strategy=optimistic", body), http.StatusBadRequest, "invalid_mode")
		if e.Message != "the optimistic strategy has no modes: its sequences are always strict" {
			t.Errorf("PUT %s: message %q", body, e.Message)
		}
	}
	if calls := s.optimistic.Calls(); len(calls) != 0 {
		t.Errorf("a refused mode reached the optimistic sequencer: %+v", calls)
	}
	want := sequence{Name: "orders", Value: 5, Mode: "strict"}
	if got := decode[sequence](t, s.put(t, "/seq/orders?strategy=optimistic", `{"value":5}`), http.StatusOK); got != want {
		t.Errorf("optimistic PUT of a value answered %+v, want %+v", got, want)
	}
}

// TestSequenceShowsMode checks GET /seq/{name} and GET /seq with modes, bounds and
// block counts: bounds only when set, blocks only once one was reserved.
func TestSequenceShowsMode(t *testing.T) {
	s := newServer(t)
	s.counter.StoreSequence(seqd.Sequence{Name: "cached", Value: 3000, Mode: seqd.ModeCached, MinBlock: 100, MaxBlock: 1000,
		Blocks: seqd.BlockCounts{Reserved: 3000, Served: 2500, Returned: 200}})
	s.counter.StoreSequence(seqd.Sequence{Name: "fresh", Mode: seqd.ModeCached})
	s.counter.StoreSequence(seqd.Sequence{Name: "plain", Value: 9})

	want := map[string]string{
		"cached": `{"name":"cached","value":3000,"mode":"cached","min_block":100,"max_block":1000,"blocks":{"reserved":3000,"served":2500,"returned":200,"unaccounted":300}}`,
		"fresh":  `{"name":"fresh","value":0,"mode":"cached"}`,
		"plain":  `{"name":"plain","value":9,"mode":"strict"}`,
	}
	for _, name := range []string{"cached", "fresh", "plain"} {
		rec := s.get(t, "/seq/"+name)
		decode[sequence](t, rec, http.StatusOK)
		if got := compactJSON(t, rec.Body.Bytes()); got != want[name] {
			t.Errorf("GET /seq/%s = %s\nwant %s", name, got, want[name])
		}
	}
	rec := s.get(t, "/seq")
	decode[listResponse](t, rec, http.StatusOK)
	wantList := `{"sequences":[` + want["cached"] + "," + want["fresh"] + "," + want["plain"] + `]}`
	if got := compactJSON(t, rec.Body.Bytes()); got != wantList {
		t.Errorf("GET /seq = %s\nwant %s", got, wantList)
	}
}

// callsOf lists a fake's calls in short.
func callsOf(s *memseq.Sequencer) []string {
	var out []string
	for _, c := range s.Calls() {
		switch c.Op {
		case "set":
			out = append(out, fmt.Sprintf("set %s %d %v", c.Name, c.Value, c.Force))
		case "setMode":
			out = append(out, fmt.Sprintf("setMode %s %s %d..%d", c.Name, c.Mode, c.MinBlock, c.MaxBlock))
		case "setNumbering":
			out = append(out, fmt.Sprintf("setNumbering %s %s %s", c.Name, c.Numbering.Period, c.Numbering.TimeZone))
		case "setNumberingValue":
			out = append(out, fmt.Sprintf("setNumberingValue %s %s %s %d %v", c.Name, c.Numbering.Period, c.Numbering.TimeZone, c.Value, c.Force))
		default:
			out = append(out, c.Op+" "+c.Name)
		}
	}
	return out
}

// compactJSON is b without insignificant space.
func compactJSON(t testing.TB, b []byte) string {
	t.Helper()
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return out.String()
}
