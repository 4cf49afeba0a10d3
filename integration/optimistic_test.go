//go:build integration

package integration

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/seqd/seqd/counters"
)

// The optimistic loop under contention: the unique _id index alone keeps values
// unique, and a caller that gives up inserts nothing, so values stay contiguous.
//
// The loop does not scale (see the package comment): with 16 writers on one name
// the default retry bound gives some callers ErrContention, on the dev store most
// of all, where every insert is a SQLite write. The "patient" run raises the bound
// so that every caller gets a value.
func TestOptimisticConcurrent(t *testing.T) {
	for _, tc := range []struct {
		name       string
		maxRetries int
	}{
		{"default-bound", 0},
		{"patient", 10_000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testContext(t)
			obs := &observer{}
			o := counters.NewOptimistic(be.Database(t), counters.Options{Observer: obs, MaxRetries: tc.maxRetries})

			const goroutines, perGoroutine = 16, 10
			var mu sync.Mutex
			var values []int64
			contention := 0
			var wg sync.WaitGroup
			for range goroutines {
				wg.Go(func() {
					for range perGoroutine {
						v, err := o.Next(ctx, "tickets")
						mu.Lock()
						switch {
						case err == nil:
							values = append(values, v)
						case errors.Is(err, counters.ErrContention) && tc.maxRetries == 0:
							contention++
						default:
							t.Error(err)
						}
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			checkExactly(t, values, int64(len(values)))
			if tc.maxRetries != 0 && len(values) != goroutines*perGoroutine {
				t.Errorf("%d values, want %d", len(values), goroutines*perGoroutine)
			}
			mustCurrent(t, o, "tickets", int64(len(values)))
			t.Logf("%d values, %d × ErrContention, %d E11000 retries", len(values), contention, obs.retries.Load())
		})
	}
}

type invoice struct {
	ID       int64   `bson:"_id"`
	Customer string  `bson:"customer"`
	Amount   float64 `bson:"amount"`
}

func TestOptimisticInsert(t *testing.T) {
	ctx := testContext(t)
	db := be.Database(t)
	o := counters.NewOptimistic(db, counters.Options{})
	coll := db.Collection("invoices")

	// Documents with other kinds of _id do not take part in the numbering.
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: bson.NewObjectID()}, {Key: "customer", Value: "legacy"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: "draft-7"}}); err != nil {
		t.Fatal(err)
	}

	docs := []any{
		bson.D{{Key: "customer", Value: "ada"}, {Key: "amount", Value: 1.5}},
		bson.M{"_id": "ignored", "customer": "bob", "amount": 2.5},
		invoice{ID: 99, Customer: "cy", Amount: 3.5},
		&invoice{Customer: "di", Amount: 4.5},
	}
	for i, doc := range docs {
		id, err := o.Insert(ctx, "invoices", doc)
		if err != nil || id != int64(i+1) {
			t.Fatalf("Insert(%T) = %d, %v; want %d", doc, id, err, i+1)
		}
	}

	cur, err := coll.Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$type", Value: "long"}}}},
		options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		t.Fatal(err)
	}
	var got []invoice
	if err := cur.All(ctx, &got); err != nil {
		t.Fatal(err)
	}
	want := []invoice{{1, "ada", 1.5}, {2, "bob", 2.5}, {3, "cy", 3.5}, {4, "di", 4.5}}
	if len(got) != len(want) {
		t.Fatalf("stored %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("stored %v, want %v", got[i], want[i])
		}
	}
}

// Numbers of other types among an application's _ids: the next _id continues
// after the largest, rounded down, and never collides with one already there.
func TestOptimisticInsertAfterOtherNumbers(t *testing.T) {
	ctx := testContext(t)
	db := be.Database(t)
	o := counters.NewOptimistic(db, counters.Options{})
	coll := db.Collection("mixed")
	for _, id := range []any{int32(3), 7.0, "x", 5.5} {
		if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: id}}); err != nil {
			t.Fatal(err)
		}
	}
	if id, err := o.Insert(ctx, "mixed", bson.D{}); err != nil || id != 8 {
		t.Fatalf("Insert after _id 7.0 = %d, %v; want 8", id, err)
	}
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 9.5}}); err != nil {
		t.Fatal(err)
	}
	if id, err := o.Insert(ctx, "mixed", bson.D{}); err != nil || id != 10 {
		t.Fatalf("Insert after _id 9.5 = %d, %v; want 10", id, err)
	}
}

