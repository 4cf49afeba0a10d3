package counters_test

import (
	"context"
	"fmt"
	"os"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/seqd/seqd"
	"github.com/seqd/seqd/counters"
)

// connect opens the application's own MongoDB, here MONGODB_URI. A replica set gives
// the majority write concern the strategies use its meaning.
func connect() *mongo.Client {
	client, err := mongo.Connect(options.Client().ApplyURI(os.Getenv("MONGODB_URI")))
	if err != nil {
		panic(err)
	}
	return client
}

// A Counter hands out order numbers from one document per sequence in the
// "counters" collection. Share one Counter per database in a process: concurrent
// calls for a name are coalesced into one write.
func ExampleCounter() {
	ctx := context.Background()
	client := connect()
	defer client.Disconnect(ctx)

	seq := counters.NewCounter(client.Database("shop"), counters.Options{})
	n, err := seq.Next(ctx, "orders") // 1 for a new name, then 2, 3, …
	if err != nil {
		panic(err)
	}
	fmt.Println("order", n)

	r, err := seq.NextN(ctx, "orders", 100) // 100 contiguous values, one write
	if err != nil {
		panic(err)
	}
	fmt.Println("reserved", r.First, "to", r.Last)
}

// In cached mode a Counter serves a busy sequence from blocks it reserves ahead:
// one write per block instead of one per batch of callers. Values stay unique
// across instances and increase within this process, with no order across
// instances. Close at shutdown gives back what the blocks still hold.
func ExampleCounter_SetMode() {
	ctx := context.Background()
	client := connect()
	defer client.Disconnect(ctx)

	seq := counters.NewCounter(client.Database("shop"), counters.Options{})
	defer seq.Close(ctx)
	// Blocks of 100 to 100,000 values; 0, 0 would take Options.Blocks' bounds.
	if err := seq.SetMode(ctx, "clicks", seqd.ModeCached, 100, 100_000); err != nil {
		panic(err)
	}
	n, err := seq.Next(ctx, "clicks") // the first call reserves a block; the next ones read memory
	if err != nil {
		panic(err)
	}
	fmt.Println("click", n)
}

// Optimistic.Insert numbers an application's own documents: the _id is the
// collection's largest integer _id plus one, so the key is in the document itself.
// It suits low insert rates; see the package comment.
func ExampleOptimistic_Insert() {
	ctx := context.Background()
	client := connect()
	defer client.Disconnect(ctx)

	invoices := counters.NewOptimistic(client.Database("shop"), counters.Options{})
	id, err := invoices.Insert(ctx, "invoices", bson.D{{Key: "customer", Value: "ada"}, {Key: "total", Value: 42}})
	if err != nil {
		panic(err)
	}
	fmt.Println("invoice", id)
}

func ExampleValidName() {
	for _, name := range []string{"orders", "orders.2024-05", "-orders", "two words"} {
		fmt.Println(name, counters.ValidName(name))
	}
	// Output:
	// orders true
	// orders.2024-05 true
	// -orders false
	// two words false
}
