package counters

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/seqd/seqd"
)

// The fields of a counter document:
//
//	{_id: name, seq: N, mode: "cached", minBlock: a, maxBlock: b, reserved: R, served: S, returned: G,
//	 gen: g, leaseMs: l, floor: f, strictFrom: date,
//	 period: "month", zone: "Europe/Berlin", format: "INV-{yyyy}-{seq:6}", periodStart: ms,
//	 nextPeriodStart: ms, periods: {"2026-10": 4211, …}}
//
// Only _id and seq are always there. A document without mode is strict; the
// bounds are absent when they are the instance's defaults; the counts appear with
// the first block reserved. gen counts the changes of mode and bounds; leaseMs
// is the longest block lease any instance has taken; floor is the last value
// set, below which a give-back never moves seq; forced counts the forced Sets,
// across which no block is given back; strictFrom is there while the
// mode is "draining", a strict sequence whose instances' leases have not all
// run out yet.
//
// The last six are a numbered sequence's (see numbering.go), and absent
// from others: period is the unit after which it restarts at 1, zone the
// IANA name of the time zone its periods begin in (absent for UTC), format
// what its answers carry; periodStart is the start of the period seq counts
// in, as milliseconds since the Unix epoch (an instant, compared as a
// number: periods never go back), absent before its first value;
// nextPeriodStart, while there, announces a newer period that the next write
// begins (no write joins the stored one meanwhile); periods
// holds the last value of each of the latest finished periods, by key, at
// most maxPastPeriods of them. A cached or draining sequence has none of
// them: SetMode and SetNumbering refuse the combination.
const (
	fieldSeq        = "seq"
	fieldMode       = "mode"
	fieldMinBlock   = "minBlock"
	fieldMaxBlock   = "maxBlock"
	fieldReserved   = "reserved"
	fieldServed     = "served"
	fieldReturned   = "returned"
	fieldGen        = "gen"
	fieldLeaseMs    = "leaseMs"
	fieldFloor      = "floor"
	fieldForced     = "forced"
	fieldStrictFrom = "strictFrom"

	fieldPeriod      = "period"
	fieldZone        = "zone"
	fieldFormat      = "format"
	fieldPeriodStart = "periodStart"
	fieldNext        = "nextPeriodStart"
	fieldPast        = "periods"
)

// modeDraining is the stored mode of a sequence leaving cached mode: strict,
// but no value is handed out until the leases on blocks have run out.
const modeDraining = "draining"

// counterState is a counter document that seqd can use.
type counterState struct {
	seq                int64
	mode               seqd.Mode // ModeStrict while draining
	draining           bool
	minBlock, maxBlock int64
	blocks             seqd.BlockCounts
	gen                int64 // changes of mode and bounds
	leaseMs            int64 // the longest lease an instance took on a block
	floor              int64 // the last value set
	forced             int64 // the forced Sets
	strictFrom         time.Time

	numbering   Numbering // as stored; Period "" for none
	periodStart int64     // ms since the epoch; with hasStart
	hasStart    bool
	nextStart   int64 // a newer period announced, ms since the epoch; with hasNext
	hasNext     bool
	past        string // periods, a document of key: last value, as BSON; "" if absent
}

// sequence is s as Current and List show it.
// Its error wraps ErrInvalidCounter: a numbering seqd would not have stored.
func (s counterState) sequence(name string) (Sequence, error) {
	seq := Sequence{Name: name, Value: s.seq, Mode: s.mode, MinBlock: s.minBlock, MaxBlock: s.maxBlock, Blocks: s.blocks}
	if s.draining {
		seq.StrictFrom = s.strictFrom
		if seq.StrictFrom.IsZero() {
			seq.StrictFrom = time.UnixMilli(0).UTC() // a draining document without the field: shown as past
		}
	}
	return seq, s.showNumbering(name, &seq)
}

