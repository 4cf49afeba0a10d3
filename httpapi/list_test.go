package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/seqd/seqd/counters"
	"github.com/seqd/seqd/httpapi"
	"github.com/seqd/seqd/internal/memseq"
)

// TestListMarksInvalidCounters checks that a sequence whose stored record seqd
// cannot use is listed with its error, between the others, instead of failing
// the whole list, on a page and across pages.
func TestListMarksInvalidCounters(t *testing.T) {
	s := newServer(t)
	s.counter.Store("a", 1)
	s.counter.StoreInvalid("b", fmt.Errorf(`counters: list "b": %w: seq is a string "x"`, counters.ErrInvalidCounter))
	s.counter.Store("c", 0)
	for _, limit := range []int{1, 2, 3} {
		var got []listed
		after := ""
		for pages := 0; ; pages++ {
			target := "/seq?limit=" + strconv.Itoa(limit)
			if after != "" {
				target += "&after=" + after
			}
			page := decodeList(t, s.get(t, target))
			got = append(got, page.Sequences...)
			if after = page.Next; after == "" || pages > 3 {
				break
			}
		}
		if len(got) != 3 {
			t.Fatalf("limit %d: %+v, want 3 sequences", limit, got)
		}
		for i, want := range []struct {
			name  string
			value int64 // -1: an error instead
		}{{"a", 1}, {"b", -1}, {"c", 0}} {
			e := got[i]
			switch {
			case e.Name != want.name:
				t.Errorf("sequence %d is %q, want %q", i, e.Name, want.name)
			case want.value < 0 && (e.Value != nil || e.Error == nil || e.Error.Code != "invalid_counter" || !strings.Contains(e.Error.Message, `seq is a string "x"`)):
				t.Errorf("%s: value %v, error %+v; want no value and error code invalid_counter saying what was found", e.Name, e.Value, e.Error)
			case want.value >= 0 && (e.Value == nil || *e.Value != want.value || e.Error != nil):
				t.Errorf("%s: value %v, error %+v; want value %d", e.Name, e.Value, e.Error, want.value)
			}
		}
	}
}

// listed is one entry of GET /seq as a client reads it, with or without a value.
type listed struct {
	Name  string
	Value *int64
	Error *struct{ Code, Message string }
}

// listPage is a page of GET /seq as a client reads it; Next is nil when absent.
type listPage struct {
	Sequences []listed
	Next      string
	HasNext   bool
	Null      bool // "sequences" was null
}

func decodeList(t testing.TB, rec interface {
	Result() *http.Response
}) listPage {
	t.Helper()
	resp := rec.Result()
	var raw struct {
		Sequences json.RawMessage
		Next      *string
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d, want 200", resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(&raw); err != nil {
		t.Fatal(err)
	}
	var p listPage
	if err := json.Unmarshal(raw.Sequences, &p.Sequences); err != nil {
		t.Fatalf("sequences %s: %v", raw.Sequences, err)
	}
	p.Null = string(raw.Sequences) == "null"
	if raw.Next != nil {
		p.Next, p.HasNext = *raw.Next, true
	}
	return p
}

// pagingNames are stored names next to every boundary of the name characters'
// order (- . 0-9 A-Z _ a-z): the smallest and largest of each class, and names
// that end in "z", the largest.
var pagingNames = []string{
	"0", "9", "A", "Z", "a", "a-", "a-z", "a.", "a0", "a9", "aA", "aZ", "a_", "a_z", "az", "az-", "az.z", "azz", "azzz",
	"b", "inv.acme.2026", "inv.acme.2027", "inv.beta.2026", "z", "z-", "z.", "z0", "zZ", "z_", "zz", "zzz", "zzzz",
}

// TestListPaging checks GET /seq's pages over every limit and prefix: each name
// once, in order, next exactly when more remain, an empty page as [], and one
// List per request with the options asked.
func TestListPaging(t *testing.T) {
	s := newServer(t)
	for i, name := range pagingNames {
		s.counter.Store(name, int64(i))
	}
	prefixes := []string{"", "a", "a_", "az", "azz", "azzzz", "z", "zz", "zzzz", "a9", "aZ", "inv", "inv.acme", "inv.acme.2026", "b", "c", "Z", "9", "0"}
	for _, prefix := range prefixes {
		var want []string
		for _, name := range pagingNames {
			if strings.HasPrefix(name, prefix) {
				want = append(want, name)
			}
		}
		for _, limit := range []int{1, 2, 3, 7, len(want), len(want) + 1, 1000} {
			if limit < 1 {
				continue
			}
			got, pages := walkHTTP(t, s, prefix, limit)
			if !slices.Equal(got, want) {
				t.Errorf("prefix %q, limit %d: %q, want %q", prefix, limit, got, want)
			}
			// next on a page exactly when more follow: a full page that ends
			// the list has none, so the pages are ceil(n/limit), at least one.
			if wantPages := max(1, (len(want)+limit-1)/limit); pages != wantPages {
				t.Errorf("prefix %q, limit %d: %d pages, want %d", prefix, limit, pages, wantPages)
			}
		}
	}

	// An empty page is [], never null, and has no next.
	for _, target := range []string{"/seq?prefix=nothing", "/seq?after=zzzz", "/seq?prefix=a&after=b", "/seq?strategy=optimistic"} {
		p := decodeList(t, s.get(t, target))
		if p.Null || len(p.Sequences) != 0 || p.HasNext {
			t.Errorf("GET %s = %+v, want sequences [] and no next", target, p)
		}
	}
	// The defaults, and what reaches the sequencer: one List per request.
	many := memseq.New(counters.StrategyCounter)
	s2 := newServer(t, func(c *httpapi.Config) { c.Sequencers = []counters.Sequencer{many} })
	for i := range 250 {
		many.Store(fmt.Sprintf("n%03d", i), 1)
	}
	p := decodeList(t, s2.get(t, "/seq"))
	if len(p.Sequences) != counters.DefaultListLimit || p.Next != "n099" {
		t.Errorf("GET /seq of 250: %d sequences, next %q; want 100 and n099", len(p.Sequences), p.Next)
	}
	p = decodeList(t, s2.get(t, "/seq?after=n099&limit=1000&prefix=n"))
	if len(p.Sequences) != 150 || p.HasNext || p.Sequences[0].Name != "n100" {
		t.Errorf("the rest: %d sequences from %q, next %v", len(p.Sequences), p.Sequences[0].Name, p.HasNext)
	}
	var lists []counters.ListOptions
	for _, c := range many.Calls() {
		if c.Op == "list" {
			lists = append(lists, c.List)
		}
	}
	if want := []counters.ListOptions{{Limit: 100}, {Prefix: "n", After: "n099", Limit: 1000}}; !slices.Equal(lists, want) {
		t.Errorf("List calls %+v, want %+v", lists, want)
	}
}

