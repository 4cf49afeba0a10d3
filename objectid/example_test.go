package objectid_test

import (
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/seqd/seqd/objectid"
)

func ExampleParse() {
	id, err := objectid.Parse("5A17B9D9AB102555B9C38874")
	if err != nil {
		panic(err)
	}
	fmt.Println(id) // always lower case
	fmt.Println(id.Time(), id.Timestamp())
	fmt.Printf("process %x, counter %d\n", id.Process(), id.Counter())

	_, err = objectid.Parse("5a17b9d9ab102555b9c3887")
	fmt.Println(err)
	// Output:
	// 5a17b9d9ab102555b9c38874
	// 2017-11-24 06:19:05 +0000 UTC 1511504345
	// process ab102555b9, counter 12814452
	// objectid: invalid ID: length 23, want 24 hex characters
}

// Min turns a time range into an _id range, served by the _id index.
func ExampleMin() {
	t0 := time.Date(2012, 12, 11, 16, 0, 0, 0, time.UTC)
	t1 := t0.Add(24 * time.Hour)
	filter := bson.M{"_id": bson.M{"$gte": objectid.Min(t0), "$lt": objectid.Min(t1)}}

	// The bounds go to the server as ObjectIds, like the _id values.
	raw, err := bson.Marshal(filter)
	if err != nil {
		panic(err)
	}
	for _, op := range []string{"$gte", "$lt"} {
		v := bson.Raw(raw).Lookup("_id", op)
		fmt.Println(op, v.Type, v)
	}

	// Max is the largest id of a second, for an inclusive bound ("$lte").
	fmt.Println(objectid.Max(t0))
	// Output:
	// $gte objectID {"$oid":"50c758800000000000000000"}
	// $lt objectID {"$oid":"50c8aa000000000000000000"}
	// 50c75880ffffffffffffffff
}

// WithClock injects the clock, here one that steps back an hour: the
// timestamp holds and the ids still increase.
func ExampleWithClock() {
	now := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	g := objectid.NewGenerator(objectid.Spec, objectid.WithClock(func() time.Time { return now }))

	a := g.New()
	now = now.Add(-time.Hour)
	b := g.New()
	fmt.Println(a.Time(), b.Time(), objectid.Compare(a, b))
	// Output:
	// 2024-05-01 12:00:00 +0000 UTC 2024-05-01 12:00:00 +0000 UTC -1
}

func ExampleFill() {
	ids := make([]objectid.ID, 3) // e.g. GET /oid?count=3
	objectid.Fill(ids)
	for _, id := range ids {
		fmt.Println(id)
	}
}
