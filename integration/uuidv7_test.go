//go:build integration

package integration

import (
	"bytes"
	"encoding/json"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/seqd/seqd/uuidv7"
)

// uuidT0 is the first millisecond of the ids these tests make: 2026-11-25T12:00:00.000Z.
var uuidT0 = time.UnixMilli(1_795_608_000_000)

// uuidDoc is an application's document keyed by a UUIDv7.
type uuidDoc struct {
	ID uuidv7.UUID `bson:"_id"`
	N  int         `bson:"n"`
}

// insertUUIDDocs inserts perMS documents in each of ms consecutive milliseconds from
// uuidT0, with ids from a Generator on a clock the test moves, and returns the ids in
// the order they were made.
func insertUUIDDocs(t *testing.T, coll *mongo.Collection, ms, perMS int) []uuidv7.UUID {
	t.Helper()
	now := uuidT0
	g := uuidv7.NewGenerator(uuidv7.WithClock(func() time.Time { return now }))
	var ids []uuidv7.UUID
	var docs []any
	for m := range ms {
		now = uuidT0.Add(time.Duration(m) * time.Millisecond)
		batch := make([]uuidv7.UUID, perMS)
		g.Fill(batch)
		for _, id := range batch {
			ids = append(ids, id)
			docs = append(docs, uuidDoc{ID: id, N: len(docs)})
		}
	}
	if _, err := coll.InsertMany(testContext(t), docs); err != nil {
		t.Fatalf("insert %d documents: %v", len(docs), err)
	}
	return ids
}

// findIDs returns the _ids of the documents filter selects, sorted by _id on the server.
func findIDs(t *testing.T, coll *mongo.Collection, filter any) []uuidv7.UUID {
	t.Helper()
	ctx := testContext(t)
	cur, err := coll.Find(ctx, filter, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		t.Fatalf("find %v: %v", filter, err)
	}
	var docs []uuidDoc
	if err := cur.All(ctx, &docs); err != nil {
		t.Fatalf("find %v: %v", filter, err)
	}
	ids := make([]uuidv7.UUID, len(docs))
	for i, d := range docs {
		ids[i] = d.ID
	}
	return ids
}

// TestUUIDv7StoredAsUUID inserts UUIDv7 _ids with the Go driver and reads them back:
// each is stored as binary subtype 4 (mongosh's UUID("…")), decodes to the same
// UUID, and the server sorts them in the order they were made.
func TestUUIDv7StoredAsUUID(t *testing.T) {
	coll := be.Database(t).Collection("docs")
	ids := insertUUIDDocs(t, coll, 5, 200)

	ctx := testContext(t)
	var raw bson.Raw
	if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: ids[17]}}).Decode(&raw); err != nil {
		t.Fatalf("find one by _id: %v", err)
	}
	v := raw.Lookup("_id")
	if sub, data, ok := v.BinaryOK(); !ok || sub != 4 || !bytes.Equal(data, ids[17][:]) {
		t.Fatalf("_id stored as %s %v, want binary subtype 4 holding %s", v.Type, v, ids[17])
	}
	if n, _ := raw.Lookup("n").AsInt64OK(); n != 17 {
		t.Errorf("found document n = %d, want 17", n)
	}

	got := findIDs(t, coll, bson.D{})
	if !slices.Equal(got, ids) {
		t.Errorf("the server's _id order differs from the order the ids were made (%d ids back, %d in)", len(got), len(ids))
	}
}

// TestUUIDv7RangeQuery checks that Min and Max select by time on the server:
// {_id: {$gte: Min(t0), $lt: Min(t1)}} is exactly the ids of [t0, t1), and
// {$gte: Min(t), $lte: Max(t)} those of millisecond t.
func TestUUIDv7RangeQuery(t *testing.T) {
	coll := be.Database(t).Collection("docs")
	const perMS = 100
	ids := insertUUIDDocs(t, coll, 10, perMS)
	ms := func(i int) time.Time { return uuidT0.Add(time.Duration(i) * time.Millisecond) }

	for _, tc := range []struct {
		name     string
		filter   bson.M
		from, to int // the milliseconds [from, to) it must select
	}{
		{"[t3, t6)", bson.M{"$gte": uuidv7.Min(ms(3)), "$lt": uuidv7.Min(ms(6))}, 3, 6},
		{"[t3, t5]", bson.M{"$gte": uuidv7.Min(ms(3)), "$lte": uuidv7.Max(ms(5))}, 3, 6},
		{"millisecond t9", bson.M{"$gte": uuidv7.Min(ms(9)), "$lte": uuidv7.Max(ms(9))}, 9, 10},
		{"before t2", bson.M{"$lt": uuidv7.Min(ms(2))}, 0, 2},
		{"from the epoch", bson.M{"$gte": uuidv7.Min(time.UnixMilli(0))}, 0, 10},
		{"after every id", bson.M{"$gt": uuidv7.Max(ms(9))}, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := findIDs(t, coll, bson.M{"_id": tc.filter})
			want := ids[tc.from*perMS : tc.to*perMS]
			if !slices.Equal(got, want) {
				t.Errorf("%v selected %d ids, want the %d of milliseconds %d to %d", tc.filter, len(got), len(want), tc.from, tc.to-1)
			}
		})
	}
}

