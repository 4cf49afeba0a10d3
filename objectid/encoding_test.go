package objectid_test

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/seqd/seqd/objectid"
)

const golden = "5a17b9d9ab102555b9c38874"

var goldenBytes = [12]byte{0x5a, 0x17, 0xb9, 0xd9, 0xab, 0x10, 0x25, 0x55, 0xb9, 0xc3, 0x88, 0x74}

func TestParse(t *testing.T) {
	for _, s := range []string{golden, strings.ToUpper(golden), "5A17b9D9ab102555B9c38874"} {
		id, err := objectid.Parse(s)
		if err != nil {
			t.Fatalf("Parse(%q): %v", s, err)
		}
		if id != goldenBytes {
			t.Errorf("Parse(%q) = %x, want %x", s, id[:], goldenBytes[:])
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		in, want string
	}{
		{"", "length 0, want 24"},
		{golden[:23], "length 23, want 24"},
		{golden + "0", "length 25, want 24"},
		{"5a17bg d9ab102555b9c3887", "invalid character 'g' at index 5"},
		{"5a17b9d9ab102555b9c3887z", "invalid character 'z' at index 23"},
		{"z" + golden[1:], "invalid character 'z' at index 0"},
		{"5a17b9d9 b102555b9c38874", "invalid character ' ' at index 8"},
		{"5a17b9d9ab102555b9c388é", "invalid character 'é' at index 22"},
		{"5a17b9d9ab102555b9c3887\xff", "invalid byte 0xff at index 23"},
		{"0x17b9d9ab102555b9c38874", "invalid character 'x' at index 1"},
	} {
		id, err := objectid.Parse(tc.in)
		if err == nil {
			t.Errorf("Parse(%q) = %v, want an error", tc.in, id)
			continue
		}
		if !errors.Is(err, objectid.ErrInvalidID) {
			t.Errorf("Parse(%q): %v does not wrap ErrInvalidID", tc.in, err)
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q): %q, want it to say %q", tc.in, err, tc.want)
		}
		if id != objectid.Nil {
			t.Errorf("Parse(%q) = %v with the error, want Nil", tc.in, id)
		}
	}
}

func TestMustParse(t *testing.T) {
	if id := objectid.MustParse(golden); id != goldenBytes {
		t.Errorf("MustParse(%q) = %v", golden, id)
	}
	defer func() {
		err, _ := recover().(error)
		if !errors.Is(err, objectid.ErrInvalidID) {
			t.Errorf("MustParse(bad) panicked with %v, want an error wrapping ErrInvalidID", err)
		}
	}()
	objectid.MustParse("bad")
}

func TestFromBytes(t *testing.T) {
	id, err := objectid.FromBytes(goldenBytes[:])
	if err != nil || id.Hex() != golden {
		t.Errorf("FromBytes = %v, %v; want %s", id, err, golden)
	}
	for _, n := range []int{0, 11, 13, 24} {
		if _, err := objectid.FromBytes(make([]byte, n)); !errors.Is(err, objectid.ErrInvalidID) || !strings.Contains(err.Error(), "want 12") {
			t.Errorf("FromBytes(%d bytes): %v, want ErrInvalidID saying want 12", n, err)
		}
	}
}

func TestFormat(t *testing.T) {
	id := objectid.ID(goldenBytes)
	if got := id.Hex(); got != golden {
		t.Errorf("Hex() = %s, want %s", got, golden)
	}
	if got := id.String(); got != golden {
		t.Errorf("String() = %s, want %s", got, golden)
	}
	if got := strings.ToUpper(golden); objectid.MustParse(got).Hex() != golden {
		t.Errorf("Hex() of upper-case input is not lower case")
	}
	if got := objectid.Nil.Hex(); got != "000000000000000000000000" {
		t.Errorf("Nil.Hex() = %s", got)
	}

	buf := make([]byte, 0, 64)
	buf = append(buf, "id="...)
	if got := string(id.AppendHex(buf)); got != "id="+golden {
		t.Errorf("AppendHex = %q, want %q", got, "id="+golden)
	}
	if allocs := testing.AllocsPerRun(100, func() { buf = id.AppendHex(buf[:0]) }); allocs != 0 {
		t.Errorf("AppendHex allocates %v times, want 0", allocs)
	}
}

