package counters

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Listing goes a page at a time, in order of name, so that neither a request nor
// seqd's memory grows with the number of sequences: an application that numbers
// per tenant or per day has hundreds of thousands of them.
const (
	DefaultListLimit = 100  // a page when ListOptions.Limit is 0
	MaxListLimit     = 1000 // the largest page
)

// ListOptions choose a page of List: the sequences whose names start with Prefix,
// after After, at most Limit of them, in order of name.
type ListOptions struct {
	// Prefix keeps the names that start with it; "" keeps all. It is the start of
	// a name, so itself a name (ValidName), or "".
	Prefix string
	// After keeps the names above it, itself excluded: the Next of the page
	// before; "" starts from the first. It is a name, or, where a page ended on
	// a counter document another client wrote with an _id that is no name, that
	// _id: any valid UTF-8.
	After string
	// Limit is the most sequences on the page, 1 to MaxListLimit; 0 is
	// DefaultListLimit.
	Limit int
}

// Page is one page of List.
type Page struct {
	// Sequences are ordered by name; an empty page is an empty slice, not nil.
	Sequences []Sequence
	// Next is the last name on the page when more sequences follow it (pass it as
	// ListOptions.After), and "" when none do.
	Next string
}

// Check returns nil for options List takes, else an error wrapping
// ErrInvalidName (a prefix that is not the start of a name, an after that is not
// UTF-8) or ErrInvalidCount (a limit outside 0 to MaxListLimit).
func (o ListOptions) Check() error {
	switch {
	case o.Prefix != "" && !ValidName(o.Prefix):
		return fmt.Errorf("counters: list: prefix %.70q: %w: a prefix is the start of a name", o.Prefix, ErrInvalidName)
	case !utf8.ValidString(o.After):
		return fmt.Errorf("counters: list: after %.70q: %w: not UTF-8", o.After, ErrInvalidName)
	case o.Limit < 0 || o.Limit > MaxListLimit:
		return fmt.Errorf("counters: list: %w: limit %d, want 1 to %d (0 for %d)", ErrInvalidCount, o.Limit, MaxListLimit, DefaultListLimit)
	}
	return nil
}

// limit is the page size o asks for.
func (o ListOptions) limit() int {
	if o.Limit == 0 {
		return DefaultListLimit
	}
	return o.Limit
}

// Match reports whether o selects name, the limit aside.
func (o ListOptions) Match(name string) bool {
	return strings.HasPrefix(name, o.Prefix) && name > o.After
}

// PageOf returns the page that matches make: matches are sequences o selects
// (Match), in order of name, as many as the caller has; the page holds the first
// Limit of them, and Next says whether there were more. A store asks for Limit+1,
// one more than the page, only to learn that.
func (o ListOptions) PageOf(matches []Sequence) Page {
	if n := o.limit(); len(matches) > n {
		return Page{Sequences: matches[:n:n], Next: matches[n-1].Name}
	}
	if matches == nil {
		matches = []Sequence{}
	}
	return Page{Sequences: matches}
}

// nameRange is the range of names o selects, as a query condition on a string
// field whose values are key followed by a name (_id of a counter document: key
// ""; a ledger's collection name: key LedgerPrefix): from Prefix or above
// After, whichever is higher, to below prefixEnd(Prefix). A string bound
// matches strings only (MongoDB compares values of one type at a time), so an
// _id of another type is never on a page.
//
// It holds no $regex for the name's characters: FerretDB, the development
// store, evaluates one per document at several times the cost of the rest of
// the query, and the range is what an index narrows. A string _id that is no
// name is on the page, marked (Counter.List).
func (o ListOptions) nameRange(key string) bson.D {
	cond := bson.D{{Key: "$gte", Value: key + o.Prefix}}
	if o.After >= o.Prefix { // without either, above key alone: "" is no name, and would read as no Next
		cond = bson.D{{Key: "$gt", Value: key + o.After}}
	}
	if o.Prefix != "" {
		cond = append(cond, bson.E{Key: "$lt", Value: key + prefixEnd(o.Prefix)})
	}
	return cond
}

// prefixEnd is the smallest string above every string that starts with prefix:
// prefix with its last byte raised by one. The store compares strings byte by
// byte, as Go does. For a last character of "z", the largest a name holds, it is
// "{" (0x7B), which follows "z" in ASCII: no name, but a bound; every name
// character is below 0x7F, so the raised byte never carries.
func prefixEnd(prefix string) string {
	last := len(prefix) - 1
	return prefix[:last] + string(rune(prefix[last]+1))
}

// listFields is what Counter.List reads of a counter document: every field that
// parseCounter checks, so that a page marks the same documents invalid as
// Current does, and none of what other clients may have added to them.
var listFields = func() bson.D {
	var p bson.D
	for _, f := range []string{fieldSeq, fieldMode, fieldMinBlock, fieldMaxBlock, fieldReserved, fieldServed, fieldReturned,
		fieldGen, fieldLeaseMs, fieldFloor, fieldForced, fieldStrictFrom, fieldPeriod, fieldZone, fieldFormat, fieldPeriodStart, fieldNext, fieldPast} {
		p = append(p, bson.E{Key: f, Value: 1})
	}
	return p
}()

// listQuery is the one find of Counter.List for o: its filter, and its options
// (sorted by _id, o's limit plus one, listFields projected, all in one batch, so
// one round trip).
func listQuery(o ListOptions) (bson.D, *options.FindOptionsBuilder) {
	n := o.limit() + 1
	return bson.D{{Key: "_id", Value: o.nameRange("")}},
		options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).SetLimit(int64(n)).SetBatchSize(int32(n)).SetProjection(listFields)
}
