package uuidv7_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/seqd/seqd/uuidv7"
)

const rfcExample = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f" // RFC 9562 A.6

func TestParseCase(t *testing.T) {
	want := uuidv7.MustParse(rfcExample)
	for _, s := range []string{rfcExample, strings.ToUpper(rfcExample), "017F22E2-79b0-7Cc3-98C4-dc0c0c07398F"} {
		got, err := uuidv7.Parse(s)
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
}

// TestParseErrors checks each error names what is wrong, and wraps the one
// sentinel.
func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		in, want string
	}{
		{"", "uuidv7: invalid UUID: length 0, want 36 (8-4-4-4-12 hex digits)"},
		{"017f22e2-79b0-7cc3-98c4-dc0c0c07398", "uuidv7: invalid UUID: length 35, want 36 (8-4-4-4-12 hex digits)"},
		{"017f22e279b07cc398c4dc0c0c07398f", "uuidv7: invalid UUID: length 32, want 36 (8-4-4-4-12 hex digits)"},
		{"{017f22e2-79b0-7cc3-98c4-dc0c0c07398f}", "uuidv7: invalid UUID: length 38, want 36 (8-4-4-4-12 hex digits)"},
		{"urn:uuid:017f22e2-79b0-7cc3-98c4-dc0c0c07398f", "uuidv7: invalid UUID: length 45, want 36 (8-4-4-4-12 hex digits)"},
		{"017f22e2_79b0-7cc3-98c4-dc0c0c07398f", "uuidv7: invalid UUID: want '-' at index 8, got character '_'"},
		{"017f22e2-79b0-7cc3-98c4+dc0c0c07398f", "uuidv7: invalid UUID: want '-' at index 23, got character '+'"},
		{"017f22e2-79b0-7cc3-98c4-dc0c0c07398g", "uuidv7: invalid UUID: invalid character 'g' at index 35"},
		{"x17f22e2-79b0-7cc3-98c4-dc0c0c07398f", "uuidv7: invalid UUID: invalid character 'x' at index 0"},
		{"017f22e2-79b0-7cc3-98c4-dc0c0c0739 f", "uuidv7: invalid UUID: invalid character ' ' at index 34"},
		{"017f22e2-79b0-7cc3-98c4-dc0c0c07398\xff", "uuidv7: invalid UUID: invalid byte 0xff at index 35"},
		{"017f22e2-79b0-7cc3-98c4-dc0c0c0739é", "uuidv7: invalid UUID: invalid character 'é' at index 34"},
		{"017f22e2-79b0-7cc3-98c4-dc0c0c07-98f", "uuidv7: invalid UUID: invalid character '-' at index 32"},
	} {
		_, err := uuidv7.Parse(tc.in)
		if err == nil || err.Error() != tc.want {
			t.Errorf("Parse(%q): error %v, want %q", tc.in, err, tc.want)
		}
		if !errors.Is(err, uuidv7.ErrInvalidUUID) {
			t.Errorf("Parse(%q): error %v does not wrap ErrInvalidUUID", tc.in, err)
		}
	}
}

func TestMustParsePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("MustParse of a bad UUID did not panic")
		}
	}()
	uuidv7.MustParse("not a uuid")
}

func TestFromBytes(t *testing.T) {
	want := uuidv7.MustParse(rfcExample)
	if got, err := uuidv7.FromBytes(want[:]); err != nil || got != want {
		t.Errorf("FromBytes = %v, %v", got, err)
	}
	if _, err := uuidv7.FromBytes(want[:15]); !errors.Is(err, uuidv7.ErrInvalidUUID) {
		t.Errorf("FromBytes of 15 bytes: error %v, want ErrInvalidUUID", err)
	}
}