// TestHexEveryByte checks Hex and AppendHex against encoding/hex with every byte
// value at every position of an id.
func TestHexEveryByte(t *testing.T) {
	for pos := range len(objectid.ID{}) {
		for v := range 256 {
			var id objectid.ID
			for i := range id {
				id[i] = byte(v + 37*i) // the other bytes vary too
			}
			id[pos] = byte(v)
			want := hex.EncodeToString(id[:])
			if got := id.Hex(); got != want {
				t.Fatalf("Hex() = %s, want %s", got, want)
			}
			if got := string(id.AppendHex([]byte("x"))); got != "x"+want {
				t.Fatalf("AppendHex = %s, want x%s", got, want)
			}
		}
	}
}

func TestText(t *testing.T) {
	id := objectid.ID(goldenBytes)
	text, err := id.MarshalText()
	if err != nil || string(text) != golden {
		t.Fatalf("MarshalText = %q, %v; want %q", text, err, golden)
	}
	var back objectid.ID
	if err := back.UnmarshalText([]byte(strings.ToUpper(golden))); err != nil || back != id {
		t.Errorf("UnmarshalText = %v, %v; want %v", back, err, id)
	}
	if err := back.UnmarshalText([]byte("nope")); !errors.Is(err, objectid.ErrInvalidID) {
		t.Errorf("UnmarshalText(nope): %v, want ErrInvalidID", err)
	}
}

func TestJSON(t *testing.T) {
	type doc struct {
		ID    objectid.ID            `json:"id"`
		Ptr   *objectid.ID           `json:"ptr"`
		ByKey map[objectid.ID]string `json:"byKey"`
	}
	id := objectid.ID(goldenBytes)
	in := doc{ID: id, Ptr: &id, ByKey: map[objectid.ID]string{id: "x"}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"` + golden + `","ptr":"` + golden + `","byKey":{"` + golden + `":"x"}}`
	if string(b) != want {
		t.Fatalf("json.Marshal = %s, want %s", b, want)
	}
	var out doc
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if out.ID != id || out.Ptr == nil || *out.Ptr != id || out.ByKey[id] != "x" {
		t.Errorf("round trip: %+v, want %+v", out, in)
	}
}

func TestUnmarshalJSON(t *testing.T) {
	for _, in := range []string{
		`"` + golden + `"`,
		`"` + strings.ToUpper(golden) + `"`,
		`{"$oid":"` + golden + `"}`,
		` { "$oid" : "` + golden + `" } `,
		`"\u0035a17b9d9ab102555b9c38874"`, // an escape is still the same string
	} {
		var id objectid.ID
		if err := id.UnmarshalJSON([]byte(in)); err != nil || id != goldenBytes {
			t.Errorf("UnmarshalJSON(%s) = %v, %v; want %s", in, id, err, golden)
		}
		var v struct{ ID objectid.ID }
		if err := json.Unmarshal([]byte(`{"ID":`+in+`}`), &v); err != nil || v.ID != goldenBytes {
			t.Errorf("json.Unmarshal of a field %s = %v, %v; want %s", in, v.ID, err, golden)
		}
	}

	// null leaves the value alone, as encoding/json does.
	id := objectid.ID(goldenBytes)
	if err := id.UnmarshalJSON([]byte("null")); err != nil || id != goldenBytes {
		t.Errorf("UnmarshalJSON(null) = %v, %v; want %s unchanged", id, err, golden)
	}

	for _, tc := range []struct{ in, want string }{
		{`"nope"`, "length 4"},
		{`""`, "length 0"},
		{`"5a17b9d9ab102555b9c3887g"`, "index 23"},
		{`{"$oid":"5a17b9d9ab102555b9c3887g"}`, "index 23"},
		{`{"$oid":"` + golden + `","x":"y"}`, "exactly one key"},
		{`{"oid":"` + golden + `"}`, "exactly one key"},
		{`{}`, "exactly one key"},
		{`{"$oid":5}`, "extended JSON"},
		{`{"$oid":`, "extended JSON"},
		{`12`, "want a JSON string"},
		{`true`, "want a JSON string"},
		{`"unterminated`, "invalid ID"},
	} {
		var id objectid.ID
		err := id.UnmarshalJSON([]byte(tc.in))
		if !errors.Is(err, objectid.ErrInvalidID) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("UnmarshalJSON(%s): %v, want ErrInvalidID saying %q", tc.in, err, tc.want)
		}
	}
}

