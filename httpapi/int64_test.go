package httpapi_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/seqd/seqd"
)

// TestInt64Strings checks ?int64=string, the form a JavaScript client reads
// without loss: every int64 field of every /seq answer is its decimal string, a
// PUT body may give its integers so, and values past 2^53 come back exact.
func TestInt64Strings(t *testing.T) {
	s := newServer(t, withAdmin(adminToken))
	const top = "9223372036854775807" // 2^63-1: a double reads it as 9223372036854775808

	rec := s.put(t, "/seq/big?int64=string", `{"value":"9007199254740993","mode":"cached","min_block":"10","max_block":"1000"}`)
	wantStrings(t, rec, `{"name":"big","value":"9007199254740993","mode":"cached","min_block":"10","max_block":"1000"}`)
	rec = s.put(t, "/seq/big?int64=string&force=true", `{"value":9007199254740991}`) // numbers up to 2^53-1 still do
	wantStrings(t, rec, `{"name":"big","value":"9007199254740991","mode":"cached","min_block":"10","max_block":"1000"}`)
	// Past 2^53-1, a number from a client that holds doubles may be rounded already
	// (JSON.stringify(9007199254740993) is "9007199254740992"), with or without
	// ?int64=string (a generated client types the field number | string either
	// way): refused, the value kept.
	for _, query := range []string{"?int64=string", "?int64=number", ""} {
		for _, v := range []string{"9007199254740992", "9223372036854775807"} {
			rec = s.put(t, "/seq/big"+query, `{"value":`+v+`}`)
			if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), `"invalid_value"`) || !strings.Contains(rec.Body.String(), `send it as a string, \"`+v+`\"`) {
				t.Errorf("PUT /seq/big%s value %s as a number: %d %s; want 400 invalid_value saying to send a string", query, v, rec.Code, rec.Body)
			}
		}
	}
	wantStrings(t, s.get(t, "/seq/big?int64=string"), `{"name":"big","value":"9007199254740991","mode":"cached","min_block":"10","max_block":"1000"}`)

	rec = s.put(t, "/seq/orders?int64=string&force=true", `{"value":"9223372036854775806"}`)
	wantStrings(t, rec, `{"name":"orders","value":"9223372036854775806","mode":"strict"}`)
	rec = s.serve(t, newRequest(http.MethodPost, "/seq/orders/next?int64=string", ""))
	wantStrings(t, rec, `{"name":"orders","value":"`+top+`","first":"`+top+`","count":"1","strategy":"counter"}`)
	wantStrings(t, s.get(t, "/seq/orders?int64=string"), `{"name":"orders","value":"`+top+`","mode":"strict"}`)
	wantStrings(t, s.get(t, "/seq?int64=string&prefix=orders"), `{"sequences":[{"name":"orders","value":"`+top+`","mode":"strict"}]}`)

	s.counter.StoreSequence(seqd.Sequence{Name: "blocks", Value: 5000, Mode: seqd.ModeCached,
		Blocks: seqd.BlockCounts{Reserved: 5000, Served: 10, Returned: 1}})
	s.counter.SetBlockStatus("blocks", cachedStatus)
	rec = s.get(t, "/seq/blocks/status?int64=string")
	var status map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &status); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"block_size", "served", "skipped", "returned"} {
		if _, ok := status[k].(string); !ok {
			t.Errorf("status %s = %v (%T), want a string", k, status[k], status[k])
		}
	}
	if _, ok := status["rate"].(float64); !ok {
		t.Errorf("status rate = %v (%T): a float64 stays a number", status["rate"], status["rate"])
	}
	if cur, ok := status["current"].(map[string]any); ok {
		if _, ok := cur["first"].(string); !ok {
			t.Errorf("status current.first = %v (%T), want a string", cur["first"], cur["first"])
		}
	}
	rec = s.get(t, "/seq/blocks?int64=string")
	if !strings.Contains(rec.Body.String(), `"blocks":{"reserved":"5000","served":"10","returned":"1","unaccounted":"4989"}`) {
		t.Errorf("GET /seq/blocks?int64=string: %s", rec.Body)
	}

	// The default, and ?int64=number, answer numbers; a body's strings are read
	// whatever the parameter says.
	wantStrings(t, s.get(t, "/seq/orders?int64=number"), `{"name":"orders","value":`+top+`,"mode":"strict"}`)
	wantStrings(t, s.put(t, "/seq/top?int64=number", `{"value":"`+top+`"}`), `{"name":"top","value":`+top+`,"mode":"strict"}`)
	wantStrings(t, s.put(t, "/seq/small", `{"value":"5","mode":"cached","min_block":"10","max_block":"1000"}`), `{"name":"small","value":5,"mode":"cached","min_block":10,"max_block":1000}`)
	for _, query := range []string{"?int64=string", ""} {
		for _, v := range []string{`"05"`, `"+5"`, `" 5"`, `"5 "`, `"-1"`, `"9223372036854775808"`, `""`, `"0x5"`} {
			wantError(t, s.put(t, "/seq/orders"+query, `{"value":`+v+`}`), http.StatusBadRequest, "invalid_value")
		}
	}
	wantError(t, s.get(t, "/seq/orders?int64=bigint"), http.StatusBadRequest, "invalid_int64")
	wantError(t, s.get(t, "/status?int64=string"), http.StatusBadRequest, "unknown_parameter")
}

// wantStrings asserts a 200 whose JSON is want, byte for byte.
func wantStrings(t *testing.T, rec *httptest.ResponseRecorder, want string) {
	t.Helper()
	if got := strings.TrimSpace(rec.Body.String()); rec.Code != http.StatusOK || got != want {
		t.Errorf("status %d, body %s\nwant %s", rec.Code, got, want)
	}
}
