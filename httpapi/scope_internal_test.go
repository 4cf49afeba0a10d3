package httpapi

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/seqd/seqd/counters"
	"github.com/seqd/seqd/internal/memseq"
	"github.com/seqd/seqd/internal/pages"
)

func TestParseScope(t *testing.T) {
	for _, tc := range []struct {
		patterns []string
		in, out  []string
	}{
		{nil, []string{"a", "tenant-b.x", "Z9"}, nil},
		{[]string{"*"}, []string{"a", "tenant-b.x"}, nil},
		{[]string{"orders", "*"}, []string{"a", "orders"}, nil},
		{[]string{"orders"}, []string{"orders"}, []string{"order", "orders2", "orders.x", "a", "z"}},
		{[]string{"tenant-a.*"}, []string{"tenant-a.", "tenant-a.x", "tenant-a.x.y"}, []string{"tenant-a", "tenant-b.x", "tenant-", "tenant-a-x"}},
		{[]string{"a*"}, []string{"a", "ab", "a.b"}, []string{"b", "A", "0a"}},
		// A prefix covers the names and prefixes inside it.
		{[]string{"t.a.x", "t.*", "t.a.*", "t.b"}, []string{"t.a.x", "t.", "t.b", "t.zz"}, []string{"t", "u.a"}},
		{[]string{"b", "a.*", "b", "c.x", "a.q"}, []string{"a.", "a.q", "b", "c.x"}, []string{"a", "bb", "c.", "c.xx", "c"}},
	} {
		s, err := ParseScope(tc.patterns...)
		if err != nil {
			t.Errorf("ParseScope(%q): %v", tc.patterns, err)
			continue
		}
		for _, name := range tc.in {
			if !s.Allows(name) {
				t.Errorf("ParseScope(%q) does not allow %q", tc.patterns, name)
			}
		}
		for _, name := range tc.out {
			if s.Allows(name) {
				t.Errorf("ParseScope(%q) allows %q", tc.patterns, name)
			}
		}
	}
	// The ranges left are disjoint: none starts with another prefix.
	s, _ := ParseScope("t.a.x", "t.*", "t.a.*", "t.b", "u", "u*", "v.1", "v.1")
	want := []scopeRange{{from: "t."}, {from: "u"}, {from: "v.1", exact: true}}
	if !slices.Equal(s.ranges, want) {
		t.Errorf("ranges %+v, want %+v", s.ranges, want)
	}
}

// A pattern that is wrong is named by its place and what is wrong with it, never
// by what it holds: a token written in a scope's place must not reach a log.
func TestParseScopeErrors(t *testing.T) {
	for _, tc := range []struct {
		pattern, want string
	}{
		{"secret/token", "A-Z a-z 0-9"},
		{"**", "* may only end it"},
		{"a*b", "* may only end it"},
		{"*a", "* may only end it"},
		{"secret*token*", "* may only end it"},
		{".secret", "start with a letter or a digit"},
		{"_secret*", "start with a letter or a digit"},
		{strings.Repeat("s", 65), "over 64"},
		{"", "empty"},
	} {
		_, err := ParseScope("ok", tc.pattern)
		if !errors.Is(err, ErrInvalidScope) || !strings.Contains(err.Error(), "scope 2") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseScope(ok, %q): %v, want ErrInvalidScope at scope 2 saying %q", tc.pattern, err, tc.want)
		}
		if err != nil && (strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "sss")) {
			t.Errorf("ParseScope(ok, %q): %v quotes the pattern", tc.pattern, err)
		}
	}
}

// scopedLister is a Sequencer whose List lists within a scope, for pages.Walk.
type scopedLister struct {
	*memseq.Sequencer
	scope Scope
}

func (s scopedLister) List(ctx context.Context, opts counters.ListOptions) (counters.Page, error) {
	return s.scope.listIn(ctx, s.Sequencer, opts)
}

// Walking the pages of a scope sees every name in it once, in order, and none
// outside, whatever the scope, the page size and the prefix; each page keeps
// List's contract (pages.Walk checks it). Names and scopes are drawn from a
// small alphabet, so that prefixes nest and overlap.
func TestListInScope(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rnd := rand.New(rand.NewPCG(seed, 0))
	word := func(n int) string {
		b := make([]byte, 1+rnd.IntN(n))
		for i := range b {
			b[i] = "ab."[rnd.IntN(3)]
		}
		b[0] = "abc"[rnd.IntN(3)]
		return string(b)
	}
	for round := range 300 {
		seq := memseq.New(counters.StrategyCounter)
		var stored []string
		for range rnd.IntN(60) {
			name := word(5)
			seq.Store(name, 1)
			stored = append(stored, name)
		}
		var patterns []string
		for range 1 + rnd.IntN(4) {
			p := word(3)
			if rnd.IntN(2) == 0 {
				p += "*"
			}
			patterns = append(patterns, p)
		}
		scope, err := ParseScope(patterns...)
		if err != nil {
			t.Fatal(err)
		}
		prefix := ""
		if rnd.IntN(3) == 0 {
			prefix = word(2)
		}
		var want []string
		for _, name := range stored {
			if scope.Allows(name) && strings.HasPrefix(name, prefix) && !slices.Contains(want, name) {
				want = append(want, name)
			}
		}
		slices.Sort(want)
		for _, limit := range []int{1, 2, 3, 7, 100} {
			what := fmt.Sprintf("round %d: scope %q, prefix %q, limit %d", round, patterns, prefix, limit)
			got, _, err := pages.Walk(context.Background(), scopedLister{seq, scope}, counters.ListOptions{Prefix: prefix, Limit: limit})
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			var names []string
			for _, s := range got {
				names = append(names, s.Name)
			}
			if !slices.Equal(names, want) {
				t.Fatalf("%s: walked %q, want %q", what, names, want)
			}
		}
	}
}