func TestDriverConversion(t *testing.T) {
	oid, err := bson.ObjectIDFromHex(golden)
	if err != nil {
		t.Fatal(err)
	}
	id := objectid.FromObjectID(oid)
	if id.Hex() != golden {
		t.Errorf("FromObjectID(%v) = %v", oid, id)
	}
	if back := id.ObjectID(); back != oid {
		t.Errorf("ObjectID() = %v, want %v", back, oid)
	}
	// The driver's own decoders agree on the fields.
	if !oid.Timestamp().Equal(id.Time()) {
		t.Errorf("driver Timestamp() = %v, ours %v", oid.Timestamp(), id.Time())
	}
	gen := objectid.New()
	if got := objectid.FromObjectID(gen.ObjectID()); got != gen || gen.ObjectID().Hex() != gen.Hex() {
		t.Errorf("round trip through bson.ObjectID: %v -> %v", gen, got)
	}
}

func TestBSON(t *testing.T) {
	type doc struct {
		ID    objectid.ID  `bson:"_id"`
		Ref   objectid.ID  `bson:"ref,omitempty"`
		Ptr   *objectid.ID `bson:"ptr"`
		Slice []objectid.ID
	}
	id, other := objectid.ID(goldenBytes), objectid.New()
	in := doc{ID: id, Ptr: &other, Slice: []objectid.ID{other, id}}
	raw, err := bson.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}

	// Stored as real ObjectIds, and a Nil omitempty field is left out.
	for _, key := range []string{"_id", "ptr"} {
		v := bson.Raw(raw).Lookup(key)
		if v.Type != bson.TypeObjectID {
			t.Errorf("%s: BSON type %v, want ObjectID (0x07)", key, v.Type)
		}
	}
	if oid, ok := bson.Raw(raw).Lookup("_id").ObjectIDOK(); !ok || oid != id.ObjectID() {
		t.Errorf("_id = %v, want %v", oid, id.ObjectID())
	}
	if elem := bson.Raw(raw).Lookup("slice", "0"); elem.Type != bson.TypeObjectID {
		t.Errorf("slice.0: BSON type %v, want ObjectID", elem.Type)
	}
	if _, err := bson.Raw(raw).LookupErr("ref"); err == nil {
		t.Error("Nil ref with omitempty was stored")
	}

	var out doc
	if err := bson.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	if out.ID != id || out.Ref != objectid.Nil || out.Ptr == nil || *out.Ptr != other || len(out.Slice) != 2 || out.Slice[0] != other || out.Slice[1] != id {
		t.Errorf("round trip: %+v, want %+v", out, in)
	}

	// Interchangeable with the driver's type in both directions.
	var driverDoc struct {
		ID bson.ObjectID `bson:"_id"`
	}
	if err := bson.Unmarshal(raw, &driverDoc); err != nil || driverDoc.ID != id.ObjectID() {
		t.Errorf("decode as bson.ObjectID = %v, %v; want %v", driverDoc.ID, err, id.ObjectID())
	}
	driverRaw, err := bson.Marshal(bson.D{{Key: "_id", Value: other.ObjectID()}})
	if err != nil {
		t.Fatal(err)
	}
	var ours struct {
		ID objectid.ID `bson:"_id"`
	}
	if err := bson.Unmarshal(driverRaw, &ours); err != nil || ours.ID != other {
		t.Errorf("decode the driver's ObjectID = %v, %v; want %v", ours.ID, err, other)
	}
}

