// Reads and writes UUIDs with the Node driver, for TestUUIDv7NodeDriver
// (integration/uuidv7_test.go). Usage:
//
//	node uuid_interop.mjs URI DB MIN MAX ID...
//
// It reads the collection fromgo sorted by _id, counts its documents with
// MIN <= _id < MAX (bounds passed as canonical UUIDs), inserts into fromnode one
// document per ID with _id: new UUID(ID) and one with a random new UUID(), and
// prints one JSON object with what it saw.
import { inspect } from "node:util";
import { MongoClient, UUID } from "mongodb";

const [uri, dbName, min, max, ...ids] = process.argv.slice(2);
const client = new MongoClient(uri);
try {
  const db = client.db(dbName);
  const docs = await db.collection("fromgo").find({}).sort({ _id: 1 }).toArray();
  const read = docs.map((d) => ({
    id: d._id instanceof UUID ? d._id.toHexString() : null,
    subtype: d._id.sub_type,
    shown: inspect(d._id),
  }));
  const inRange = await db
    .collection("fromgo")
    .find({ _id: { $gte: new UUID(min), $lt: new UUID(max) } })
    .sort({ _id: 1 })
    .toArray();
  const random = new UUID();
  await db.collection("fromnode").insertMany([...ids.map((s) => ({ _id: new UUID(s) })), { _id: random, random: true }]);
  console.log(JSON.stringify({ read, range: inRange.map((d) => d._id.toHexString()), random: random.toHexString() }));
} finally {
  await client.close();
}