// parseCounter reads name's counter document, or returns an error wrapping
// ErrInvalidCounter that names the sequence and says what was found: a seq that
// is not an integer from 0 to math.MaxInt64, a mode other than "strict" or
// "cached", block bounds other than both 0 or 1 ≤ minBlock ≤ maxBlock ≤
// seqd.MaxCount, or a count that is not an integer, which a block fetch could
// not $inc. The counts' values are otherwise trusted: they are accounting, and
// a value never depends on them.
func parseCounter(name string, doc bson.Raw) (counterState, error) {
	seq, err := counterValue(name, doc)
	if err != nil {
		return counterState{}, err
	}
	s := counterState{seq: seq, mode: seqd.ModeStrict}
	if v, err := doc.LookupErr(fieldMode); err == nil {
		m, ok := v.StringValueOK()
		if !ok || m != string(seqd.ModeStrict) && m != string(seqd.ModeCached) && m != modeDraining {
			return counterState{}, fmt.Errorf(`%w: the mode of %q is %s %s, want "strict", "cached" or "draining"`,
				ErrInvalidCounter, cut(name, 40), bsonTypeName(v.Type), valueText(v))
		}
		s.mode = seqd.Mode(m)
		if m == modeDraining {
			s.mode, s.draining = seqd.ModeStrict, true
		}
	}
	if s.minBlock, err = blockBound(name, doc, fieldMinBlock); err != nil {
		return counterState{}, err
	}
	if s.maxBlock, err = blockBound(name, doc, fieldMaxBlock); err != nil {
		return counterState{}, err
	}
	if err := seqd.CheckMode(s.mode, s.minBlock, s.maxBlock); err != nil {
		return counterState{}, fmt.Errorf("%w: the block bounds of %q are %d and %d, want both 0 (the defaults) or 1 ≤ min ≤ max ≤ %d",
			ErrInvalidCounter, cut(name, 40), s.minBlock, s.maxBlock, seqd.MaxCount)
	}
	for _, c := range []struct {
		field string
		n     *int64
	}{
		{fieldReserved, &s.blocks.Reserved}, {fieldServed, &s.blocks.Served}, {fieldReturned, &s.blocks.Returned},
		{fieldGen, &s.gen}, {fieldLeaseMs, &s.leaseMs}, {fieldFloor, &s.floor}, {fieldForced, &s.forced},
	} {
		if *c.n, err = count(name, doc, c.field); err != nil {
			return counterState{}, err
		}
	}
	if err := parseNumbering(name, doc, &s); err != nil {
		return counterState{}, err
	}
	if v, err := doc.LookupErr(fieldStrictFrom); err == nil {
		if v.Type != bson.TypeDateTime {
			return counterState{}, fmt.Errorf("%w: the %s of %q is %s %s, want a date",
				ErrInvalidCounter, fieldStrictFrom, cut(name, 40), bsonTypeName(v.Type), valueText(v))
		}
		s.strictFrom = v.Time().UTC()
	}
	return s, nil
}

// blockBound reads field, a block bound: absent is 0.
func blockBound(name string, doc bson.Raw, field string) (int64, error) {
	v, err := doc.LookupErr(field)
	if err != nil {
		return 0, nil
	}
	if v.Type == bson.TypeInt32 || v.Type == bson.TypeInt64 {
		if n, _ := v.AsInt64OK(); n >= 0 && n <= seqd.MaxCount {
			return n, nil
		}
	}
	return 0, fmt.Errorf("%w: the %s of %q is %s %s, want an integer from 0 to %d",
		ErrInvalidCounter, field, cut(name, 40), bsonTypeName(v.Type), valueText(v), seqd.MaxCount)
}

// count reads one of the block counts: absent is 0.
func count(name string, doc bson.Raw, field string) (int64, error) {
	v, err := doc.LookupErr(field)
	if err != nil {
		return 0, nil
	}
	if v.Type == bson.TypeInt32 || v.Type == bson.TypeInt64 {
		n, _ := v.AsInt64OK()
		return n, nil
	}
	return 0, fmt.Errorf("%w: the %s of %q is %s %s, want an integer",
		ErrInvalidCounter, field, cut(name, 40), bsonTypeName(v.Type), valueText(v))
}

