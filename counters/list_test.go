package counters

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// nameChars are the characters of a name in ascending byte order.
const nameChars = "-.0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz"

// TestPrefixEnd checks the upper bound of a prefix for every last character,
// "z", the largest, included: it is above every name that starts with the
// prefix, and not above any name that does not.
func TestPrefixEnd(t *testing.T) {
	for i := 0; i < len(nameChars); i++ {
		prefix := "a" + nameChars[i:i+1]
		end := prefixEnd(prefix)
		longest := prefix + strings.Repeat("z", 62) // the largest name with the prefix
		if !(prefix < end && longest < end) {
			t.Errorf("prefixEnd(%q) = %q, not above %q", prefix, end, longest)
		}
		if i+1 < len(nameChars) {
			if after := "a" + nameChars[i+1:i+2]; after < end { // the smallest name above them
				t.Errorf("prefixEnd(%q) = %q, above %q, which lacks the prefix", prefix, end, after)
			}
		} else if "b" < end {
			t.Errorf("prefixEnd(%q) = %q, above \"b\"", prefix, end)
		}
	}
	if got := prefixEnd("az"); got != "a{" {
		t.Errorf("prefixEnd(az) = %q, want a{", got)
	}
	if got := prefixEnd("z"); got != "{" {
		t.Errorf("prefixEnd(z) = %q, want {", got)
	}
}

// TestListQuery checks the find of Counter.List: the range of _id, the sort, the
// limit plus one in one batch, the projection.
func TestListQuery(t *testing.T) {
	for _, tc := range []struct {
		opts ListOptions
		want bson.D
	}{
		{ListOptions{}, bson.D{{Key: "$gt", Value: ""}}},
		{ListOptions{After: "m"}, bson.D{{Key: "$gt", Value: "m"}}},
		{ListOptions{Prefix: "inv"}, bson.D{{Key: "$gte", Value: "inv"}, {Key: "$lt", Value: "inw"}}},
		{ListOptions{Prefix: "az"}, bson.D{{Key: "$gte", Value: "az"}, {Key: "$lt", Value: "a{"}}},
		{ListOptions{Prefix: "inv", After: "inv.7"}, bson.D{{Key: "$gt", Value: "inv.7"}, {Key: "$lt", Value: "inw"}}},
		{ListOptions{Prefix: "inv", After: "a"}, bson.D{{Key: "$gte", Value: "inv"}, {Key: "$lt", Value: "inw"}}},
	} {
		filter, find := listQuery(tc.opts)
		if got, want := fmt.Sprint(filter), fmt.Sprint(bson.D{{Key: "_id", Value: tc.want}}); got != want {
			t.Errorf("%+v: filter %s, want %s", tc.opts, got, want)
		}
		var o options.FindOptions
		for _, set := range find.List() {
			if err := set(&o); err != nil {
				t.Fatal(err)
			}
		}
		n := tc.opts.limit() + 1
		if *o.Limit != int64(n) || *o.BatchSize != int32(n) || fmt.Sprint(o.Sort) != fmt.Sprint(bson.D{{Key: "_id", Value: 1}}) ||
			fmt.Sprint(o.Projection) != fmt.Sprint(listFields) {
			t.Errorf("%+v: limit %d, batch %d, sort %v, projection %v; want %d, %d, by _id, listFields", tc.opts, *o.Limit, *o.BatchSize, o.Sort, o.Projection, n, n)
		}
	}
	// The ledger collections' names: the key in front of the bounds.
	for opts, want := range map[ListOptions]bson.D{
		{Prefix: "a"}: {{Key: "$gte", Value: "seq_a"}, {Key: "$lt", Value: "seq_b"}},
		{}:            {{Key: "$gt", Value: "seq_"}},
	} {
		if got := fmt.Sprint(opts.nameRange(LedgerPrefix)); got != fmt.Sprint(want) {
			t.Errorf("ledger range of %+v: %s, want %v", opts, got, want)
		}
	}
}

func TestListOptionsCheck(t *testing.T) {
	for _, ok := range []ListOptions{{}, {Limit: 1}, {Limit: MaxListLimit}, {Prefix: "a", After: "z"}, {Prefix: strings.Repeat("x", 64)}, {After: "a b/é"}} {
		if err := ok.Check(); err != nil {
			t.Errorf("Check(%+v) = %v", ok, err)
		}
	}
	for _, tc := range []struct {
		opts ListOptions
		want error
	}{
		{ListOptions{Limit: -1}, ErrInvalidCount},
		{ListOptions{Limit: MaxListLimit + 1}, ErrInvalidCount},
		{ListOptions{Prefix: "_"}, ErrInvalidName},
		{ListOptions{Prefix: "a b"}, ErrInvalidName},
		{ListOptions{Prefix: strings.Repeat("x", 65)}, ErrInvalidName},
		{ListOptions{After: "a\xff"}, ErrInvalidName},
	} {
		if err := tc.opts.Check(); !errors.Is(err, tc.want) {
			t.Errorf("Check(%+v) = %v, want %v", tc.opts, err, tc.want)
		}
	}
}

func TestPageOf(t *testing.T) {
	seqs := []Sequence{{Name: "a"}, {Name: "b"}, {Name: "c"}}
	for _, tc := range []struct {
		limit int
		n     int
		next  string
	}{{1, 1, "a"}, {2, 2, "b"}, {3, 3, ""}, {4, 3, ""}} {
		p := ListOptions{Limit: tc.limit}.PageOf(seqs)
		if len(p.Sequences) != tc.n || p.Next != tc.next || cap(p.Sequences) != len(p.Sequences) && tc.next != "" {
			t.Errorf("limit %d: %+v, want %d sequences and next %q", tc.limit, p, tc.n, tc.next)
		}
	}
	if p := (ListOptions{}).PageOf(nil); p.Sequences == nil || len(p.Sequences) != 0 || p.Next != "" {
		t.Errorf("an empty page = %+v, want an empty slice and no next", p)
	}
}
