// A TypeScript client of seqd, generated from httpapi/openapi.json by
// openapi-typescript (seqd.ts, written next to this file by the test) and called
// through openapi-fetch, compiled with tsc --strict. It calls every operation of
// the document against the seqd in SEQD_URL, checks every answer, and takes and
// sets values past 2^53 with ?int64=string: they must come back exact. It prints
// {"operations":[…],"values":[…]} and exits 1 at the first failure.
import createClient from "openapi-fetch";
import type { paths, components } from "./seqd.js";

type Int64 = components["schemas"]["Int64"];

const base = process.env.SEQD_URL!;
const admin = process.env.SEQD_ADMIN_TOKEN!;
const client = createClient<paths>({ baseUrl: base });
const called: string[] = [];

function check(ok: boolean, what: string): asserts ok {
  if (!ok) {
    throw new Error(what);
  }
}

// exact reads an Int64 asked for with int64=string: a string, never a number.
function exact(v: Int64, what: string): bigint {
  check(typeof v === "string", `${what}: ${JSON.stringify(v)} is not a string`);
  return BigInt(v);
}

async function main(): Promise<void> {
  const name = "ts-" + process.pid;
  const auth = { Authorization: `Bearer ${admin}` };

  // ObjectIds and UUIDs: one without count, several with it (the oneOf).
  {
    const { data, error } = await client.GET("/oid", {});
    check(!error && data !== undefined && "oid" in data && /^[0-9a-f]{24}$/.test(data.oid), "GET /oid");
    const many = await client.GET("/oid", { params: { query: { count: 3, layout: "legacy" } } });
    check(many.data !== undefined && "oids" in many.data && many.data.oids.length === 3, "GET /oid?count=3");
    const hex = data.oid.toUpperCase(); // either case
    const d = await client.GET("/oid/{hex}", { params: { path: { hex } } });
    check(d.data !== undefined && d.data.oid === data.oid && d.data.pid >= 0, "GET /oid/{hex}");
    const at = await client.GET("/oid/at/{time}", { params: { path: { time: "2012-12-11T16:00:00Z" } } });
    check(at.data?.min === "50c758800000000000000000", "GET /oid/at/{time}");
    const bad = await client.GET("/oid/{hex}", { params: { path: { hex: "zz" } } });
    check(bad.response.status === 400 && bad.error?.error.code === "invalid_id", "GET /oid/{hex} 400");
    called.push("newObjectIds", "decodeObjectId", "objectIdRange");
  }
  {
    const { data } = await client.GET("/uuid", {});
    check(data !== undefined && "uuid" in data, "GET /uuid");
    const many = await client.GET("/uuid", { params: { query: { count: 2 } } });
    check(many.data !== undefined && "uuids" in many.data && many.data.uuids.length === 2, "GET /uuid?count=2");
    const d = await client.GET("/uuid/{uuid}", { params: { path: { uuid: data.uuid } } });
    check(d.data?.version === 7 && typeof d.data.unix_ms === "number", "GET /uuid/{uuid}");
    const at = await client.GET("/uuid/at/{time}", { params: { path: { time: "0" } } });
    check(at.data?.min === "00000000-0000-7000-8000-000000000000", "GET /uuid/at/{time}");
    called.push("newUuids", "decodeUuid", "uuidRange");
  }
  {
    const { data } = await client.GET("/snowflake", { params: { query: { int64: "string" } } });
    check(data !== undefined && "snowflake" in data && typeof data.snowflake === "string", "GET /snowflake?int64=string");
    const id = data !== undefined && "snowflake" in data ? String(data.snowflake) : "0";
    const many = await client.GET("/snowflake", { params: { query: { count: 2 } } });
    check(many.data !== undefined && "snowflakes" in many.data && many.data.snowflakes.length === 2, "GET /snowflake?count=2");
    const d = await client.GET("/snowflake/{id}", { params: { path: { id }, query: { int64: "string" } } });
    check(d.data !== undefined && String(d.data.snowflake) === id && typeof d.data.unix_ms === "number", "GET /snowflake/{id}");
    const at = await client.GET("/snowflake/at/{time}", { params: { path: { time: "2026-11-26T00:00:00Z" }, query: { int64: "string" } } });
    check(at.data !== undefined && BigInt(at.data.min) <= BigInt(at.data.max), "GET /snowflake/at/{time}");
    called.push("newSnowflakes", "decodeSnowflake", "snowflakeRange");
  }

  // Sequences past 2^53, set and taken as strings.
  const start = 9007199254740990n; // 2^53 - 2
  const values: string[] = [];
  {
    const { data, error } = await client.PUT("/seq/{name}", {
      params: { path: { name }, query: { int64: "string" } },
      body: { value: start.toString() },
      headers: auth,
    });
    check(!error && data !== undefined && exact(data.value, "PUT value") === start, `PUT /seq/{name}: ${JSON.stringify(error)}`);
    // A number past 2^53-1 is what JSON.stringify writes after rounding (2^53+1 goes out as 2^53), and the
    // generated type (number | string) lets it through: refused, not stored, with or without int64=string.
    for (const int64 of ["string", "number", undefined] as const) {
      const rounded = await client.PUT("/seq/{name}", {
        params: { path: { name }, query: { int64, force: true } },
        body: { value: Number(start + 3n) },
        headers: auth,
      });
      check(rounded.response.status === 400 && rounded.error?.error.code === "invalid_value" && rounded.error.error.message.includes("send it as a string"),
        `PUT a number past 2^53-1 with int64=${int64}: ${rounded.response.status} ${JSON.stringify(rounded.error)}`);
    }
    // A string is read without int64=string too; the answer is then numbers.
    const plain = await client.PUT("/seq/{name}", { params: { path: { name } }, body: { value: start.toString() }, headers: auth });
    check(plain.data !== undefined && plain.data.value === Number(start), `PUT a string without int64=string: ${JSON.stringify(plain.error)}`);
    for (let i = 1n; i <= 5n; i++) {
      const next = i % 2n === 0n
        ? await client.POST("/seq/{name}/next", { params: { path: { name }, query: { int64: "string" } } })
        : await client.GET("/seq/{name}/next", { params: { path: { name }, query: { int64: "string" } } });
      check(next.data !== undefined, "next");
      check(exact(next.data.value, "next value") === start + i, `next ${i}: ${JSON.stringify(next.data)}`);
      values.push(next.data.value as string);
    }
    check(new Set(values).size === 5, "five distinct values");
    const ranged = await client.POST("/seq/{name}/next", { params: { path: { name }, query: { count: 10, int64: "string" } } });
    check(ranged.data !== undefined && exact(ranged.data.first, "first") === start + 6n && exact(ranged.data.count, "count") === 10n, "next?count=10");
    called.push("setSequence", "nextGet", "nextPost");
  }
  {
    // The largest value, set with a string: a number would round to 2^63 and be refused.
    const top = "9223372036854775807";
    const other = name + "-top";
    const put = await client.PUT("/seq/{name}", { params: { path: { name: other }, query: { int64: "string" } }, body: { value: top }, headers: auth });
    check(put.data !== undefined && put.data.value === top, "PUT 2^63-1");
    const cur = await client.GET("/seq/{name}", { params: { path: { name: other }, query: { int64: "string" } } });
    check(cur.data !== undefined && "mode" in cur.data && cur.data.value === top && cur.data.mode === "strict", "GET /seq/{name} 2^63-1");
    const ex = await client.GET("/seq/{name}/next", { params: { path: { name: other } } });
    check(ex.response.status === 409 && ex.error?.error.code === "exhausted", "next past 2^63-1: 409 exhausted");
    // Without int64=string, the number JSON.parse reads is not the value: why the parameter exists.
    const lossy = await client.GET("/seq/{name}", { params: { path: { name: other } } });
    check(lossy.data !== undefined && typeof lossy.data.value === "number" && BigInt(lossy.data.value) !== BigInt(top), "a number past 2^53 is rounded");
    called.push("getSequence");
  }
  {
    // A numbered sequence: months of Berlin's clock, formatted; a period's last value.
    const inv = "inv-" + name; // not under the prefix the listing below reads
    const put = await client.PUT("/seq/{name}", {
      params: { path: { name: inv } },
      body: { period: "month", time_zone: "Europe/Berlin", format: "INV-{yyyy}{MM}-{seq:4}" },
      headers: auth,
    });
    check(put.data !== undefined && put.data.period === "month" && put.data.time_zone === "Europe/Berlin", `PUT a numbering: ${JSON.stringify(put.error)}`);
    const next = await client.POST("/seq/{name}/next", { params: { path: { name: inv }, query: { count: 2 } } });
    check(next.data !== undefined && next.data.period !== undefined, "next of a numbered sequence");
    const month = next.data.period.replace("-", "");
    check(next.data.formatted === `INV-${month}-0002` && next.data.formatted_first === `INV-${month}-0001`, `formatted: ${JSON.stringify(next.data)}`);
    const past = await client.GET("/seq/{name}", { params: { path: { name: inv }, query: { period: next.data.period, int64: "string" } } });
    check(past.data !== undefined && !("mode" in past.data) && past.data.value === "2", `GET /seq/{name}?period: ${JSON.stringify(past.data)}`);
    const bad = await client.PUT("/seq/{name}", { params: { path: { name: inv } }, body: { format: "{seq" }, headers: auth });
    check(bad.response.status === 400 && bad.error?.error.code === "invalid_format", "PUT a bad format: 400 invalid_format");
  }
  {
    const list = await client.GET("/seq", { params: { query: { prefix: name, int64: "string", limit: 1 } } });
    check(list.data !== undefined && list.data.sequences.length === 1 && list.data.next === name, "GET /seq page 1");
    const first = list.data.sequences[0];
    check(first !== undefined && "value" in first && exact(first.value, "listed value") === start + 15n, "GET /seq value");
    const page2 = await client.GET("/seq", { params: { query: { prefix: name, after: list.data.next, int64: "string" } } });
    check(page2.data !== undefined && page2.data.sequences.length === 1 && page2.data.next === undefined, "GET /seq page 2");
    const st = await client.GET("/seq/{name}/status", { params: { path: { name }, query: { int64: "string" } } });
    check(st.data !== undefined && st.data.name === name && typeof st.data.served === "string", "GET /seq/{name}/status");
    const missing = await client.GET("/seq/{name}", { params: { path: { name: name + "-none" } } });
    check(missing.response.status === 404 && missing.error?.error.code === "sequence_not_found", "GET /seq/{name} 404");
    const page = await client.GET("/status", { parseAs: "text" });
    check(page.response.status === 200 && typeof page.data === "string" && page.data.includes(name), "GET /status");
    called.push("listSequences", "sequenceStatus", "statusPage");
  }
  {
    const h = await client.GET("/healthz", {});
    check(h.data?.status === "ok", "GET /healthz");
    const hh = await client.HEAD("/healthz", {});
    check(hh.response.status === 200, "HEAD /healthz");
    const r = await client.GET("/readyz", {});
    check(r.data?.status === "ready", "GET /readyz");
    const rh = await client.HEAD("/readyz", {});
    check(rh.response.status === 200, "HEAD /readyz");
    const m = await client.GET("/metrics", { parseAs: "text" });
    check(typeof m.data === "string" && m.data.includes("seqd_"), "GET /metrics");
    const doc = await client.GET("/openapi.json", {});
    check(doc.data !== undefined && "openapi" in doc.data, "GET /openapi.json");
    called.push("healthz", "healthzHead", "readyz", "readyzHead", "metrics", "openapi");
  }
  console.log(JSON.stringify({ operations: called, values }));
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
});