func TestUnmarshalBSONValue(t *testing.T) {
	type doc struct {
		ID objectid.ID `bson:"_id"`
	}
	decode := func(value any) (objectid.ID, error) {
		raw, err := bson.Marshal(bson.D{{Key: "_id", Value: value}})
		if err != nil {
			t.Fatal(err)
		}
		d := doc{ID: objectid.New()} // so null must overwrite it
		err = bson.Unmarshal(raw, &d)
		return d.ID, err
	}

	for _, tc := range []struct {
		name  string
		value any
		want  objectid.ID
	}{
		{"hex string", golden, goldenBytes},
		{"upper-case hex string", strings.ToUpper(golden), goldenBytes},
		{"null", nil, objectid.Nil},
		{"undefined", bson.Undefined{}, objectid.Nil},
	} {
		if got, err := decode(tc.value); err != nil || got != tc.want {
			t.Errorf("%s: got %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
	for _, tc := range []struct {
		name  string
		value any
	}{
		{"int32", int32(7)},
		{"bad hex string", "nope"},
		{"binary", bson.Binary{Data: goldenBytes[:]}},
	} {
		if got, err := decode(tc.value); !errors.Is(err, objectid.ErrInvalidID) {
			t.Errorf("%s: got %v, %v; want an error wrapping ErrInvalidID", tc.name, got, err)
		}
	}

	// Malformed payloads, which the driver does not produce.
	var id objectid.ID
	for _, tc := range []struct {
		name string
		typ  bson.Type
		data []byte
	}{
		{"short ObjectId", bson.TypeObjectID, goldenBytes[:11]},
		{"string without NUL", bson.TypeString, []byte{3, 0, 0, 0, 'a', 'b', 'c'}},
		{"string with a wrong length", bson.TypeString, []byte{9, 0, 0, 0, 'a', 0}},
		{"truncated string", bson.TypeString, []byte{1, 0}},
	} {
		if err := id.UnmarshalBSONValue(byte(tc.typ), tc.data); !errors.Is(err, objectid.ErrInvalidID) {
			t.Errorf("%s: %v, want an error wrapping ErrInvalidID", tc.name, err)
		}
	}
}

// FuzzParse checks Parse against the driver's decoder, which accepts the same
// inputs, and that Hex and Parse are inverses.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		golden, strings.ToUpper(golden), "47cc67093475061e3d95369d", "000000000000000000000000",
		"ffffffffffffffffffffffff", "", "zz", golden[:23], golden + "0", "5a17b9d9ab102555b9c3887é",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := objectid.Parse(s)
		oid, driverErr := bson.ObjectIDFromHex(s)
		if (err == nil) != (driverErr == nil) {
			t.Fatalf("Parse(%q) error %v, driver error %v", s, err, driverErr)
		}
		if err != nil {
			if !errors.Is(err, objectid.ErrInvalidID) {
				t.Fatalf("Parse(%q): %v does not wrap ErrInvalidID", s, err)
			}
			return
		}
		if id.ObjectID() != oid {
			t.Fatalf("Parse(%q) = %v, driver %v", s, id, oid)
		}
		if h := id.Hex(); !strings.EqualFold(h, s) || h != strings.ToLower(h) {
			t.Fatalf("Parse(%q).Hex() = %q, want the input in lower case", s, h)
		}
		if back, err := objectid.Parse(id.Hex()); err != nil || back != id {
			t.Fatalf("Parse(Hex()) = %v, %v; want %v", back, err, id)
		}
	})
}