// Decimal _ids among an application's: the next _id continues after the
// largest, rounded down, and a decimal beyond math.MaxInt64 is refused with an
// error that names it. No decimal is changed. The dev store (FerretDB 1.x)
// cannot store a decimal at all (it drops the connection): there the test skips.
func TestOptimisticInsertAfterDecimals(t *testing.T) {
	ctx := testContext(t)
	db := be.Database(t)
	o := counters.NewOptimistic(db, counters.Options{})
	// A client of its own for the first decimal, whose connection the dev store drops.
	probe := be.NewClient(t).Database(db.Name()).Collection("decimals")
	dec := func(s string) bson.Decimal128 {
		d, err := bson.ParseDecimal128(s)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	if _, err := probe.InsertOne(ctx, bson.D{{Key: "_id", Value: dec("7")}}); err != nil {
		t.Skipf("the server cannot store a Decimal128 _id (%s): %v", be.Kind, err)
	}
	coll := db.Collection("decimals")
	if id, err := o.Insert(ctx, "decimals", bson.D{}); err != nil || id != 8 {
		t.Fatalf("Insert after _id decimal 7 = %d, %v; want 8", id, err)
	}
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: dec("9.75")}}); err != nil {
		t.Fatal(err)
	}
	if id, err := o.Insert(ctx, "decimals", bson.D{}); err != nil || id != 10 {
		t.Fatalf("Insert after _id decimal 9.75 = %d, %v; want 10", id, err)
	}
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: dec("1E+30")}}); err != nil {
		t.Fatal(err)
	}
	_, err := o.Insert(ctx, "decimals", bson.D{})
	if !errors.Is(err, counters.ErrInvalidCounter) || !strings.Contains(err.Error(), "1E+30") {
		t.Fatalf("Insert after _id decimal 1E+30 = %v; want ErrInvalidCounter naming 1E+30", err)
	}
	n, err := coll.CountDocuments(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$type", Value: "decimal"}}}})
	if err != nil || n != 3 {
		t.Errorf("%d decimal _ids left (%v), want the 3 inserted", n, err)
	}
}

