package counters

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/seqd/seqd"
)

// TestTransactionRefused: every call whose context carries a session with a
// transaction running fails with ErrInTransaction before any round trip. The
// store is unreachable, so a call that went to it would end in ErrUnavailable
// at its deadline instead. StartTransaction is the client's alone until a
// command is sent, so no server is needed to start one.
func TestTransactionRefused(t *testing.T) {
	db := offline(t)
	c, o := NewCounter(db, Options{}), NewOptimistic(db, Options{})
	sess, err := db.Client().StartSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.EndSession(context.Background())
	if err := sess.StartTransaction(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(mongo.NewSessionContext(context.Background(), sess), 2*time.Second)
	defer cancel()

	calls := map[string]func() error{
		"Counter.Next":      func() error { _, err := c.Next(ctx, "orders"); return err },
		"Counter.NextN":     func() error { _, err := c.NextN(ctx, "orders", 5); return err },
		"Counter.Current":   func() error { _, err := c.Current(ctx, "orders"); return err },
		"Counter.Set":       func() error { return c.Set(ctx, "orders", 10, false) },
		"Counter.SetMode":   func() error { return c.SetMode(ctx, "orders", seqd.ModeCached, 0, 0) },
		"Counter.List":      func() error { _, err := c.List(ctx, ListOptions{}); return err },
		"Counter.Close":     func() error { return c.Close(ctx) },
		"Optimistic.Next":   func() error { _, err := o.Next(ctx, "orders"); return err },
		"Optimistic.NextN":  func() error { _, err := o.NextN(ctx, "orders", 1); return err },
		"Optimistic.Insert": func() error { _, err := o.Insert(ctx, "invoices", map[string]any{"a": 1}); return err },
		"Optimistic.Current": func() error {
			_, err := o.Current(ctx, "orders")
			return err
		},
		"Optimistic.Set":  func() error { return o.Set(ctx, "orders", 10, false) },
		"Optimistic.List": func() error { _, err := o.List(ctx, ListOptions{}); return err },
	}
	for name, call := range calls {
		start := time.Now()
		err := call()
		if !errors.Is(err, ErrInTransaction) || errors.Is(err, ErrUnavailable) {
			t.Errorf("%s in a transaction: %v; want ErrInTransaction, at once", name, err)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("%s took %v: it waited for the store", name, d)
		}
	}
}

// TestSessionWithoutTransactionAccepted: a session without a transaction, or
// whose transaction was aborted, is no reason to refuse: the call goes to the
// store (here an unreachable one, so it ends in ErrUnavailable at its deadline).
func TestSessionWithoutTransactionAccepted(t *testing.T) {
	db := offline(t)
	c := NewCounter(db, Options{})
	sess, err := db.Client().StartSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.EndSession(context.Background())
	for _, step := range []struct {
		name   string
		before func() error
	}{
		{"no transaction", func() error { return nil }},
		{"transaction aborted", func() error {
			if err := sess.StartTransaction(); err != nil {
				return err
			}
			return sess.AbortTransaction(context.Background()) // sent nothing, so the client ends it alone
		}},
	} {
		if err := step.before(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		ctx, cancel := context.WithTimeout(mongo.NewSessionContext(context.Background(), sess), 100*time.Millisecond)
		_, err := c.Next(ctx, "orders")
		cancel()
		if errors.Is(err, ErrInTransaction) || !errors.Is(err, ErrUnavailable) {
			t.Errorf("%s: Next = %v; want it sent to the store, and ErrUnavailable", step.name, err)
		}
	}
}

// BenchmarkReady measures what every call of a Counter now pays before its
// work: the session lookup in the context and the collation check's atomic
// load, on a context as deep as an HTTP request's in seqd (values and a
// deadline over a cancel).
//
//	go test -run '^$' -bench Ready -count 5 ./counters/
func BenchmarkReady(b *testing.B) {
	c := NewCounter(offline(b), Options{})
	c.collation.simple.Store(true)
	type key int
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for i := range 4 {
		ctx = context.WithValue(ctx, key(i), i)
	}
	ctx, cancel = context.WithTimeout(ctx, time.Minute)
	defer cancel()
	b.ReportAllocs()
	for b.Loop() {
		if err := c.ready(ctx, "next", "orders"); err != nil {
			b.Fatal(err)
		}
	}
}
