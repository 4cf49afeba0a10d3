package objectid_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

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

// An ID is stored as a BSON ObjectId, so it can be the _id of an application's own
// documents, and the driver reads it back into an objectid.ID or a bson.ObjectID alike.
func ExampleID_document() {
	type order struct {
		ID    objectid.ID `bson:"_id"`
		Total int         `bson:"total"`
	}
	o := order{ID: objectid.MustParse("5a17b9d9ab102555b9c38874"), Total: 42} // objectid.New() in real code
	raw, err := bson.Marshal(o)
	if err != nil {
		panic(err)
	}
	fmt.Println(bson.Raw(raw).Lookup("_id").Type, bson.Raw(raw).Lookup("_id"))
	// Output:
	// objectID {"$oid":"5a17b9d9ab102555b9c38874"}
}

// Insert an application's own documents with ids from New, against the application's
// MongoDB (here MONGODB_URI).
func ExampleNew_insert() {
	ctx := context.Background()
	client, err := mongo.Connect(options.Client().ApplyURI(os.Getenv("MONGODB_URI")))
	if err != nil {
		panic(err)
	}
	defer client.Disconnect(ctx)

	orders := client.Database("shop").Collection("orders")
	id := objectid.New() // unique and increasing in this process, at any rate
	if _, err := orders.InsertOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "total", Value: 42}}); err != nil {
		panic(err)
	}
	var back struct {
		ID objectid.ID `bson:"_id"`
	}
	if err := orders.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&back); err != nil {
		panic(err)
	}
	fmt.Println(back.ID == id, back.ID.Time())
}
