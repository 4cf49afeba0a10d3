package uuidv7_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/seqd/seqd/uuidv7"
)

func ExampleParse() {
	u, err := uuidv7.Parse("017F22E2-79B0-7CC3-98C4-DC0C0C07398F") // RFC 9562's example
	if err != nil {
		panic(err)
	}
	fmt.Println(u) // always lower case
	fmt.Println(u.Version(), u.IsV7(), u.Time(), u.UnixMilli())

	_, err = uuidv7.Parse("017f22e279b07cc398c4dc0c0c07398f")
	fmt.Println(err)
	// Output:
	// 017f22e2-79b0-7cc3-98c4-dc0c0c07398f
	// 7 true 2022-02-22 19:22:22 +0000 UTC 1645557742000
	// uuidv7: invalid UUID: length 32, want 36 (8-4-4-4-12 hex digits)
}

// Min turns a time range into an _id range, served by the _id index.
func ExampleMin() {
	t0 := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	t1 := t0.Add(time.Hour)
	filter := bson.M{"_id": bson.M{"$gte": uuidv7.Min(t0), "$lt": uuidv7.Min(t1)}}

	// The bounds go to the server as binary subtype 4, like the _id values.
	raw, err := bson.Marshal(filter)
	if err != nil {
		panic(err)
	}
	for _, op := range []string{"$gte", "$lt"} {
		v := bson.Raw(raw).Lookup("_id", op)
		sub, data, _ := v.BinaryOK()
		fmt.Println(op, v.Type, sub, uuidv7.UUID(data))
	}

	// Max is the largest version 7 UUID of a millisecond, for an inclusive bound ("$lte").
	fmt.Println(uuidv7.Max(t0))
	// Output:
	// $gte binary 4 01a21293-b600-7000-8000-000000000000
	// $lt binary 4 01a212ca-a480-7000-8000-000000000000
	// 01a21293-b600-7fff-bfff-ffffffffffff
}

// WithClock injects the clock, here one that steps back an hour: the
// timestamp holds and the ids still increase.
func ExampleWithClock() {
	now := time.Date(2026, 11, 25, 12, 0, 0, 123e6, time.UTC)
	g := uuidv7.NewGenerator(uuidv7.WithClock(func() time.Time { return now }))

	a := g.New()
	now = now.Add(-time.Hour)
	b := g.New()
	fmt.Println(a.Time().Format(time.RFC3339Nano), b.Time().Format(time.RFC3339Nano), uuidv7.Compare(a, b), b.Counter()-a.Counter())
	// Output:
	// 2026-11-25T12:00:00.123Z 2026-11-25T12:00:00.123Z -1 1
}

func ExampleFill() {
	ids := make([]uuidv7.UUID, 3) // e.g. GET /uuid?count=3
	uuidv7.Fill(ids)
	for _, id := range ids {
		fmt.Println(id)
	}
}

// A UUID is stored as BSON binary subtype 4, which mongosh shows as UUID("…"),
// so it can be the _id of an application's own documents.
func ExampleUUID_document() {
	type order struct {
		ID    uuidv7.UUID `bson:"_id"`
		Total int         `bson:"total"`
	}
	o := order{ID: uuidv7.MustParse("017f22e2-79b0-7cc3-98c4-dc0c0c07398f"), Total: 42} // uuidv7.New() in real code
	raw, err := bson.Marshal(o)
	if err != nil {
		panic(err)
	}
	fmt.Println(bson.Raw(raw).Lookup("_id").Type, bson.Raw(raw).Lookup("_id"))
	// Output:
	// binary {"$binary":{"base64":"AX8i4nmwfMOYxNwMDAc5jw==","subType":"04"}}
}

// Insert an application's own documents with ids from New, against the
// application's MongoDB (here MONGODB_URI).
func ExampleNew_insert() {
	ctx := context.Background()
	client, err := mongo.Connect(options.Client().ApplyURI(os.Getenv("MONGODB_URI")))
	if err != nil {
		panic(err)
	}
	defer client.Disconnect(ctx)

	orders := client.Database("shop").Collection("orders")
	id := uuidv7.New() // unique and increasing in this process, at any rate
	if _, err := orders.InsertOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "total", Value: 42}}); err != nil {
		panic(err)
	}
	var back struct {
		ID uuidv7.UUID `bson:"_id"`
	}
	if err := orders.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&back); err != nil {
		panic(err)
	}
	fmt.Println(back.ID == id, back.ID.Time())
}
