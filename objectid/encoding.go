package objectid

import (
	"bytes"
	"encoding"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"unicode/utf8"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/seqd/seqd/internal/idjson"
)

// ErrInvalidID is wrapped by every error about a malformed id, whatever the
// encoding, so errors.Is(err, ErrInvalidID) tells bad input from other errors.
var ErrInvalidID = errors.New("objectid: invalid ID")

var (
	_ fmt.Stringer             = ID{}
	_ encoding.TextMarshaler   = ID{}
	_ encoding.TextUnmarshaler = (*ID)(nil)
	_ json.Marshaler           = ID{}
	_ json.Unmarshaler         = (*ID)(nil)
	_ bson.ValueMarshaler      = ID{}
	_ bson.ValueUnmarshaler    = (*ID)(nil)
	_ bson.Zeroer              = ID{}
)

// hexLen is the length of an id in hex.
const hexLen = 2 * len(ID{})

// Parse decodes 24 hex characters, in either case. The error, which wraps
// ErrInvalidID, says what is wrong: the length, or the first bad character
// and its index.
func Parse(s string) (ID, error) { return parse(s) }

// MustParse is like Parse but panics on error. It is for constants in tests
// and examples.
func MustParse(s string) ID {
	id, err := parse(s)
	if err != nil {
		panic(fmt.Errorf("objectid.MustParse(%q): %w", s, err))
	}
	return id
}

// parse is the one hex decoder behind Parse, UnmarshalText and UnmarshalJSON.
// It is generic so that neither a string nor a []byte is copied to call it.
func parse[T string | []byte](s T) (ID, error) {
	var id ID
	if len(s) != hexLen {
		return Nil, fmt.Errorf("%w: length %d, want %d hex characters", ErrInvalidID, len(s), hexLen)
	}
	for i := range id {
		hi, lo := idjson.HexValue[s[2*i]], idjson.HexValue[s[2*i+1]]
		if hi|lo > 0x0f {
			bad := 2 * i
			if hi <= 0x0f {
				bad++
			}
			return Nil, badChar(string(s[bad:]), bad)
		}
		id[i] = hi<<4 | lo
	}
	return id, nil
}

// badChar describes the character starting rest, at index i of the input.
func badChar(rest string, i int) error {
	r, size := utf8.DecodeRuneInString(rest)
	if r == utf8.RuneError && size <= 1 {
		return fmt.Errorf("%w: invalid byte %#02x at index %d", ErrInvalidID, rest[0], i)
	}
	return fmt.Errorf("%w: invalid character %q at index %d", ErrInvalidID, r, i)
}

// FromBytes returns the id whose 12 bytes are b.
func FromBytes(b []byte) (ID, error) {
	if len(b) != len(ID{}) {
		return Nil, fmt.Errorf("%w: %d bytes, want %d", ErrInvalidID, len(b), len(ID{}))
	}
	return ID(b), nil
}

// FromObjectID converts the driver's ObjectID; the bytes are the same.
func FromObjectID(oid bson.ObjectID) ID { return ID(oid) }

// ObjectID converts id to the driver's ObjectID; the bytes are the same.
func (id ID) ObjectID() bson.ObjectID { return bson.ObjectID(id) }

// Hex returns id as 24 lowercase hex characters.
func (id ID) Hex() string {
	var buf [hexLen]byte
	encodeHex(&buf, id)
	return string(buf[:])
}

// encodeHex writes id's 24 lowercase hex characters to dst, four bytes of id at
// a time (hex8). It takes half of encoding/hex's time, which reads a table for
// every nibble (BenchmarkAppendHex): GET /oid?count=1000 writes 1,000 ids an answer.
func encodeHex(dst *[hexLen]byte, id ID) {
	binary.BigEndian.PutUint64(dst[0:], hex8(binary.BigEndian.Uint32(id[0:])))
	binary.BigEndian.PutUint64(dst[8:], hex8(binary.BigEndian.Uint32(id[4:])))
	binary.BigEndian.PutUint64(dst[16:], hex8(binary.BigEndian.Uint32(id[8:])))
}