// A scope of one prefix lists with one List of that prefix, as a token without
// scope does; a scope of several ranges asks each range only for what the page
// still lacks, and stops at the range that fills it.
func TestListInScopeQueries(t *testing.T) {
	seq := memseq.New(counters.StrategyCounter)
	for _, name := range []string{"a.1", "a.2", "a.3", "b.1", "b.2", "c", "d.1"} {
		seq.Store(name, 1)
	}
	lists := func(scope Scope, opts counters.ListOptions) ([]counters.ListOptions, counters.Page) {
		t.Helper()
		before := len(seq.Calls())
		page, err := scope.listIn(context.Background(), seq, opts)
		if err != nil {
			t.Fatal(err)
		}
		var got []counters.ListOptions
		for _, c := range seq.Calls()[before:] {
			got = append(got, c.List)
		}
		return got, page
	}
	one, _ := ParseScope("a.*")
	calls, page := lists(one, counters.ListOptions{Limit: 2})
	if want := []counters.ListOptions{{Prefix: "a.", Limit: 2}}; !slices.Equal(calls, want) || page.Next != "a.2" {
		t.Errorf("one prefix: lists %+v, next %q; want %+v, next a.2", calls, page.Next, want)
	}
	calls, _ = lists(one, counters.ListOptions{Prefix: "a.2"})
	if want := []counters.ListOptions{{Prefix: "a.2"}}; !slices.Equal(calls, want) {
		t.Errorf("one prefix, a prefix inside it: lists %+v, want %+v", calls, want)
	}

	several, _ := ParseScope("a.*", "c", "d.*")
	calls, page = lists(several, counters.ListOptions{Limit: 4})
	want := []counters.ListOptions{{Prefix: "a.", Limit: 4}, {Prefix: "c", Limit: 1}, {Prefix: "d.", Limit: 1}}
	// a.1 a.2 a.3 and c fill the page; d. is asked for one name, to learn that more follow.
	if !slices.Equal(calls, want) || page.Next != "c" {
		t.Errorf("several: lists %+v, next %q; want %+v, next c", calls, page.Next, want)
	}
	calls, page = lists(several, counters.ListOptions{After: "a.3", Limit: 4})
	want = []counters.ListOptions{{Prefix: "a.", After: "a.3", Limit: 4}, {Prefix: "c", After: "a.3", Limit: 1}, {Prefix: "d.", After: "a.3", Limit: 3}}
	if !slices.Equal(calls, want) || page.Next != "" || len(page.Sequences) != 2 {
		t.Errorf("several, after a.3: lists %+v, page %+v; want %+v, c and d.1", calls, page, want)
	}
	calls, _ = lists(several, counters.ListOptions{After: "c"})
	if want := []counters.ListOptions{{Prefix: "d.", After: "c", Limit: counters.DefaultListLimit}}; !slices.Equal(calls, want) {
		t.Errorf("several, after c: lists %+v, want %+v (the ranges before after not asked)", calls, want)
	}
	calls, page = lists(several, counters.ListOptions{Prefix: "b"})
	if len(calls) != 0 || len(page.Sequences) != 0 || page.Sequences == nil {
		t.Errorf("a prefix outside the scope: lists %+v, page %+v; want no list and an empty page", calls, page)
	}
}

// The keyring keeps digests only, and finds each token whatever its place.
func TestKeyringKeepsDigests(t *testing.T) {
	scope, _ := ParseScope("a.*")
	clients := []Token{{Secret: "first-secret"}, {Secret: "first-secret-longer", Scope: scope}, {Secret: "last-secret"}}
	admins := []Token{{Secret: "admin-secret"}}
	k, err := NewKeyring(clients, admins)
	if err != nil {
		t.Fatal(err)
	}
	set := k.keys.Load()
	if dump := fmt.Sprintf("%+v", *set); strings.Contains(dump, "secret") {
		t.Errorf("the keyring holds a token: %s", dump)
	}
	for _, tc := range []struct {
		token string
		role  role
		all   bool
	}{
		{"first-secret", roleClient, true},
		{"first-secret-longer", roleClient, false},
		{"last-secret", roleClient, true},
		{"admin-secret", roleAdmin, true},
		{"first-secre", roleNone, false},
		{"", roleNone, false},
	} {
		r := httptest.NewRequest(http.MethodGet, "/oid", nil)
		r.Header.Set("Authorization", "Bearer "+tc.token)
		e, _ := set.identify(r)
		got := roleNone
		if e != nil {
			got = e.role
			if e.scope.All() != tc.all {
				t.Errorf("%q: scope of every name %v, want %v", tc.token, e.scope.All(), tc.all)
			}
		}
		if got != tc.role {
			t.Errorf("%q: role %v, want %v", tc.token, got, tc.role)
		}
	}
	if err := k.Set(clients, append(admins, Token{Secret: "last-secret"})); err == nil ||
		strings.Contains(err.Error(), "secret") || !strings.Contains(err.Error(), "admin token 2 is the same as client token 3") {
		t.Errorf("a token twice: %v", err)
	}
	if c, a := k.Counts(); c != 3 || a != 1 {
		t.Errorf("after a refused Set: %d clients, %d admins; want the 3 and 1 before", c, a)
	}
}
