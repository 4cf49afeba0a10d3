package pages_test

import (
	"context"
	"strings"
	"testing"

	"github.com/seqd/seqd/counters"
	"github.com/seqd/seqd/internal/pages"
)

// scripted is a Sequencer whose List answers the pages it was given, in turn.
type scripted struct {
	counters.Sequencer
	pages []counters.Page
}

func (s *scripted) List(context.Context, counters.ListOptions) (counters.Page, error) {
	p := s.pages[0]
	s.pages = s.pages[1:]
	return p, nil
}

func page(next string, names ...string) counters.Page {
	p := counters.Page{Sequences: []counters.Sequence{}, Next: next}
	for _, n := range names {
		p.Sequences = append(p.Sequences, counters.Sequence{Name: n})
	}
	return p
}

// TestWalkCatches checks that Walk refuses every kind of page that breaks List's
// contract, and follows a good walk to its end.
func TestWalkCatches(t *testing.T) {
	opts := counters.ListOptions{Prefix: "a", Limit: 2}
	for _, tc := range []struct {
		what  string
		pages []counters.Page
		want  string // in the error; "" for none
	}{
		{"good", []counters.Page{page("ab", "aa", "ab"), page("", "ac")}, ""},
		{"nil", []counters.Page{{}}, "nil"},
		{"over the limit", []counters.Page{page("", "aa", "ab", "ac")}, "over the limit"},
		{"out of order", []counters.Page{page("", "ab", "aa")}, "ascending"},
		{"overlap", []counters.Page{page("ab", "aa", "ab"), page("", "ab")}, "ascending"},
		{"without the prefix", []counters.Page{page("", "b")}, "prefix"},
		{"next not the last", []counters.Page{page("aa", "aa", "ab")}, "last name"},
		{"empty after a next", []counters.Page{page("ab", "aa", "ab"), page("")}, "said more remain"},
		{"empty with a next", []counters.Page{page("a")}, "empty, with Next"},
	} {
		got, _, err := pages.Walk(context.Background(), &scripted{pages: tc.pages}, opts)
		switch {
		case tc.want == "" && (err != nil || len(got) != 3):
			t.Errorf("%s: %d sequences, %v; want 3", tc.what, len(got), err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want an error saying %q", tc.what, err, tc.want)
		}
	}
}