// walkHTTP follows next through GET /seq?prefix=…&limit=…, checking each page
// has at most limit names, in order, above the after it asked with, and that
// a next names the page's last; it returns the names and the pages.
func walkHTTP(t *testing.T, s *server, prefix string, limit int) ([]string, int) {
	t.Helper()
	var names []string
	after := ""
	for pages := 1; pages <= 100; pages++ {
		q := url.Values{"limit": {strconv.Itoa(limit)}}
		if prefix != "" {
			q.Set("prefix", prefix)
		}
		if after != "" {
			q.Set("after", after)
		}
		p := decodeList(t, s.get(t, "/seq?"+q.Encode()))
		if p.Null || len(p.Sequences) > limit {
			t.Fatalf("%s: %d sequences (null %v), limit %d", q.Encode(), len(p.Sequences), p.Null, limit)
		}
		prev := after
		for _, e := range p.Sequences {
			if e.Name <= prev {
				t.Fatalf("%s: %q after %q", q.Encode(), e.Name, prev)
			}
			names, prev = append(names, e.Name), e.Name
		}
		if !p.HasNext {
			return names, pages
		}
		if p.Next != prev {
			t.Fatalf("%s: next %q, want the page's last name %q", q.Encode(), p.Next, prev)
		}
		after = p.Next
	}
	t.Fatalf("prefix %q, limit %d: more than 100 pages", prefix, limit)
	return nil, 0
}

// TestListRefusals checks the 400s of GET /seq and GET /status, with what each says.
func TestListRefusals(t *testing.T) {
	s := newServer(t)
	for _, path := range []string{"/seq", "/status"} {
		for _, tc := range []struct{ query, code, says string }{
			{"limit=0", "invalid_limit", "limit must be an integer from 1 to 1000"},
			{"limit=1001", "invalid_limit", "from 1 to 1000"},
			{"limit=-1", "invalid_limit", "from 1 to 1000"},
			{"limit=ten", "invalid_limit", `got "ten"`},
			{"limit=1e2", "invalid_limit", "from 1 to 1000"},
			{"limit=99999999999999999999", "invalid_limit", "from 1 to 1000"},
			{"prefix=_a", "invalid_prefix", "start of a name"},
			{"prefix=a%20b", "invalid_prefix", "start of a name"},
			{"prefix=" + strings.Repeat("x", 65), "invalid_prefix", "start of a name"},
			{"prefix=a/b", "invalid_prefix", "start of a name"},
			{"after=a%FF", "invalid_after", "UTF-8"},
			{"after=%C3", "invalid_after", "UTF-8"},
			{"limit=1&limit=2", "invalid_query", "given 2 times"},
			{"page=2", "unknown_parameter", "allowed: strategy, limit, after, prefix"},
			{"strategy=magic", "invalid_strategy", ""},
		} {
			e := wantError(t, s.get(t, path+"?"+tc.query), http.StatusBadRequest, tc.code)
			if !strings.Contains(e.Message, tc.says) {
				t.Errorf("GET %s?%s: %q, want it to say %q", path, tc.query, e.Message, tc.says)
			}
		}
	}
	// The sequencer never saw them.
	for _, c := range s.counter.Calls() {
		t.Errorf("a refused list reached the sequencer: %+v", c)
	}
	// Empty prefix and after are none, as a form sends an empty field; after
	// takes what is no name, as next may give it (a string _id another client wrote).
	for _, q := range []string{"prefix=&after=", "after=a%20b", "after=-a", "after=%C3%A9", "after=" + strings.Repeat("y", 65)} {
		if p := decodeList(t, s.get(t, "/seq?"+q)); p.Null {
			t.Errorf("GET /seq?%s = %+v", q, p)
		}
	}
}