// counterFilter matches name's counter document if its seq is a counter seqd can
// use, at most max, and its mode and block bounds are ones seqd can use. Every
// write to a counter document carries it, so that no write changes a document of
// another shape: MongoDB compares numbers across types, so without the $type a
// double or a negative seq would match, and $inc would go on from it. When the
// filter matches nothing, an upsert collides with the document (E11000), and
// reading it tells why.
//
// The conditions sit inside $and: an upsert then copies nothing of them into the
// document it creates. mongod copies only equalities either way, but FerretDB
// 1.x copies a field's whole operator document, {$gte: …}, as the new seq.
//
// The filter checks each bound alone. That minBlock ≤ maxBlock needs $expr with
// $lte, which FerretDB 1.x does not evaluate; parseCounter checks it on reading.
//
// A draining document matches too: writes that hand out values add notDraining.
//
// more are further conditions, put inside the $and too.
//
// The conditions that name no argument are encoded once (fieldConditions), so
// that a write marshals little more than its name and max.
func counterFilter(name string, max int64, more ...bson.D) bson.Raw {
	doc := make([]byte, 0, len(fieldConditions)+256)
	i, doc := bsoncore.AppendDocumentStart(doc)
	doc = bsoncore.AppendStringElement(doc, "_id", name)
	a, doc := bsoncore.AppendArrayElementStart(doc, "$and")
	doc = bsoncore.AppendDocumentElement(doc, "0", mustMarshal(bson.D{{Key: fieldSeq, Value: bson.D{
		{Key: "$type", Value: bson.A{"int", "long"}},
		{Key: "$gte", Value: int64(0)},
		{Key: "$lte", Value: max},
		notArray,
	}}}))
	doc = append(doc, fieldConditions...)
	for j, m := range more {
		doc = bsoncore.AppendDocumentElement(doc, strconv.Itoa(1+len(fieldClauses)+j), mustMarshal(m))
	}
	doc, _ = bsoncore.AppendArrayEnd(doc, a)
	doc, _ = bsoncore.AppendDocumentEnd(doc, i)
	return doc
}

// fieldClauses are counterFilter's conditions on the fields other than _id and
// seq, and fieldConditions their encoding as the elements "1", "2", … of its $and.
var (
	fieldClauses = []bson.D{
		absentOr(fieldMode, bson.D{{Key: "$in", Value: bson.A{string(seqd.ModeStrict), string(seqd.ModeCached), modeDraining}}, notArray}),
		absentOr(fieldMinBlock, boundCondition),
		absentOr(fieldMaxBlock, boundCondition),
		absentOr(fieldReserved, countCondition),
		absentOr(fieldServed, countCondition),
		absentOr(fieldReturned, countCondition),
		absentOr(fieldGen, countCondition),
		absentOr(fieldLeaseMs, countCondition),
		absentOr(fieldFloor, countCondition),
		absentOr(fieldForced, countCondition),
		absentOr(fieldStrictFrom, bson.D{{Key: "$type", Value: "date"}}),
		absentOr(fieldPeriod, stringCondition),
		absentOr(fieldZone, stringCondition),
		absentOr(fieldFormat, stringCondition),
		absentOr(fieldPeriodStart, countCondition),
		absentOr(fieldNext, countCondition),
		absentOr(fieldPast, bson.D{{Key: "$type", Value: "object"}, notArray}),
	}
	fieldConditions = func() []byte {
		var b []byte
		for j, c := range fieldClauses {
			b = bsoncore.AppendDocumentElement(b, strconv.Itoa(1+j), mustMarshal(c))
		}
		return b
	}()
)

// mustMarshal encodes d, a filter of this package's own: one that does not
// encode is a bug.
func mustMarshal(d bson.D) []byte {
	b, err := bson.Marshal(d)
	if err != nil {
		panic(fmt.Sprintf("counters: a filter does not encode: %v", err))
	}
	return b
}