// hex8 returns the 8 lowercase hex characters of x, most significant first: each
// nibble is spread into a byte of its own, and one add makes the bytes '0'–'9'
// or 'a'–'f', without a table or a branch.
func hex8(x uint32) uint64 {
	v := uint64(x)
	v = (v | v<<16) & 0x0000ffff0000ffff
	v = (v | v<<8) & 0x00ff00ff00ff00ff
	v = (v | v<<4) & 0x0f0f0f0f0f0f0f0f                           // a nibble a byte
	letters := (v + 0x0606060606060606) >> 4 & 0x0101010101010101 // 1 in each byte ≥ 10
	return v + 0x3030303030303030 + letters*('a'-'0'-10)
}

// String returns id.Hex(), so that %v and %s print the hex form.
func (id ID) String() string { return id.Hex() }

// AppendHex appends the 24 lowercase hex characters of id to dst. It does not
// allocate when dst has room.
func (id ID) AppendHex(dst []byte) []byte {
	n := len(dst)
	dst = slices.Grow(dst, hexLen)[:n+hexLen]
	encodeHex((*[hexLen]byte)(dst[n:]), id) // in place: a copy from a buffer cost more than the encoding
	return dst
}

// MarshalText returns id.Hex() as bytes. ID is therefore usable as a JSON
// object key.
func (id ID) MarshalText() ([]byte, error) { return id.AppendHex(make([]byte, 0, hexLen)), nil }

// UnmarshalText decodes 24 hex characters, like Parse.
func (id *ID) UnmarshalText(b []byte) error {
	v, err := parse(b)
	if err == nil {
		*id = v
	}
	return err
}

// MarshalJSON returns id as a JSON string of 24 lowercase hex characters.
func (id ID) MarshalJSON() ([]byte, error) { return idjson.Quote(hexLen, id.AppendHex), nil }

// UnmarshalJSON decodes a JSON string of 24 hex characters, or MongoDB
// extended JSON, {"$oid": "<24 hex characters>"}. A JSON null leaves id
// unchanged, as encoding/json does for other types.
func (id *ID) UnmarshalJSON(b []byte) error {
	return idjson.Unmarshal(b, hexLen, "$oid", "<hex>", ErrInvalidID, id.UnmarshalText)
}

// MarshalBSONValue stores id as a BSON ObjectId (type 0x07), so that an ID
// field and a bson.ObjectID field are stored alike.
func (id ID) MarshalBSONValue() (byte, []byte, error) {
	return byte(bson.TypeObjectID), bytes.Clone(id[:]), nil
}

// UnmarshalBSONValue decodes a BSON ObjectId. Like the driver's ObjectID, it
// also takes a string of 24 hex characters, and turns null and undefined into
// Nil.
func (id *ID) UnmarshalBSONValue(typ byte, data []byte) error {
	switch t := bson.Type(typ); t {
	case bson.TypeObjectID:
		v, err := FromBytes(data)
		if err != nil {
			return fmt.Errorf("BSON ObjectId: %w", err)
		}
		*id = v
	case bson.TypeString:
		// int32 length, including the trailing NUL, then the bytes and NUL.
		if len(data) < 5 || int(binary.LittleEndian.Uint32(data)) != len(data)-4 || data[len(data)-1] != 0 {
			return fmt.Errorf("%w: malformed BSON string", ErrInvalidID)
		}
		v, err := parse(data[4 : len(data)-1])
		if err != nil {
			return fmt.Errorf("BSON string: %w", err)
		}
		*id = v
	case bson.TypeNull, bson.TypeUndefined:
		*id = Nil
	default:
		return fmt.Errorf("%w: cannot decode BSON %s", ErrInvalidID, t)
	}
	return nil
}
