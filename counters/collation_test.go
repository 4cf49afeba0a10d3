package counters

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/seqd/seqd"
)

// listEntry is a listCollections entry for the collection "counters" with
// options opts, as mongod answers it.
func listEntry(t *testing.T, opts bson.D) bson.Raw {
	t.Helper()
	b, err := bson.Marshal(bson.D{
		{Key: "name", Value: CounterCollection},
		{Key: "type", Value: "collection"},
		{Key: "options", Value: opts},
		{Key: "info", Value: bson.D{{Key: "readOnly", Value: false}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// strength2 is the collation mongod 8.0 shows for a collection created with
// {collation: {locale: "en", strength: 2}}.
var strength2 = bson.D{{Key: "collation", Value: bson.D{
	{Key: "locale", Value: "en"}, {Key: "caseLevel", Value: false}, {Key: "caseFirst", Value: "off"},
	{Key: "strength", Value: int32(2)}, {Key: "numericOrdering", Value: false}, {Key: "alternate", Value: "non-ignorable"},
	{Key: "maxVariable", Value: "punct"}, {Key: "normalization", Value: false}, {Key: "backwards", Value: false},
	{Key: "version", Value: "57.1"},
}}}

func TestSimpleCollation(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec bson.Raw
		ok   bool
	}{
		{"no collection yet", nil, true},
		{"no options", listEntry(t, bson.D{}), true},
		{"other options", listEntry(t, bson.D{{Key: "validationLevel", Value: "strict"}}), true},
		{"collation simple", listEntry(t, bson.D{{Key: "collation", Value: bson.D{{Key: "locale", Value: "simple"}}}}), true},
		{"collation en, strength 2", listEntry(t, strength2), false},
		{"collation fr", listEntry(t, bson.D{{Key: "collation", Value: bson.D{{Key: "locale", Value: "fr"}}}}), false},
		{"collation not a document", listEntry(t, bson.D{{Key: "collation", Value: "simple"}}), false},
	} {
		err := simpleCollation(tc.spec)
		if tc.ok && err != nil {
			t.Errorf("%s: %v, want nil", tc.name, err)
		}
		if !tc.ok && !errors.Is(err, ErrInvalidCounter) {
			t.Errorf("%s: %v, want ErrInvalidCounter", tc.name, err)
		}
	}
	err := simpleCollation(listEntry(t, strength2))
	if err == nil {
		t.Fatal("collation strength 2 passed")
	}
	if msg := err.Error(); !strings.Contains(msg, `"strength": {"$numberInt":"2"}`) || !strings.Contains(msg, `"counters"`) {
		t.Errorf("the error does not show the collection and its collation: %s", msg)
	}
}

// TestCollationRefusedBeforeAnyWrite: a Counter whose collection has a default
// collation refuses every call with ErrInvalidCounter, on the first call and
// every one after, and sends nothing else: the store is unreachable, so a call
// that went on would end in ErrUnavailable. A collection without one is read
// once; a failed read is tried again by the next call.
func TestCollationRefusedBeforeAnyWrite(t *testing.T) {
	c := NewCounter(offline(t), Options{})
	var reads atomic.Int64
	spec := listEntry(t, strength2)
	var readErr error
	afterRead := func() {}
	c.collation.spec = func(context.Context) (bson.Raw, error) {
		reads.Add(1)
		afterRead()
		return spec, readErr
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	calls := map[string]func() error{
		"Next":    func() error { _, err := c.Next(ctx, "orders"); return err },
		"NextN":   func() error { _, err := c.NextN(ctx, "orders", 5); return err },
		"Current": func() error { _, err := c.Current(ctx, "orders"); return err },
		"Set":     func() error { return c.Set(ctx, "orders", 10, true) },
		"SetMode": func() error { return c.SetMode(ctx, "orders", seqd.ModeCached, 0, 0) },
		"List":    func() error { _, err := c.List(ctx, ListOptions{}); return err },
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, ErrInvalidCounter) || errors.Is(err, ErrUnavailable) {
			t.Errorf("%s on a collection with collation strength 2: %v; want ErrInvalidCounter", name, err)
		}
	}
	if got := reads.Load(); got != int64(len(calls)) {
		t.Errorf("%d reads of the collection's options for %d refused calls; want one each", got, len(calls))
	}

	// The read fails: the call fails with it, and the next reads again. The
	// calls' contexts end when the options are read, or after d: a call whose
	// context is done may return before it reads them (on a loaded machine, a
	// stall of 150 ms did that to a shared 100 ms timeout), and a call that reads
	// them and goes on to the unreachable store ends there at once.
	untilRead := func(d time.Duration) context.Context {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		t.Cleanup(cancel)
		afterRead = cancel
		return ctx
	}
	reads.Store(0)
	spec, readErr = listEntry(t, bson.D{}), context.DeadlineExceeded
	if _, err := c.Next(untilRead(time.Minute), "orders"); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Next when the options cannot be read: %v; want ErrUnavailable", err)
	}
	readErr = nil
	// The first reads them; the second does not, and waits its second at the store.
	for _, d := range []time.Duration{time.Minute, time.Second} {
		if _, err := c.Next(untilRead(d), "orders"); !errors.Is(err, ErrUnavailable) || errors.Is(err, ErrInvalidCounter) {
			t.Errorf("Next on a collection without collation: %v; want it sent to the (unreachable) store", err)
		}
	}
	if got := reads.Load(); got != 2 {
		t.Errorf("%d reads of the options; want 2: the failed one, then one that passed and is not repeated", got)
	}
}
