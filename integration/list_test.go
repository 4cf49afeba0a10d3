//go:build integration

package integration

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/seqd/seqd"
	"github.com/seqd/seqd/client"
	"github.com/seqd/seqd/counters"
	"github.com/seqd/seqd/internal/pages"
)

// boundaryChars are the name characters at the edges of their classes, in byte
// order: "-" and "." (the smallest), the digits', the capitals', "_" and the
// small letters', "z" the largest of all.
const boundaryChars = "-.09AZ_az"

// boundaryNames are every name of one to three boundary characters (every
// neighbour, in byte order, of every other, and prefixes that end in each) and
// the longest names that start with "a" and with "z".
func boundaryNames() []string {
	var names []string
	var grow func(prefix string)
	grow = func(prefix string) {
		if prefix != "" && seqd.ValidName(prefix) {
			names = append(names, prefix)
		}
		if len(prefix) == 3 {
			return
		}
		for i := range len(boundaryChars) {
			grow(prefix + boundaryChars[i:i+1])
		}
	}
	grow("")
	// The longest names of a prefix that ends in "z": a bound made of a few more
	// "z"s would miss them.
	names = append(names, "azzzzz", "a"+strings.Repeat("z", 63), strings.Repeat("z", 64))
	slices.Sort(names)
	return names
}

// invalidRecords are counter documents whose names are sequences seqd cannot
// use: listed with their error, in their place.
var invalidRecords = map[string]any{"a_": "12", "az.": 41.5, "zz": int64(-1)}

// strangeIDs are string _ids of counter documents that are no names, as another
// client may write them: listed in their place, marked unusable.
var strangeIDs = []string{"a b", "_a", "zz~", "é", "a/b", strings.Repeat("a", 65)}

// unusable says whether the listed name is one seqd cannot use.
func unusable(name string) bool {
	_, bad := invalidRecords[name]
	return bad || !seqd.ValidName(name)
}

// listed is what a listing holds after seedCounters(names): names and
// strangeIDs, in order.
func listed(names []string) []string {
	return slices.Sorted(slices.Values(append(slices.Clone(names), strangeIDs...)))
}

// seedCounters inserts a counter document for each name straight into db's
// counters, the invalidRecords' with their seq, documents with the strangeIDs,
// and documents whose _id is "" or no string, which List leaves out.
func seedCounters(t *testing.T, db *mongo.Database, names []string) {
	t.Helper()
	var docs []any
	for i, name := range names {
		var seq any = int64(i)
		if bad, ok := invalidRecords[name]; ok {
			seq = bad
		}
		docs = append(docs, bson.D{{Key: "_id", Value: name}, {Key: "seq", Value: seq}, {Key: "note", Value: strings.Repeat("x", 100)}})
	}
	for _, id := range strangeIDs {
		docs = append(docs, bson.D{{Key: "_id", Value: id}, {Key: "seq", Value: int64(1)}})
	}
	for _, id := range []any{"", int64(7), bson.D{{Key: "n", Value: "a"}}, bson.Binary{Data: []byte("a")}} {
		docs = append(docs, bson.D{{Key: "_id", Value: id}, {Key: "seq", Value: int64(1)}})
	}
	if _, err := db.Collection(counters.CounterCollection).InsertMany(testContext(t), docs); err != nil {
		t.Fatal(err)
	}
}

// withPrefix is the names that start with prefix, in order.
func withPrefix(names []string, prefix string) []string {
	var out []string
	for _, n := range names {
		if strings.HasPrefix(n, prefix) {
			out = append(out, n)
		}
	}
	return out
}

// checkWalk walks s's pages of prefix from after and checks that they hold want
// (in order, each once), what seqd cannot use marked and the rest with the values
// seedCounters gave them.
func checkWalk(t *testing.T, s counters.Sequencer, opts counters.ListOptions, want []string, values map[string]int64) {
	t.Helper()
	got, n, err := pages.Walk(testContext(t), s, opts)
	if err != nil {
		t.Fatalf("%+v: %v", opts, err)
	}
	var names []string
	for _, seq := range got {
		names = append(names, seq.Name)
		bad := unusable(seq.Name)
		switch {
		case bad && !errors.Is(seq.Err, counters.ErrInvalidCounter):
			t.Errorf("%+v: %s = %+v, want it marked ErrInvalidCounter", opts, seq.Name, seq)
		case !bad && (seq.Err != nil || values != nil && seq.Value != values[seq.Name]):
			t.Errorf("%+v: %s = %+v, want value %d", opts, seq.Name, seq, values[seq.Name])
		}
	}
	if !slices.Equal(names, want) {
		t.Errorf("%+v: %d pages of %d names %q, want %d names %q", opts, n, len(names), names, len(want), want)
	}
}