func TestText(t *testing.T) {
	u := uuidv7.MustParse(rfcExample)
	b, err := u.MarshalText()
	if err != nil || string(b) != rfcExample {
		t.Errorf("MarshalText = %q, %v", b, err)
	}
	buf := make([]byte, 0, 64)
	if allocs := testing.AllocsPerRun(100, func() { buf, _ = u.AppendText(buf[:0]) }); allocs != 0 || string(buf) != rfcExample {
		t.Errorf("AppendText = %q with %v allocations, want %q and none", buf, allocs, rfcExample)
	}
	var back uuidv7.UUID
	if err := back.UnmarshalText([]byte(strings.ToUpper(rfcExample))); err != nil || back != u {
		t.Errorf("UnmarshalText = %v, %v", back, err)
	}
	if err := back.UnmarshalText([]byte("nope")); !errors.Is(err, uuidv7.ErrInvalidUUID) || back != u {
		t.Errorf("UnmarshalText of a bad UUID: %v, %v; want ErrInvalidUUID and no change", back, err)
	}
	// As a map key, through TextMarshaler.
	m, err := json.Marshal(map[uuidv7.UUID]int{u: 1})
	if err != nil || string(m) != `{"`+rfcExample+`":1}` {
		t.Errorf("JSON map key: %s, %v", m, err)
	}
}

func TestJSON(t *testing.T) {
	u := uuidv7.MustParse(rfcExample)
	type doc struct {
		ID  uuidv7.UUID  `json:"id"`
		Ptr *uuidv7.UUID `json:"ptr"`
	}
	b, err := json.Marshal(doc{ID: u, Ptr: &u})
	if want := `{"id":"` + rfcExample + `","ptr":"` + rfcExample + `"}`; err != nil || string(b) != want {
		t.Errorf("Marshal = %s, %v; want %s", b, err, want)
	}
	for _, in := range []string{
		`"` + rfcExample + `"`,
		`"` + strings.ToUpper(rfcExample) + `"`,
		`  "` + rfcExample + `"  `,
		`"\u0030` + rfcExample[1:] + `"`, // an escape, read the slow way
		`{"$uuid":"` + rfcExample + `"}`,
	} {
		var got uuidv7.UUID
		if err := json.Unmarshal([]byte(in), &got); err != nil || got != u {
			t.Errorf("Unmarshal(%s) = %v, %v", in, got, err)
		}
	}
	got := u
	if err := json.Unmarshal([]byte("null"), &got); err != nil || got != u {
		t.Errorf("Unmarshal(null) = %v, %v; want no change", got, err)
	}
	for _, in := range []string{
		`"` + rfcExample[:35] + `"`,
		`"` + rfcExample + `x"`,
		`"\u00zz"`,
		`{"$uuid":"` + rfcExample + `","x":1}`,
		`{"$oid":"` + rfcExample + `"}`,
		`{"$uuid":1}`,
		`17`,
		`[]`,
	} {
		var got uuidv7.UUID
		err := got.UnmarshalJSON([]byte(in))
		if !errors.Is(err, uuidv7.ErrInvalidUUID) || got != uuidv7.Nil {
			t.Errorf("UnmarshalJSON(%s) = %v, %v; want ErrInvalidUUID", in, got, err)
		}
	}
}

