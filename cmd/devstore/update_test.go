package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// updateReply is what an update command answers.
type updateReply struct {
	N           int32 `bson:"n"`
	NModified   int32 `bson:"nModified"`
	WriteErrors []struct {
		Index int32 `bson:"index"`
		Code  int32 `bson:"code"`
	} `bson:"writeErrors"`
}

// runUpdate sends one update command of statements (each {q, u}) to coll and
// returns its answer.
func runUpdate(ctx context.Context, t *testing.T, coll *mongo.Collection, ordered bool, statements ...bson.D) updateReply {
	t.Helper()
	updates := bson.A{}
	for _, s := range statements {
		updates = append(updates, s)
	}
	cmd := bson.D{{Key: "update", Value: coll.Name()}, {Key: "ordered", Value: ordered}, {Key: "updates", Value: updates}}
	// The driver makes writeErrors an error too; the answer is still there.
	raw, err := coll.Database().RunCommand(ctx, cmd).Raw()
	var reply updateReply
	if raw == nil || bson.Unmarshal(raw, &reply) != nil {
		t.Fatalf("update: %v (answer %v)", err, raw)
	}
	return reply
}

func statement(filter, update bson.D) bson.D {
	return bson.D{{Key: "q", Value: filter}, {Key: "u", Value: update}}
}

// The statements of one update command run in one transaction, and each sees
// what the ones before it wrote: a statement whose filter asks for the value
// the statement before it set matches.
func TestUpdateStatementsSeeTheOnesBefore(t *testing.T) {
	s := startStore(t)
	ctx := testContext(t)
	coll := connect(t, s.uri()).Database("update").Collection("c")
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: "a"}, {Key: "n", Value: int64(1)}}); err != nil {
		t.Fatal(err)
	}
	reply := runUpdate(ctx, t, coll, true,
		statement(bson.D{{Key: "_id", Value: "a"}, {Key: "n", Value: int64(1)}}, bson.D{{Key: "$set", Value: bson.D{{Key: "n", Value: int64(2)}}}}),
		statement(bson.D{{Key: "_id", Value: "a"}, {Key: "n", Value: int64(2)}}, bson.D{{Key: "$set", Value: bson.D{{Key: "n", Value: int64(3)}}}}))
	if reply.N != 2 || reply.NModified != 2 || len(reply.WriteErrors) != 0 {
		t.Errorf("reply %+v, want n 2, nModified 2, no write errors", reply)
	}
	want := []string{`{"_id": "a","n": {"$numberLong":"3"}}`}
	if got := contents(ctx, t, coll); !slices.Equal(got, want) {
		t.Errorf("documents %v, want %v", got, want)
	}
}

// A statement that fails leaves the statements before it applied (the
// command's transaction is committed, not rolled back) and its own document
// unchanged, and the command answers with the write error. FerretDB stops at
// the first failing statement whether the command is ordered or not, and
// reports it at index 0 (mongod, unordered, would apply the third statement
// and report index 1): the store keeps FerretDB's answer, and the test asks
// nothing of the third statement in the unordered case.
func TestUpdateStatementErrorKeepsTheOnesBefore(t *testing.T) {
	s := startStore(t)
	ctx := testContext(t)
	db := connect(t, s.uri()).Database("update")
	for _, ordered := range []bool{true, false} {
		t.Run(fmt.Sprintf("ordered=%v", ordered), func(t *testing.T) {
			coll := db.Collection(fmt.Sprintf("c%v", ordered))
			if _, err := coll.InsertMany(ctx, []any{
				bson.D{{Key: "_id", Value: "a"}, {Key: "n", Value: int64(1)}},
				bson.D{{Key: "_id", Value: "b"}, {Key: "n", Value: "not a number"}},
				bson.D{{Key: "_id", Value: "c"}, {Key: "n", Value: int64(1)}},
			}); err != nil {
				t.Fatal(err)
			}
			inc := bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: int64(1)}}}}
			reply := runUpdate(ctx, t, coll, ordered,
				statement(bson.D{{Key: "_id", Value: "a"}}, inc),
				statement(bson.D{{Key: "_id", Value: "b"}}, inc),
				statement(bson.D{{Key: "_id", Value: "c"}}, inc))
			// As mongod answers: the error at the statement's index, beside the
			// counts of those that ran; an ordered command stops at it, an
			// unordered one runs the third. (FerretDB stopped either way, and
			// answered index 0 with no counts.)
			const typeMismatch = 14
			ran := int32(1)
			c := `{"_id": "c","n": {"$numberLong":"1"}}`
			if !ordered {
				ran, c = 2, `{"_id": "c","n": {"$numberLong":"2"}}`
			}
			if len(reply.WriteErrors) != 1 || reply.WriteErrors[0].Code != typeMismatch || reply.WriteErrors[0].Index != 1 ||
				reply.N != ran || reply.NModified != ran {
				t.Errorf("reply %+v, want one write error, TypeMismatch (14) at index 1, and n, nModified %d", reply, ran)
			}
			got := contents(ctx, t, coll)
			want := []string{`{"_id": "a","n": {"$numberLong":"2"}}`, `{"_id": "b","n": "not a number"}`, c}
			if !slices.Equal(got, want) {
				t.Errorf("documents %v, want %v", got, want)
			}
		})
	}
}