// notDraining keeps a write that hands out values off a sequence leaving
// cached mode.
var notDraining = bson.D{{Key: fieldMode, Value: bson.D{{Key: "$ne", Value: modeDraining}}}}

// equalOrAbsent matches a document whose field is v, or, for v = 0, absent.
func equalOrAbsent(field string, v int64) bson.D {
	if v == 0 {
		return absentOr(field, bson.D{{Key: "$eq", Value: int64(0)}})
	}
	return bson.D{{Key: field, Value: v}}
}

// boundCondition matches a block bound seqd can use.
var boundCondition = bson.D{
	{Key: "$type", Value: bson.A{"int", "long"}},
	{Key: "$gte", Value: int64(0)},
	{Key: "$lte", Value: int64(seqd.MaxCount)},
	notArray,
}

// countCondition matches a block count seqd can $inc.
var countCondition = bson.D{{Key: "$type", Value: bson.A{"int", "long"}}, notArray}

// stringCondition matches a string.
var stringCondition = bson.D{{Key: "$type", Value: "string"}, notArray}

// notArray keeps a field's other conditions from matching an array: a query
// condition on a field matches an array that holds one matching element, so
// without it {mode: ["cached"]} would pass for "cached", and a write would
// change a document that parseCounter then refuses.
var notArray = bson.E{Key: "$not", Value: bson.D{{Key: "$type", Value: "array"}}}

// absentOr matches a document without field, or whose field matches cond.
func absentOr(field string, cond bson.D) bson.D {
	return bson.D{{Key: "$or", Value: bson.A{
		bson.D{{Key: field, Value: bson.D{{Key: "$exists", Value: false}}}},
		bson.D{{Key: field, Value: cond}},
	}}}
}

// counterValue returns the seq of name's counter document, or an error wrapping
// ErrInvalidCounter that names the sequence and says what was found instead of an
// integer from 0 to math.MaxInt64. Doubles are refused even when whole: above 2^53 they cannot count
// on by one, and $inc on one stays a double.
func counterValue(name string, doc bson.Raw) (int64, error) {
	v, err := doc.LookupErr(fieldSeq)
	if err != nil {
		return 0, fmt.Errorf("%w: the counter document of %q has no seq field", ErrInvalidCounter, cut(name, 40))
	}
	switch v.Type {
	case bson.TypeInt32, bson.TypeInt64:
		if n, _ := v.AsInt64OK(); n >= 0 {
			return n, nil
		}
	}
	return 0, fmt.Errorf("%w: the seq of %q is %s %s, want an integer from 0 to %d (int32 or int64)",
		ErrInvalidCounter, cut(name, 40), bsonTypeName(v.Type), valueText(v), int64(math.MaxInt64))
}

// bsonTypeName names t with an article, as MongoDB's $type aliases spell it.
func bsonTypeName(t bson.Type) string {
	switch t {
	case bson.TypeDouble:
		return "a double"
	case bson.TypeInt32:
		return "an int"
	case bson.TypeInt64:
		return "a long"
	case bson.TypeDecimal128:
		return "a decimal"
	case bson.TypeString:
		return "a string"
	}
	return "of BSON type " + t.String()
}

// valueText shows a stored value as a person would write it (41.5, -4, "x"),
// not in extended JSON; at most about 40 bytes of it.
func valueText(v bson.RawValue) string {
	switch v.Type {
	case bson.TypeDouble:
		return strconv.FormatFloat(v.Double(), 'g', -1, 64)
	case bson.TypeInt32, bson.TypeInt64:
		n, _ := v.AsInt64OK()
		return strconv.FormatInt(n, 10)
	case bson.TypeString:
		return strconv.Quote(cut(v.StringValue(), 40))
	case bson.TypeDecimal128:
		return cut(v.Decimal128().String(), 40)
	}
	return cut(v.String(), 40)
}

// cut shortens s to at most n bytes, marking the cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