// TestListCounterPages pages through counter documents at every boundary of the
// name characters' order: every prefix of one and two characters (those ending
// in "z", the largest, among them) in one page, and walks of small pages after
// several starting points, each name once and in order, the invalid records and
// the string _ids that are no names in their place, marked, and other _ids left
// out.
func TestListCounterPages(t *testing.T) {
	db := be.Database(t)
	seeded := boundaryNames()
	seedCounters(t, db, seeded)
	names := listed(seeded)
	values := map[string]int64{}
	for i, n := range seeded {
		values[n] = int64(i)
	}
	c := counters.NewCounter(db, counters.Options{})

	checkWalk(t, c, counters.ListOptions{Limit: counters.MaxListLimit}, names, values)
	checkWalk(t, c, counters.ListOptions{}, names, values) // the default, 100 a page
	for _, prefix := range seeded {
		if len(prefix) <= 2 {
			checkWalk(t, c, counters.ListOptions{Prefix: prefix, Limit: counters.MaxListLimit}, withPrefix(names, prefix), values)
		}
	}
	for _, tc := range []struct {
		prefix, after string
		limit         int
	}{
		{"", "", 13}, {"", "a", 10}, {"", "zz", 3}, {"", "zzz", 5},
		{"a", "", 3}, {"a", "", 9}, {"a", "a-", 4}, {"a", "A", 4}, {"az", "", 2}, {"az", "az.", 2}, {"az", "azz", 1},
		{"z", "", 3}, {"zz", "", 1}, {"zzz", "", 1}, {"zzz", "zzz", 1}, {"Z", "", 5}, {"9", "", 5}, {"0", "", 2}, {"a_", "", 2},
		{"", "a b", 5}, {"a", "a/b", 4}, {"", "zz~", 2}, {"", "é", 2}, {"", "_a", 50},
	} {
		var want []string
		for _, n := range withPrefix(names, tc.prefix) {
			if n > tc.after {
				want = append(want, n)
			}
		}
		checkWalk(t, c, counters.ListOptions{Prefix: tc.prefix, After: tc.after, Limit: tc.limit}, want, values)
	}
	for _, opts := range []counters.ListOptions{{Limit: -1}, {Limit: counters.MaxListLimit + 1}, {Prefix: "_a"}, {After: "a\xff"}} {
		if _, err := c.List(testContext(t), opts); err == nil {
			t.Errorf("List(%+v) = nil error", opts)
		}
	}
}

