package counters

import (
	"context"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

func TestValidName(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"a", true},
		{"Z", true},
		{"0", true},
		{"orders", true},
		{"orders.2026-11_eu", true},
		{"9lives", true},
		{strings.Repeat("x", 64), true},
		{"", false},
		{strings.Repeat("x", 65), false},
		{"_orders", false},
		{".orders", false},
		{"-orders", false},
		{"has space", false},
		{"a/b", false},
		{"a$b", false},
		{"naïve", false},
		{"nul\x00", false},
		{"line\n", false},
	} {
		if got := ValidName(tc.name); got != tc.ok {
			t.Errorf("ValidName(%q) = %v, want %v", tc.name, got, tc.ok)
		}
	}
}

// offline returns a database on a client that has no server to reach: the port
// was free a moment ago and nothing listens on it.
func offline(t testing.TB) *mongo.Database {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	client, err := mongo.Connect(options.Client().ApplyURI("mongodb://" + addr + "/").SetDirect(true))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Disconnect(context.Background()) })
	return client.Database("offline")
}

// sequencer is what both strategies have: Sequencer, and Next for one value.
type sequencer interface {
	Sequencer
	Next(ctx context.Context, name string) (int64, error)
}

// sequencers returns every strategy and mode, by name, over db.
func sequencers(db *mongo.Database) map[string]sequencer {
	return map[string]sequencer{
		"counter":            NewCounter(db, Options{}),
		"counter-nocoalesce": NewCounter(db, Options{NoCoalesce: true}),
		"optimistic":         NewOptimistic(db, Options{}),
	}
}

// Invalid arguments are refused before any round trip, so these tests need no server.
func TestInvalidArguments(t *testing.T) {
	ctx := context.Background()
	for mode, s := range sequencers(offline(t)) {
		t.Run(mode, func(t *testing.T) {
			for _, name := range []string{"", "_x", "a b", strings.Repeat("x", 65)} {
				_, err := s.Next(ctx, name)
				expectErr(t, "Next", err, ErrInvalidName)
				_, err = s.NextN(ctx, name, 1)
				expectErr(t, "NextN", err, ErrInvalidName)
				_, err = s.Current(ctx, name)
				expectErr(t, "Current", err, ErrInvalidName)
				expectErr(t, "Set", s.Set(ctx, name, 1, false), ErrInvalidName)
			}
			for _, n := range []int64{0, -1} {
				_, err := s.NextN(ctx, "ok", n)
				expectErr(t, fmt.Sprintf("NextN(%d)", n), err, ErrInvalidCount)
			}
			expectErr(t, "Set(-1)", s.Set(ctx, "ok", -1, true), ErrInvalidValue)
		})
	}

	o := NewOptimistic(offline(t), Options{})
	_, err := o.NextN(ctx, "ok", 2)
	expectErr(t, "optimistic NextN(2)", err, ErrInvalidCount)
	_, err = o.Insert(ctx, "no such/collection", map[string]int{"a": 1})
	expectErr(t, "Insert into a bad name", err, ErrInvalidName)
	_, err = o.Insert(ctx, "things", 42)
	expectErr(t, "Insert of a number", err, ErrInvalidValue)
}

func TestUnavailable(t *testing.T) {
	for mode, s := range sequencers(offline(t)) {
		t.Run(mode, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			start := time.Now()
			_, err := s.Next(ctx, "orders")
			expectErr(t, "Next", err, ErrUnavailable)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Next: %v does not keep the cause, context.DeadlineExceeded", err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("Next took %v to fail", d)
			}
			t.Log(err)
		})
	}
}

func TestWrapUnavailable(t *testing.T) {
	network := mongo.CommandError{Code: 6, Message: "host unreachable", Labels: []string{"NetworkError"}}
	for _, tc := range []struct {
		err         error
		unavailable bool
	}{
		{context.DeadlineExceeded, true},
		{context.Canceled, true},
		{fmt.Errorf("find: %w", context.DeadlineExceeded), true},
		{mongo.ErrClientDisconnected, true},
		{network, true},
		{mongo.CommandError{Code: 10107, Message: "not primary"}, true},
		{mongo.CommandError{Code: 189, Message: "primary stepped down"}, true},
		{mongo.WriteException{WriteConcernError: &mongo.WriteConcernError{Code: 91, Message: "shutdown in progress"}}, true},
		{mongo.CommandError{Code: 262, Message: "exceeded time limit", Labels: []string{"RetryableWriteError"}}, true},
		{mongo.CommandError{Code: 11000, Message: "E11000 duplicate key"}, false},
		{ErrExhausted, false},
		{errors.New("something else"), false},
	} {
		err := wrap(tc.err, "next", "orders")
		if got := errors.Is(err, ErrUnavailable); got != tc.unavailable {
			t.Errorf("wrap(%v): unavailable = %v, want %v", tc.err, got, tc.unavailable)
		}
		if !errors.Is(err, tc.err) && !errors.As(err, new(mongo.CommandError)) && !errors.As(err, new(mongo.WriteException)) {
			t.Errorf("wrap(%v) = %v, lost the cause", tc.err, err)
		}
		if want := `counters: next "orders": `; !strings.HasPrefix(err.Error(), want) {
			t.Errorf("wrap(%v) = %q, want prefix %q", tc.err, err, want)
		}
	}
	if wrap(nil, "next", "orders") != nil {
		t.Error("wrap(nil) is not nil")
	}
}

func expectErr(t *testing.T, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Errorf("%s: got %v, want %v", what, err, want)
	}
}

// FuzzValidName checks ValidName against the rule written as a regexp, and that a
// valid name is always safe where the counters put it: an _id, and a collection
// name seq_<name> (no $, no NUL, not over MongoDB's limits).
var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

func FuzzValidName(f *testing.F) {
	for _, s := range []string{"a", "orders.2026-11_eu", "-x", "a b", "é", "a\x00", strings.Repeat("x", 65), "a$b", "."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := namePattern.MatchString(s)
		if got := ValidName(s); got != want {
			t.Fatalf("ValidName(%q) = %v, want %v", s, got, want)
		}
		if want && (strings.ContainsAny(s, "$\x00") || len(LedgerPrefix+s) > 120) {
			t.Fatalf("valid name %q is unsafe as a collection name", s)
		}
	})
}
