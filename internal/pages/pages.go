// Package pages walks the pages of a counters.Sequencer's List, checking each
// against the paging contract, for the tests of every implementation (the
// strategies on a real store, and the in-memory fake).
package pages

import (
	"context"
	"fmt"
	"strings"

	"github.com/seqd/seqd/counters"
)

// maxPages stops a walk whose Next never ends.
const maxPages = 1_000_000

// Walk lists every sequence that opts selects, from opts.After on, following Next
// from page to page, and returns them in order with the number of pages. It
// returns an error for the first page that breaks List's contract: more
// sequences than the limit, a name opts does not select, names not in ascending
// order or not above the page before, a Next that is not the page's last name, or
// an empty page after a Next (more were said to remain). Whether a walk missed a
// sequence is for the caller to see, by comparing what it returns with what is
// stored.
func Walk(ctx context.Context, s counters.Sequencer, opts counters.ListOptions) ([]counters.Sequence, int, error) {
	limit := opts.Limit
	if limit == 0 {
		limit = counters.DefaultListLimit
	}
	var all []counters.Sequence
	for pages := 1; pages <= maxPages; pages++ {
		page, err := s.List(ctx, opts)
		if err != nil {
			return all, pages, fmt.Errorf("page %d (after %q): %w", pages, opts.After, err)
		}
		if err := check(page, opts, limit, pages > 1); err != nil {
			return all, pages, fmt.Errorf("page %d (after %q): %w", pages, opts.After, err)
		}
		all = append(all, page.Sequences...)
		if page.Next == "" {
			return all, pages, nil
		}
		opts.After = page.Next
	}
	return all, maxPages, fmt.Errorf("more than %d pages", maxPages)
}

// check holds one page to the contract; afterNext says that the page before
// promised more.
func check(page counters.Page, opts counters.ListOptions, limit int, afterNext bool) error {
	switch n := len(page.Sequences); {
	case page.Sequences == nil:
		return fmt.Errorf("Sequences is nil, want an empty slice")
	case n > limit:
		return fmt.Errorf("%d sequences, over the limit %d", n, limit)
	case n == 0 && afterNext:
		return fmt.Errorf("empty, after a Next that said more remain")
	case n == 0 && page.Next != "":
		return fmt.Errorf("empty, with Next %q", page.Next)
	case page.Next != "" && page.Next != page.Sequences[n-1].Name:
		return fmt.Errorf("Next %q, want the page's last name %q", page.Next, page.Sequences[n-1].Name)
	}
	prev := opts.After
	for _, s := range page.Sequences {
		if s.Name <= prev {
			return fmt.Errorf("%q follows %q: want names in ascending order, above after", s.Name, prev)
		}
		if !strings.HasPrefix(s.Name, opts.Prefix) {
			return fmt.Errorf("%q does not start with the prefix %q", s.Name, opts.Prefix)
		}
		prev = s.Name
	}
	return nil
}