// nodeModules is where TestUUIDv7NodeDriver finds the Node driver: the
// SEQD_NODE_MODULES directory, else testdata/node.
func nodeModules(t *testing.T) string {
	dir := os.Getenv("SEQD_NODE_MODULES")
	if dir == "" {
		dir = filepath.Join("testdata", "node")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "mongodb")); err != nil {
		t.Skipf("no Node driver in %s/node_modules: install it with `npm ci --prefix integration/testdata/node` (12 packages, 9 MB)", dir)
	}
	return dir
}

// TestUUIDv7NodeDriver checks the ids interoperate with the Node driver, whose UUID
// is what mongosh prints as UUID("…"): Node reads the ids Go inserted as UUIDs, equal
// and in the same order, selects the same range with UUID bounds, and Go reads back
// the UUIDs Node inserted. It needs node and the driver (see nodeModules).
func TestUUIDv7NodeDriver(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node on PATH")
	}
	dir := nodeModules(t)
	db := be.Database(t)
	ids := insertUUIDDocs(t, db.Collection("fromgo"), 4, 50)
	lo, hi := uuidv7.Min(uuidT0.Add(time.Millisecond)), uuidv7.Min(uuidT0.Add(3*time.Millisecond))
	fresh := make([]uuidv7.UUID, 20)
	uuidv7.Fill(fresh)

	uri, err := url.Parse(be.URI)
	if err != nil {
		t.Fatal(err)
	}
	if be.Direct {
		q := uri.Query()
		q.Set("directConnection", "true")
		uri.RawQuery = q.Encode()
	}
	args := []string{filepath.Join(dir, "uuid_interop.mjs"), uri.String(), db.Name(), lo.String(), hi.String()}
	for _, id := range fresh {
		args = append(args, id.String())
	}
	cmd := exec.CommandContext(testContext(t), node, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.String())
	}
	var seen struct {
		Read []struct {
			ID      *string
			Subtype int
			Shown   string
		}
		Range  []string
		Random string
	}
	if err := json.Unmarshal(out, &seen); err != nil {
		t.Fatalf("node printed %q: %v", out, err)
	}

	if len(seen.Read) != len(ids) {
		t.Fatalf("node read %d documents, want %d", len(seen.Read), len(ids))
	}
	for i, r := range seen.Read {
		if r.ID == nil || *r.ID != ids[i].String() || r.Subtype != 4 || r.Shown != `new UUID('`+ids[i].String()+`')` {
			t.Fatalf("node read document %d as %+v (id %v), want the UUID %s, subtype 4", i, r, r.ID, ids[i])
		}
	}
	var want []string
	for _, id := range ids[50:150] {
		want = append(want, id.String())
	}
	if !slices.Equal(seen.Range, want) {
		t.Errorf("node's range query with UUID(%s) ≤ _id < UUID(%s) found %d ids, want the %d of milliseconds 1 and 2", lo, hi, len(seen.Range), len(want))
	}

	back := findIDs(t, db.Collection("fromnode"), bson.D{})
	random := uuidv7.MustParse(seen.Random)
	if i := slices.Index(back, random); i < 0 || random.Version() != 4 {
		t.Errorf("Go did not read back node's random UUID %s (version %d)", random, random.Version())
	} else {
		back = slices.Delete(back, i, i+1)
	}
	if !slices.Equal(back, fresh) {
		t.Errorf("Go read back %v from the ids node inserted, want %v", back, fresh)
	}
	t.Logf("node %s read %d UUIDs, shown as %s; range %d; wrote %d", strings.TrimSpace(nodeVersion(node)), len(seen.Read), seen.Read[0].Shown, len(seen.Range), len(fresh)+1)
}

func nodeVersion(node string) string {
	out, _ := exec.Command(node, "--version").Output()
	return string(out)
}
