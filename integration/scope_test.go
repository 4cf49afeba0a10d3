//go:build integration

package integration

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/seqd/seqd/httpapi"
)

// TestScopedTokensOnStore runs the real program with scoped tokens on the store:
// each token lists, page by page, exactly the names of its scope among the
// boundary names (and the string _ids that are no names, inside a prefix), and
// names outside its scope are 403 whether they exist or not.
func TestScopedTokensOnStore(t *testing.T) {
	db := be.Database(t)
	seeded := boundaryNames()
	seedCounters(t, db, seeded)
	names := listed(seeded)

	scopes := map[string][]string{
		"token-a":      {"a*"},
		"token-mixed":  {"z", "a.*", "az*", "9", "Z_a", "a-"},
		"token-single": {"a0"},
		"token-none":   {"q.*", "missing"},
		"token-all":    {"*"},
	}
	var file strings.Builder
	for token, patterns := range scopes {
		file.WriteString(token + " " + strings.Join(patterns, " ") + "\n")
	}
	path := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(path, []byte(file.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startSeqdAt(t, seqdURI(), db.Name(), "SEQD_TOKENS_FILE="+path)

	for token, patterns := range scopes {
		scope, err := httpapi.ParseScope(patterns...)
		if err != nil {
			t.Fatal(err)
		}
		for _, prefix := range []string{"", "a", "az", "z"} {
			var want []string
			for _, n := range withPrefix(names, prefix) {
				if scope.Allows(n) {
					want = append(want, n)
				}
			}
			for _, limit := range []int{1, 3, 1000} {
				var got []string
				after := ""
				for pages := 1; ; pages++ {
					q := url.Values{"limit": {strconv.Itoa(limit)}, "prefix": {prefix}, "after": {after}}
					var p struct {
						Sequences []struct{ Name string }
						Next      *string
					}
					do(t, srv.URL(), call{path: "/seq?" + q.Encode(), token: token}).want(t, http.StatusOK, &p)
					for _, e := range p.Sequences {
						got = append(got, e.Name)
					}
					if p.Next == nil {
						break
					}
					if len(got) == 0 || *p.Next != got[len(got)-1] || pages > 2000 {
						t.Fatalf("%s: GET /seq?%s: next %v after %q", token, q.Encode(), *p.Next, got)
					}
					after = *p.Next
				}
				if !slices.Equal(got, want) {
					t.Errorf("%s (%q), prefix %q, limit %d: listed %q, want %q", token, patterns, prefix, limit, got, want)
				}
			}
		}
	}

	for _, tc := range []struct {
		token, name string
		status      int
	}{
		{"token-a", "a0", http.StatusOK},
		{"token-a", "z", http.StatusForbidden},     // exists
		{"token-a", "b.new", http.StatusForbidden}, // does not
		{"token-single", "a0", http.StatusOK},
		{"token-single", "a09", http.StatusForbidden},
		{"token-none", "a", http.StatusForbidden},
		{"token-none", "q.new", http.StatusOK},
	} {
		r := do(t, srv.URL(), call{method: http.MethodPost, path: "/seq/" + tc.name + "/next", token: tc.token})
		if r.status != tc.status {
			t.Errorf("%s: POST /seq/%s/next: %d, want %d; %s", tc.token, tc.name, r.status, tc.status, r.body)
		}
	}
}