// A duplicate key in another unique index is the application's error, not
// contention: it comes back at once, without retries.
func TestOptimisticInsertOtherUniqueIndex(t *testing.T) {
	ctx := testContext(t)
	db := be.Database(t)
	obs := &observer{}
	o := counters.NewOptimistic(db, counters.Options{Observer: obs})
	_, err := db.Collection("users").Indexes().CreateOne(ctx, mongo.IndexModel{
		Keys:    bson.D{{Key: "email", Value: 1}},
		Options: options.Index().SetUnique(true),
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := o.Insert(ctx, "users", bson.M{"email": "a@example.com"}); err != nil {
		t.Fatal(err)
	}
	_, err = o.Insert(ctx, "users", bson.M{"email": "a@example.com"})
	if !mongo.IsDuplicateKeyError(err) || errors.Is(err, counters.ErrContention) {
		t.Errorf("second Insert: %v; want the duplicate key error itself", err)
	}
	if n := obs.retries.Load(); n != 0 {
		t.Errorf("%d retries for a duplicate in another index", n)
	}
}

func TestOptimisticLedger(t *testing.T) {
	ctx := testContext(t)
	db := be.Database(t)
	o := counters.NewOptimistic(db, counters.Options{})
	before := time.Now().Add(-time.Second)

	mustNext(t, o, "audit", 1)
	mustSet(t, o, "audit", 5, false)
	mustNext(t, o, "audit", 6)

	ledger := db.Collection(counters.LedgerPrefix + "audit")
	var entries []struct {
		ID       int64     `bson:"_id"`
		IssuedAt time.Time `bson:"issuedAt"`
		Set      bool      `bson:"set"`
	}
	cur, err := ledger.Find(ctx, bson.D{}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		t.Fatal(err)
	}
	if err := cur.All(ctx, &entries); err != nil {
		t.Fatal(err)
	}
	if len(entries) != 3 {
		t.Fatalf("ledger %+v, want entries 1, 5 (set), 6", entries)
	}
	for i, want := range []struct {
		id  int64
		set bool
	}{{1, false}, {5, true}, {6, false}} {
		e := entries[i]
		if e.ID != want.id || e.Set != want.set || e.IssuedAt.Before(before) {
			t.Errorf("ledger entry %+v, want _id %d, set %v, issued now", e, want.id, want.set)
		}
	}

	// Forcing it back deletes the entries above the new value.
	mustSet(t, o, "audit", 2, true)
	if n, err := ledger.CountDocuments(ctx, bson.D{}); err != nil || n != 2 {
		t.Errorf("after Set(2, force): %d ledger entries, %v; want 1 and 2", n, err)
	}
	mustNext(t, o, "audit", 3)
}

// One caller's document that the server refuses fails that caller alone, not the
// others written in the same insertMany.
func TestOptimisticRefusedDocumentFailsOneCaller(t *testing.T) {
	ctx := testContext(t)
	o := counters.NewOptimistic(be.Database(t), counters.Options{})
	for round := range 10 {
		var wg sync.WaitGroup
		var failed atomic.Int64
		for i := range 30 {
			wg.Go(func() {
				doc := bson.D{{Key: "k", Value: i}}
				if i == 15 {
					doc = bson.D{{Key: "$bad", Value: 1}} // no server takes a key starting with $
				}
				_, err := o.Insert(ctx, "app", doc)
				switch {
				case i == 15 && err == nil:
					t.Errorf("round %d: the refused document was inserted", round)
				case i != 15 && err != nil:
					failed.Add(1)
					t.Logf("round %d: caller %d: %v", round, i, err)
				}
			})
		}
		wg.Wait()
		if n := failed.Load(); n > 0 {
			t.Fatalf("round %d: %d callers failed for another caller's document", round, n)
		}
	}
}

// Two processes inserting into one collection, each with more callers than one
// insertMany takes: every caller's document is stored once, under the _id the
// caller was given.
func TestOptimisticInsertTwoProcessesLargeBatches(t *testing.T) {
	ctx := testContext(t)
	db := be.Database(t)
	dbs := []*mongo.Database{db, be.NewClient(t).Database(db.Name())}
	const goroutines, each = 150, 8
	var mu sync.Mutex
	given := make(map[string]int64)
	var wg sync.WaitGroup
	for p, d := range dbs {
		o := counters.NewOptimistic(d, counters.Options{MaxRetries: 1000})
		for g := range goroutines {
			wg.Go(func() {
				for i := range each {
					token := fmt.Sprintf("%d-%d-%d", p, g, i)
					id, err := o.Insert(ctx, "app", bson.D{{Key: "token", Value: token}})
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					given[token] = id
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()

	cur, err := db.Collection("app").Find(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	var docs []struct {
		ID    int64  `bson:"_id"`
		Token string `bson:"token"`
	}
	if err := cur.All(ctx, &docs); err != nil {
		t.Fatal(err)
	}
	stored := make(map[string][]int64)
	for _, d := range docs {
		stored[d.Token] = append(stored[d.Token], d.ID)
	}
	for token, id := range given {
		if ids := stored[token]; len(ids) != 1 || ids[0] != id {
			t.Errorf("document %s stored under %v, its caller was given %d", token, ids, id)
		}
	}
	if len(docs) != len(given) {
		t.Errorf("%d documents stored for %d callers", len(docs), len(given))
	}
}