// TestBSON checks a UUID field is stored as binary subtype 4, reads back, and
// reads what the driver's own bson.Binary wrote.
func TestBSON(t *testing.T) {
	u := uuidv7.MustParse(rfcExample)
	type doc struct {
		ID    uuidv7.UUID  `bson:"_id"`
		Other *uuidv7.UUID `bson:"other,omitempty"`
		Empty uuidv7.UUID  `bson:"empty,omitempty"`
	}
	raw, err := bson.Marshal(doc{ID: u})
	if err != nil {
		t.Fatal(err)
	}
	v := bson.Raw(raw).Lookup("_id")
	sub, data, ok := v.BinaryOK()
	if !ok || sub != 4 || string(data) != string(u[:]) {
		t.Fatalf("_id stored as %s %v, want binary subtype 4 of the 16 bytes", v.Type, v)
	}
	if _, err := bson.Raw(raw).LookupErr("empty"); err == nil {
		t.Error("a Nil UUID tagged omitempty was stored")
	}
	if got := v.String(); !strings.Contains(got, `"subType":"04"`) {
		t.Errorf("extended JSON %s, want subType 04", got)
	}

	var back doc
	if err := bson.Unmarshal(raw, &back); err != nil || back.ID != u {
		t.Errorf("Unmarshal = %+v, %v", back, err)
	}

	// What other code wrote: the driver's Binary, a string, null.
	for _, tc := range []struct {
		name string
		v    any
		want uuidv7.UUID
	}{
		{"bson.Binary subtype 4", bson.Binary{Subtype: 4, Data: u[:]}, u},
		{"string", rfcExample, u},
		{"upper-case string", strings.ToUpper(rfcExample), u},
		{"null", nil, uuidv7.Nil},
	} {
		raw, err := bson.Marshal(bson.D{{Key: "_id", Value: tc.v}})
		if err != nil {
			t.Fatal(err)
		}
		var d struct {
			ID uuidv7.UUID `bson:"_id"`
		}
		d.ID = uuidv7.MustParse("ffffffff-ffff-ffff-ffff-ffffffffffff")
		if err := bson.Unmarshal(raw, &d); err != nil || d.ID != tc.want {
			t.Errorf("%s: decoded %v, %v; want %v", tc.name, d.ID, err, tc.want)
		}
	}

	for _, tc := range []struct {
		name, want string
		v          any
	}{
		{"subtype 3", "BSON binary subtype 3 (legacy UUID", bson.Binary{Subtype: 3, Data: u[:]}},
		{"subtype 0", "BSON binary subtype 0, want 4", bson.Binary{Subtype: 0, Data: u[:]}},
		{"15 bytes", "15 bytes, want 16", bson.Binary{Subtype: 4, Data: u[:15]}},
		{"bad string", "length 3", "abc"},
		{"int", "cannot decode BSON 32-bit integer", int32(7)},
		{"ObjectId", "cannot decode BSON objectID", bson.NewObjectID()},
	} {
		raw, err := bson.Marshal(bson.D{{Key: "_id", Value: tc.v}})
		if err != nil {
			t.Fatal(err)
		}
		var d struct {
			ID uuidv7.UUID `bson:"_id"`
		}
		err = bson.Unmarshal(raw, &d)
		if !errors.Is(err, uuidv7.ErrInvalidUUID) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want ErrInvalidUUID saying %q", tc.name, err, tc.want)
		}
	}

	// Malformed values, straight to the method.
	for _, tc := range []struct {
		typ  bson.Type
		data []byte
	}{
		{bson.TypeBinary, []byte{16, 0, 0}},
		{bson.TypeBinary, []byte{17, 0, 0, 0, 4, 1, 2}},
		{bson.TypeString, []byte{5, 0, 0, 0, 'a'}},
		{bson.TypeString, []byte{1}},
	} {
		var got uuidv7.UUID
		if err := got.UnmarshalBSONValue(byte(tc.typ), tc.data); !errors.Is(err, uuidv7.ErrInvalidUUID) {
			t.Errorf("UnmarshalBSONValue(%s, %x) = %v, want ErrInvalidUUID", tc.typ, tc.data, err)
		}
	}
}

// TestBSONRangeFilter checks Min and Max go to the server as binary subtype 4,
// like the _id values they bound.
func TestBSONRangeFilter(t *testing.T) {
	u := uuidv7.New()
	raw, err := bson.Marshal(bson.M{"_id": bson.M{"$gte": uuidv7.Min(u.Time()), "$lte": uuidv7.Max(u.Time())}})
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range []string{"$gte", "$lte"} {
		if sub, _, ok := bson.Raw(raw).Lookup("_id", op).BinaryOK(); !ok || sub != 4 {
			t.Errorf("%s is not binary subtype 4", op)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add(rfcExample)
	f.Add(strings.ToUpper(rfcExample))
	f.Add("00000000-0000-0000-0000-000000000000")
	f.Add("017f22e2-79b0-7cc3-98c4-dc0c0c07398")
	f.Fuzz(func(t *testing.T, s string) {
		u, err := uuidv7.Parse(s)
		if err != nil {
			if !errors.Is(err, uuidv7.ErrInvalidUUID) {
				t.Fatalf("Parse(%q): error %v does not wrap ErrInvalidUUID", s, err)
			}
			return
		}
		if got := u.String(); !strings.EqualFold(got, s) {
			t.Fatalf("Parse(%q) = %s, which does not print back", s, got)
		}
		var viaJSON uuidv7.UUID
		if err := json.Unmarshal([]byte(`"`+s+`"`), &viaJSON); err != nil || viaJSON != u {
			t.Fatalf("JSON %q = %v, %v; Parse gave %v", s, viaJSON, err, u)
		}
		typ, data, _ := u.MarshalBSONValue()
		var viaBSON uuidv7.UUID
		if err := viaBSON.UnmarshalBSONValue(typ, data); err != nil || viaBSON != u {
			t.Fatalf("BSON round trip of %v = %v, %v", u, viaBSON, err)
		}
	})
}
