package main

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// The shape of the figure on the number of documents: strict next's latency with the
// counters collection as the other figures leave it (a few documents), then with
// documentsMany in it.
const (
	documentsMany  = 10_000
	documentsCalls = 1000
)

// figureDocuments times a strict next, c = 1, with a few documents in seqd's counters
// collection and with documentsMany: on a store that reads only the document a write
// names, the two are the same.
func figureDocuments(ctx context.Context, b *bench, res *figureResult) error {
	driver, err := mongo.Connect(options.Client().ApplyURI(b.store.URI()).SetAppName("seqbench-documents"))
	if err != nil {
		return err
	}
	defer driver.Disconnect(context.Background())
	coll := driver.Database("seqbench").Collection("counters") // seqd's (SEQD_DB=seqbench)

	name := fmt.Sprintf("fig%d", res.id)
	n := fmt.Sprint(documentsCalls)
	if _, err := b.load(ctx, 0, b.seqd, "-target", "seq", "-name", name, "-c", "1", "-n", "10"); err != nil { // the document, a connection
		return err
	}
	few, err := coll.CountDocuments(ctx, bson.D{})
	if err != nil {
		return err
	}
	before, err := b.load(ctx, res.id, b.seqd, "-target", "seq", "-name", name, "-expect-contiguous", "-c", "1", "-n", n)
	if err != nil {
		return err
	}

	filler := fmt.Sprintf("fig%d-filler-", res.id)
	docs := make([]any, 0, max(documentsMany-few, 0))
	for i := range documentsMany - few {
		docs = append(docs, bson.D{{Key: "_id", Value: fmt.Sprintf("%s%05d", filler, i)}, {Key: "seq", Value: int64(1)}})
	}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		return fmt.Errorf("inserting the filler documents: %w", err)
	}
	defer coll.DeleteMany(context.Background(), bson.D{{Key: "_id", Value: bson.D{{Key: "$gte", Value: filler}, {Key: "$lt", Value: filler + "~"}}}})

	after, err := b.load(ctx, res.id, b.seqd, "-target", "seq", "-name", name, "-expect-contiguous", "-c", "1", "-n", n)
	if err != nil {
		return err
	}
	res.row(fmt.Sprintf("%d. strict /seq/{name}/next p50, c = 1, %d documents in counters vs %d", res.id, documentsMany, few),
		fmt.Sprintf("p50 %s, p99 %s", formatMs(after.LatencyP50Ms), formatMs(after.LatencyP99Ms)),
		fmt.Sprintf("p50 %s, p99 %s", formatMs(before.LatencyP50Ms), formatMs(before.LatencyP99Ms)),
		fmt.Sprintf("%.2f× p50", after.LatencyP50Ms/before.LatencyP50Ms))
	res.note("The same seqd and sequence, %d values each, one at a time; between the two runs the driver inserts documents into seqd's counters collection until it holds %d (removed after). "+
		"The dev store pushes a filter's _id equality down to SQLite's _id index (cmd/devstore/ferretdb/README.md), so a write reads one document, however many there are.",
		documentsCalls, documentsMany)
	return nil
}
