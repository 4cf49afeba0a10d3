package httpapi

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/seqd/seqd/counters"
)

// Scope is the sequences a token may use: some names, some prefixes, or every
// name. The zero Scope holds every name, as a token without scopes does.
//
// A scope is kept as ranges of names, sorted and disjoint: a prefix covers the
// names and prefixes that start with it, so that after ParseScope no range
// lies inside another. That makes Allows one binary search and lets a listing
// walk the ranges in the order of their names.
type Scope struct {
	restricted bool         // false: every name
	ranges     []scopeRange // sorted by from; none inside another
}

// scopeRange is one exact name, or every name that starts with a prefix.
type scopeRange struct {
	from  string // the name, or the prefix
	exact bool
}

// ErrInvalidScope is what ParseScope's errors wrap.
var ErrInvalidScope = errors.New("invalid scope")

// ParseScope reads a token's scope from its patterns: a sequence name, a prefix
// ending in * ("tenant-a.*": every name that starts with "tenant-a."), or * for
// every name. No pattern is every name. An error wraps ErrInvalidScope and says
// which pattern is wrong and why, never what it holds: a token written where a
// scope goes must not reach a log.
func ParseScope(patterns ...string) (Scope, error) {
	if len(patterns) == 0 {
		return Scope{}, nil
	}
	rs := make([]scopeRange, 0, len(patterns))
	all := false
	for i, p := range patterns {
		r, err := parsePattern(p)
		if err != nil {
			return Scope{}, fmt.Errorf("%w: scope %d: %s", ErrInvalidScope, i+1, err)
		}
		if r == nil {
			all = true
			continue
		}
		rs = append(rs, *r)
	}
	if all {
		return Scope{}, nil
	}
	return Scope{restricted: true, ranges: normalize(rs)}, nil
}

// parsePattern reads one pattern: nil for *, else its range. Its error says what
// is wrong without quoting the pattern.
func parsePattern(p string) (*scopeRange, error) {
	if p == "*" {
		return nil, nil
	}
	name, prefix := strings.CutSuffix(p, "*")
	if problem := nameProblem(name); problem != "" {
		if prefix {
			return nil, errors.New("a prefix must be the start of a sequence name followed by *: " + problem)
		}
		return nil, errors.New("a scope is a sequence name, a prefix ending in *, or *: " + problem)
	}
	return &scopeRange{from: name, exact: !prefix}, nil
}