// In one unordered command of seqd's fenced give-backs, one whose fence no
// longer holds (another instance reserved past it) matches nothing and leaves
// its document unchanged; the others apply, and n and nModified count them.
func TestUpdateFenceThatNoLongerHoldsChangesNothing(t *testing.T) {
	s := startStore(t)
	ctx := testContext(t)
	coll := connect(t, s.uri()).Database("update").Collection("counters")
	var docs []any
	for _, name := range []string{"a", "b", "c"} {
		seq := int64(1000)
		if name == "b" {
			seq = 2000 // another instance reserved past b's tail
		}
		docs = append(docs, bson.D{{Key: "_id", Value: name}, {Key: "seq", Value: seq}, {Key: "returned", Value: int64(0)}})
	}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	before := contents(ctx, t, coll)
	giveBack := func(name string) bson.D {
		return statement(
			append(seqdFilter(name, 1000), bson.E{Key: "seq", Value: int64(1000)}),
			bson.D{{Key: "$set", Value: bson.D{{Key: "seq", Value: int64(1)}}}, {Key: "$inc", Value: bson.D{{Key: "returned", Value: int64(999)}}}})
	}
	reply := runUpdate(ctx, t, coll, false, giveBack("a"), giveBack("b"), giveBack("c"))
	if reply.N != 2 || reply.NModified != 2 || len(reply.WriteErrors) != 0 {
		t.Errorf("reply %+v, want n 2, nModified 2, no write errors", reply)
	}
	want := []string{
		`{"_id": "a","seq": {"$numberLong":"1"},"returned": {"$numberLong":"999"}}`,
		before[1],
		`{"_id": "c","seq": {"$numberLong":"1"},"returned": {"$numberLong":"999"}}`,
	}
	if got := contents(ctx, t, coll); !slices.Equal(got, want) {
		t.Errorf("documents %v, want %v", got, want)
	}
}

// Commands that change collections or indexes, sent while update commands of
// many statements run on the same database, are answered, and so are the
// updates. An update command holds SQLite's write lock for all its statements
// while each reads FerretDB's catalog of collections; a createIndexes holds the
// catalog while it waits for that lock. Unless the front holds the one back
// while the other runs, each waited for the other until SQLite gave up after
// 10 seconds: "database is locked".
func TestDDLBesideUpdates(t *testing.T) {
	s := startStore(t)
	ctx := testContext(t)
	db := connect(t, s.uri()).Database("ddl")
	coll := db.Collection("c")
	var docs []any
	var models []mongo.WriteModel
	for i := range 50 {
		name := fmt.Sprint(i)
		docs = append(docs, bson.D{{Key: "_id", Value: name}, {Key: "n", Value: int64(0)}})
		models = append(models, mongo.NewUpdateOneModel().SetFilter(bson.D{{Key: "_id", Value: name}}).
			SetUpdate(bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: int64(1)}}}}))
	}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	// Each command gets 5 s, half of SQLite's wait.
	bounded := func(f func(ctx context.Context) error) error {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		return f(ctx)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	defer wg.Wait()
	defer close(done)
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			if err := bounded(func(ctx context.Context) error {
				_, err := coll.BulkWrite(ctx, models, options.BulkWrite().SetOrdered(false))
				return err
			}); err != nil {
				t.Errorf("update beside index creations: %v", err)
				return
			}
		}
	})
	for i := range 20 {
		if err := bounded(func(ctx context.Context) error {
			_, err := db.Collection(fmt.Sprintf("x%d", i)).Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "a", Value: 1}}})
			return err
		}); err != nil {
			t.Fatalf("createIndexes %d beside updates: %v", i, err)
		}
	}
}
