package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// seqdFilter has the shape of the filters seqd's counter writes send
// (counterFilter in seqd's counters package): the sequence's name as _id, and
// conditions on the document's other fields in a $and.
func seqdFilter(name string, max int64) bson.D {
	notArray := bson.E{Key: "$not", Value: bson.D{{Key: "$type", Value: "array"}}}
	absentOr := func(field string, cond bson.D) bson.D {
		return bson.D{{Key: "$or", Value: bson.A{
			bson.D{{Key: field, Value: bson.D{{Key: "$exists", Value: false}}}},
			bson.D{{Key: field, Value: cond}},
		}}}
	}
	count := bson.D{{Key: "$type", Value: bson.A{"int", "long"}}, notArray}
	return bson.D{
		{Key: "_id", Value: name},
		{Key: "$and", Value: bson.A{
			bson.D{{Key: "seq", Value: bson.D{
				{Key: "$type", Value: bson.A{"int", "long"}},
				{Key: "$gte", Value: int64(0)},
				{Key: "$lte", Value: max},
				notArray,
			}}},
			absentOr("mode", bson.D{{Key: "$in", Value: bson.A{"strict", "cached", "draining"}}, notArray}),
			absentOr("reserved", count),
			absentOr("served", count),
			absentOr("gen", count),
		}},
	}
}

// queryPlan returns SQLite's plan for a find with filter, as the store's explain
// reports it.
func queryPlan(t *testing.T, db *mongo.Database, coll string, filter bson.D) string {
	t.Helper()
	var res struct {
		QueryPlanner struct {
			Plan []string `bson:"Plan"`
		} `bson:"queryPlanner"`
	}
	cmd := bson.D{{Key: "explain", Value: bson.D{{Key: "find", Value: coll}, {Key: "filter", Value: filter}}}}
	if err := db.RunCommand(testContext(t), cmd).Decode(&res); err != nil {
		t.Fatalf("explain %v: %v", filter, err)
	}
	return strings.Join(res.QueryPlanner.Plan, "; ")
}

// A filter that requires _id to equal a string or an ObjectId, at its top level or
// in a top-level $and, is answered from the _id index, whatever else it asks.
// FerretDB alone read the whole table for every filter, {_id: "a"} included: its
// SQL named _id by an expression other than its index's. A filter on an _id of
// another type, or on a range, still reads the whole table.
func TestIDEqualityUsesTheIndex(t *testing.T) {
	s := startStore(t)
	ctx := testContext(t)
	db := connect(t, s.uri()).Database("pushdown")
	oid := bson.NewObjectID()
	if _, err := db.Collection("c").InsertMany(ctx, []any{
		bson.D{{Key: "_id", Value: "a"}, {Key: "seq", Value: int64(1)}},
		bson.D{{Key: "_id", Value: oid}, {Key: "seq", Value: int64(1)}},
	}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		filter bson.D
		index  bool
	}{
		{"only _id", bson.D{{Key: "_id", Value: "a"}}, true},
		{"seqd's counter filter", seqdFilter("a", 10), true},
		{"_id after another field", bson.D{{Key: "seq", Value: 1}, {Key: "_id", Value: "a"}}, true},
		{"ObjectId", bson.D{{Key: "_id", Value: oid}, {Key: "seq", Value: 1}}, true},
		{"_id in $and", bson.D{{Key: "$and", Value: bson.A{bson.D{{Key: "seq", Value: 1}}, bson.D{{Key: "_id", Value: "a"}}}}}, true},
		{"_id in a nested $and", bson.D{{Key: "$and", Value: bson.A{bson.D{{Key: "$and", Value: bson.A{bson.D{{Key: "_id", Value: "a"}}}}}}}}, true},
		{"_id in $or", bson.D{{Key: "$or", Value: bson.A{bson.D{{Key: "_id", Value: "a"}}}}}, false},
		{"int _id", bson.D{{Key: "_id", Value: 1}, {Key: "seq", Value: 1}}, false},
		{"document _id", bson.D{{Key: "_id", Value: bson.D{{Key: "x", Value: "a"}}}, {Key: "seq", Value: 1}}, false},
		{"_id range", bson.D{{Key: "_id", Value: bson.D{{Key: "$gt", Value: "a"}}}, {Key: "seq", Value: 1}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan := queryPlan(t, db, "c", tc.filter)
			if got := strings.Contains(plan, "USING INDEX"); got != tc.index {
				t.Errorf("filter %v: plan %q, want the _id index used: %v", tc.filter, plan, tc.index)
			}
		})
	}
}