// nameProblem says why s is not a name (counters.ValidName), without quoting it;
// "" when it is one.
func nameProblem(s string) string {
	switch {
	case counters.ValidName(s):
		return ""
	case s == "":
		return "it is empty"
	case strings.Contains(s, "*"):
		return "* may only end it"
	case len(s) > 64:
		return fmt.Sprintf("it has %d bytes, over 64", len(s))
	case !isAlnum(s[0]):
		return "it must start with a letter or a digit"
	}
	return "it holds a character other than A-Z a-z 0-9 _ . -"
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// normalize sorts rs by name and drops what another range covers: a name or a
// prefix that starts with a kept prefix, or a name given twice. Sorted, a prefix
// comes before everything that starts with it (a prefix before the equal name),
// so one pass finds what it covers.
func normalize(rs []scopeRange) []scopeRange {
	slices.SortFunc(rs, func(a, b scopeRange) int {
		if c := strings.Compare(a.from, b.from); c != 0 {
			return c
		}
		switch {
		case a.exact == b.exact:
			return 0
		case a.exact:
			return 1
		}
		return -1
	})
	out := rs[:0]
	cover := "" // the last prefix kept
	hasCover := false
	for _, r := range rs {
		if hasCover && strings.HasPrefix(r.from, cover) {
			continue
		}
		if n := len(out); n > 0 && out[n-1] == r {
			continue
		}
		out = append(out, r)
		if !r.exact {
			cover, hasCover = r.from, true
		}
	}
	return slices.Clip(out)
}

// All reports whether s holds every name.
func (s Scope) All() bool { return !s.restricted }

// Allows reports whether s holds name. The ranges are disjoint and sorted, so
// the only one that may hold name is the last that starts at or below it.
func (s Scope) Allows(name string) bool {
	if !s.restricted {
		return true
	}
	i, found := slices.BinarySearchFunc(s.ranges, name, func(r scopeRange, name string) int {
		return strings.Compare(r.from, name)
	})
	if found {
		return true // the name itself, or a prefix equal to it
	}
	if i == 0 {
		return false
	}
	r := s.ranges[i-1]
	return !r.exact && strings.HasPrefix(name, r.from)
}

// within returns the ranges of s that hold names starting with prefix, each cut
// to names that start with it: in order, disjoint, nil when there are none.
func (s Scope) within(prefix string) []scopeRange {
	if !s.restricted {
		return []scopeRange{{from: prefix}}
	}
	if prefix == "" {
		return s.ranges
	}
	var out []scopeRange
	for _, r := range s.ranges {
		switch {
		case strings.HasPrefix(r.from, prefix):
			out = append(out, r)
		case !r.exact && strings.HasPrefix(prefix, r.from):
			// prefix lies inside r, so no other range holds a name starting with it.
			return []scopeRange{{from: prefix}}
		}
	}
	return out
}

// below reports whether every name of r is at or below after, so that a page
// after it holds none of them. A name above a prefix that does not start with
// it is above every name that does.
func (r scopeRange) below(after string) bool {
	if r.exact {
		return r.from <= after
	}
	return after > r.from && !strings.HasPrefix(after, r.from)
}

// listIn lists the page opts asks for, of the names in s only. A scope of every
// name, or of one prefix, is one List, as without scopes. Otherwise the scope's
// ranges, in order of name and disjoint, are listed one after another from
// opts.After, each for what the page still lacks, until the page is full; a page
// that fills up then asks the ranges that follow for one name, to learn whether
// more follow it (Next). Each List reads only names on the page, and one more, so
// a page costs one query per range it reaches, however many names lie outside
// the scope; a token of many single names pays a query for each name it walks
// past that does not exist.
func (s Scope) listIn(ctx context.Context, seq counters.Sequencer, opts counters.ListOptions) (counters.Page, error) {
	ranges := s.within(opts.Prefix)
	if len(ranges) == 1 && !ranges[0].exact {
		opts.Prefix = ranges[0].from
		return seq.List(ctx, opts)
	}
	limit := opts.Limit
	if limit == 0 {
		limit = counters.DefaultListLimit
	}
	got := []counters.Sequence{}
	for _, r := range ranges {
		if r.below(opts.After) {
			continue
		}
		want := limit - len(got)
		full := want == 0
		if full || r.exact {
			want = 1 // a name is the first that starts with it
		}
		page, err := seq.List(ctx, counters.ListOptions{Prefix: r.from, After: opts.After, Limit: want})
		if err != nil {
			return counters.Page{}, err
		}
		found := page.Sequences
		if r.exact {
			found = slices.DeleteFunc(found, func(q counters.Sequence) bool { return q.Name != r.from })
		}
		if full {
			if len(found) > 0 {
				return counters.Page{Sequences: got, Next: got[len(got)-1].Name}, nil
			}
			continue
		}
		got = append(got, found...)
		if !r.exact && page.Next != "" { // the range has more than the page had room for
			return counters.Page{Sequences: got, Next: got[len(got)-1].Name}, nil
		}
	}
	return counters.Page{Sequences: got}, nil
}

// scopeKey holds, in the echo.Context, the Scope of a request's token when it is
// not every name; a request without one was let through with every name.
const scopeKey = "seqd.scope"

// scopeOf is the scope of the token the request was let through with.
func scopeOf(c echo.Context) Scope {
	s, _ := c.Get(scopeKey).(Scope)
	return s
}

var errOutOfScope = &Error{Code: "forbidden", Message: "this token's scope does not hold this sequence"}

// inScope refuses, with 403 forbidden, a request for a sequence outside its
// token's scope, whether or not the sequence exists. It runs after the token
// checks, which leave the scope in the context; an invalid name goes on to the
// handler, which says what is wrong with it.
func inScope(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		s := scopeOf(c)
		if s.All() {
			return next(c)
		}
		name, ok := pathParam(c, "name")
		if !ok || !counters.ValidName(name) || s.Allows(name) {
			return next(c)
		}
		return errOutOfScope
	}
}