// TestListOptimisticPages pages through ledgers: empty ones and other collections
// left out, an unusable ledger marked, prefixes ending in "z".
func TestListOptimisticPages(t *testing.T) {
	ctx := testContext(t)
	db := be.Database(t)
	o := counters.NewOptimistic(db, counters.Options{})
	names := []string{"a", "a-", "a.z", "aZ", "a_", "az", "azz", "b", "z", "z-", "zz", "zzz"}
	values := map[string]int64{}
	for i, n := range names {
		for range i%3 + 1 {
			values[n]++
			if _, err := o.Next(ctx, n); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, coll := range []string{counters.LedgerPrefix + "empty", "other", counters.LedgerPrefix + "_x"} {
		if err := db.CreateCollection(ctx, coll); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Collection(counters.LedgerPrefix+"huge").InsertOne(ctx, bson.D{{Key: "_id", Value: 1e300}}); err != nil {
		t.Fatal(err)
	}
	all := slices.Sorted(slices.Values(append(slices.Clone(names), "huge")))
	for _, limit := range []int{1, 2, 5, 100} {
		for _, prefix := range []string{"", "a", "az", "z", "zz", "h", "e"} {
			got, _, err := pages.Walk(ctx, o, counters.ListOptions{Prefix: prefix, Limit: limit})
			if err != nil {
				t.Fatal(err)
			}
			var gotNames []string
			for _, s := range got {
				gotNames = append(gotNames, s.Name)
				if (s.Name == "huge") != errors.Is(s.Err, counters.ErrInvalidCounter) || s.Err == nil && s.Value != values[s.Name] {
					t.Errorf("limit %d, prefix %q: %+v, want value %d or huge marked", limit, prefix, s, values[s.Name])
				}
			}
			if want := withPrefix(all, prefix); !slices.Equal(gotNames, want) {
				t.Errorf("limit %d, prefix %q: %q, want %q", limit, prefix, gotNames, want)
			}
		}
	}
}

// TestListHTTP pages through GET /seq and /status of the real program on the
// store, and through the Go client: next to the end and none after, the 400s,
// an empty page as [], the status page's next link.
func TestListHTTP(t *testing.T) {
	db := be.Database(t)
	seeded := boundaryNames()
	seedCounters(t, db, seeded)
	names := listed(seeded)
	srv := startSeqdAt(t, seqdURI(), db.Name())

	type page struct {
		Sequences []struct {
			Name  string
			Value *int64
			Error *struct{ Code, Message string }
		}
		Next *string
	}
	get := func(q url.Values) page {
		var p page
		r := do(t, srv.URL(), call{path: "/seq?" + q.Encode()})
		r.want(t, http.StatusOK, &p)
		if !strings.Contains(string(r.body), `"sequences":[`) {
			t.Fatalf("GET /seq?%s: %s, want sequences as an array", q.Encode(), r.body)
		}
		return p
	}
	for _, tc := range []struct {
		prefix string
		limit  int
	}{{"", 1000}, {"", 37}, {"a", 10}, {"az", 3}, {"z", 4}, {"zz", 1}, {"zzzz", 5}} {
		var got []string
		after := ""
		for pages := 1; ; pages++ {
			q := url.Values{"limit": {strconv.Itoa(tc.limit)}, "prefix": {tc.prefix}, "after": {after}}
			p := get(q)
			for _, e := range p.Sequences {
				got = append(got, e.Name)
				if unusable(e.Name) != (e.Error != nil && e.Error.Code == "invalid_counter" && e.Value == nil) {
					t.Errorf("%s: %+v", e.Name, e)
				}
			}
			if p.Next == nil {
				break
			}
			if *p.Next != got[len(got)-1] || pages > 1000 {
				t.Fatalf("GET /seq?%s: next %q, want the page's last name", q.Encode(), *p.Next)
			}
			after = *p.Next
		}
		if want := withPrefix(names, tc.prefix); !slices.Equal(got, want) {
			t.Errorf("prefix %q, limit %d: %d names, want %d: %q", tc.prefix, tc.limit, len(got), len(want), got)
		}
	}
	if p := get(url.Values{"after": {"é"}}); len(p.Sequences) != 0 || p.Next != nil {
		t.Errorf("the page after the last name: %+v, want [] and no next", p)
	}
	for q, code := range map[string]string{
		"limit=0": "invalid_limit", "limit=1001": "invalid_limit", "prefix=_a": "invalid_prefix", "after=a%FF": "invalid_after",
	} {
		do(t, srv.URL(), call{path: "/seq?" + q}).wantError(t, http.StatusBadRequest, code)
		do(t, srv.URL(), call{path: "/status?" + q}).wantError(t, http.StatusBadRequest, code)
	}

	r := do(t, srv.URL(), call{path: "/status?limit=2&prefix=az"})
	if r.status != http.StatusOK || !strings.Contains(string(r.body), `<a href="?after=az-&amp;limit=2&amp;prefix=az" rel="next">`) {
		t.Errorf("/status?limit=2&prefix=az: %d, want a next link after az-:\n%s", r.status, r.body)
	}

	c, err := client.New(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(testContext(t)) })
	for _, prefix := range []string{"", "z", "az"} {
		var got []string
		for s, err := range c.List(testContext(t), prefix) {
			if err != nil {
				t.Fatalf("client List(%q): %v", prefix, err)
			}
			if unusable(s.Name) != errors.Is(s.Err, seqd.ErrInvalidCounter) {
				t.Errorf("client List: %+v", s)
			}
			got = append(got, s.Name)
		}
		if want := withPrefix(names, prefix); !slices.Equal(got, want) {
			t.Errorf("client List(%q): %d names, want %d", prefix, len(got), len(want))
		}
	}
}