// Pushing the _id equality down changes no answer. A find or count with filter F
// gets what an aggregation gets whose $match F comes third, where FerretDB pushes
// nothing down but reads every document and applies F to each, as it does without
// the change. A write with F leaves the same answer and documents as one with
// {$or: [F]}, which means the same and is not pushed down either. The documents
// have _ids of several types, ones that compare equal across types among them
// (7 and int64(7), 9 and 9.0).
func TestPushdownKeepsAnswers(t *testing.T) {
	s := startStore(t)
	ctx := testContext(t)
	db := connect(t, s.uri()).Database("pushdown")
	oid := bson.NewObjectID()
	ids := []any{"a", "b", "ab", `a"b`, "é", "", oid, int32(7), int64(8), 9.0, bson.D{{Key: "x", Value: "a"}}}
	var docs []any
	for i, id := range ids {
		docs = append(docs, bson.D{{Key: "_id", Value: id}, {Key: "seq", Value: int64(i)}, {Key: "mode", Value: "strict"}})
	}

	eq := func(id any, more ...bson.E) bson.D { return append(bson.D{{Key: "_id", Value: id}}, more...) }
	seq := func(v int) bson.E { return bson.E{Key: "seq", Value: int64(v)} }
	bogus := bson.E{Key: "seq", Value: bson.D{{Key: "$bogus", Value: 1}}}
	filters := []bson.D{
		eq("a"), eq("a", seq(0)), eq("a", seq(1)), eq("zz", seq(0)), eq(`a"b`, seq(3)), eq("é"), eq(""),
		eq(oid, seq(6)), eq(oid, seq(0)), eq(bson.NewObjectID()),
		eq(int32(7)), eq(int64(7), seq(7)), eq(7.0), eq(int32(8)), eq(int32(9), seq(9)),
		eq(bson.D{{Key: "x", Value: "a"}}, seq(10)),
		seqdFilter("a", 10), seqdFilter("b", 0), seqdFilter("b", 1), seqdFilter("zz", 10),
		{{Key: "seq", Value: int64(1)}, {Key: "_id", Value: "b"}},
		{{Key: "$and", Value: bson.A{bson.D{{Key: "seq", Value: bson.D{{Key: "$gte", Value: 0}}}}, eq("ab")}}},
		{{Key: "$and", Value: bson.A{bson.D{{Key: "$and", Value: bson.A{eq("ab")}}}}}},
		{{Key: "_id", Value: "a"}, {Key: "$and", Value: bson.A{eq("b")}}},
		{{Key: "_id", Value: "a"}, {Key: "_id", Value: "b"}},
		{{Key: "_id", Value: "a"}, {Key: "_id", Value: "a"}},
		eq("a", bogus), eq("zz", bogus),
		{{Key: "$or", Value: bson.A{eq("a"), eq("b")}}},
		{{Key: "$nor", Value: bson.A{eq("a")}}},
		{{Key: "_id", Value: bson.D{{Key: "$ne", Value: "a"}}}},
		{{Key: "_id", Value: bson.D{{Key: "$in", Value: bson.A{"a", "b"}}}}},
	}

	// compare runs op on filter, and whole on what filter means the same as to
	// FerretDB but is not pushed down, each on its own copy of the documents, and
	// fails if the answers or the documents left differ.
	compare := func(t *testing.T, what string, filter bson.D, op, whole func(*mongo.Collection, bson.D) (any, error)) {
		t.Helper()
		var got [2]string
		for i, op := range []func(*mongo.Collection, bson.D) (any, error){op, whole} {
			coll := db.Collection(fmt.Sprintf("c%d", i))
			if err := coll.Drop(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := coll.InsertMany(ctx, docs); err != nil {
				t.Fatal(err)
			}
			res, err := op(coll, filter)
			got[i] = fmt.Sprintf("answer %v, error %v, documents %v", res, serverErrorCode(err), contents(ctx, t, coll))
		}
		if got[0] != got[1] {
			t.Errorf("%s %v:\n  pushed down: %s\n  read whole:  %s", what, filter, got[0], got[1])
		}
	}
	matched := func(c *mongo.Collection, f bson.D) (any, error) {
		cur, err := c.Find(ctx, f, options.Find().SetSort(bson.D{{Key: "seq", Value: 1}}))
		if err != nil {
			return nil, err
		}
		var all []bson.D
		err = cur.All(ctx, &all)
		return all, err
	}
	// matchedWhole is matched by an aggregation that FerretDB does not push down:
	// it takes a $match only as the first or second stage.
	matchedWhole := func(c *mongo.Collection, f bson.D) (any, error) {
		skip := bson.D{{Key: "$skip", Value: 0}}
		cur, err := c.Aggregate(ctx, bson.A{skip, skip, bson.D{{Key: "$match", Value: f}}, bson.D{{Key: "$sort", Value: bson.D{{Key: "seq", Value: 1}}}}})
		if err != nil {
			return nil, err
		}
		var all []bson.D
		err = cur.All(ctx, &all)
		return all, err
	}
	counted := func(c *mongo.Collection, f bson.D) (any, error) {
		var res bson.M
		err := c.Database().RunCommand(ctx, bson.D{{Key: "count", Value: c.Name()}, {Key: "query", Value: f}}).Decode(&res)
		return res["n"], err
	}
	countedWhole := func(c *mongo.Collection, f bson.D) (any, error) {
		all, err := matchedWhole(c, f)
		if all, ok := all.([]bson.D); ok {
			return int32(len(all)), err
		}
		return nil, err
	}
	// orWrap runs a write on {$or: [f]}.
	orWrap := func(op func(*mongo.Collection, bson.D) (any, error)) func(*mongo.Collection, bson.D) (any, error) {
		return func(c *mongo.Collection, f bson.D) (any, error) {
			return op(c, bson.D{{Key: "$or", Value: bson.A{f}}})
		}
	}
	inc := bson.D{{Key: "$inc", Value: bson.D{{Key: "seq", Value: int64(1)}}}}
	for _, filter := range filters {
		compare(t, "find", filter, matched, matchedWhole)
		compare(t, "count", filter, counted, countedWhole)
		writes := map[string]func(*mongo.Collection, bson.D) (any, error){}
		writes["findAndModify"] = func(c *mongo.Collection, f bson.D) (any, error) {
			var doc bson.D
			err := c.FindOneAndUpdate(ctx, f, inc, options.FindOneAndUpdate().SetReturnDocument(options.After)).Decode(&doc)
			return doc, err
		}
		writes["updateMany"] = func(c *mongo.Collection, f bson.D) (any, error) {
			res, err := c.UpdateMany(ctx, f, inc)
			if res != nil {
				return []any{res.MatchedCount, res.ModifiedCount}, err
			}
			return nil, err
		}
		writes["deleteMany"] = func(c *mongo.Collection, f bson.D) (any, error) {
			res, err := c.DeleteMany(ctx, f)
			if res != nil {
				return res.DeletedCount, err
			}
			return nil, err
		}
		for what, write := range writes {
			compare(t, what, filter, write, orWrap(write))
		}
	}
}

// serverErrorCode is err's server error code, or err itself if it is not one.
func serverErrorCode(err error) any {
	var se mongo.ServerError
	if errors.As(err, &se) {
		return se.ErrorCodes()
	}
	return err
}

// contents returns coll's documents, sorted by their encoding, so that two
// collections compare equal whatever their order.
func contents(ctx context.Context, t *testing.T, coll *mongo.Collection) []string {
	t.Helper()
	cur, err := coll.Find(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	var docs []bson.Raw
	if err := cur.All(ctx, &docs); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range docs {
		out = append(out, d.String())
	}
	slices.Sort(out)
	return out
}
