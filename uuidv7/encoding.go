package uuidv7

import (
	"encoding"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/seqd/seqd/internal/idjson"
)

// ErrInvalidUUID is wrapped by every error about a malformed UUID, whatever the
// encoding, so errors.Is(err, ErrInvalidUUID) tells bad input from other errors.
var ErrInvalidUUID = errors.New("uuidv7: invalid UUID")

var (
	_ fmt.Stringer             = UUID{}
	_ encoding.TextAppender    = UUID{}
	_ encoding.TextMarshaler   = UUID{}
	_ encoding.TextUnmarshaler = (*UUID)(nil)
	_ json.Marshaler           = UUID{}
	_ json.Unmarshaler         = (*UUID)(nil)
	_ bson.ValueMarshaler      = UUID{}
	_ bson.ValueUnmarshaler    = (*UUID)(nil)
	_ bson.Zeroer              = UUID{}
)

// textLen is the length of the canonical form, 8-4-4-4-12 hex digits.
const textLen = 36

// hyphens are the indexes of the hyphens in the canonical form.
var hyphens = [4]int{8, 13, 18, 23}

// Parse decodes the canonical form, 8-4-4-4-12 hex digits in either case, of a
// UUID of any version. The error, which wraps ErrInvalidUUID, says what is
// wrong: the length, a missing hyphen, or the first bad character, with its
// index.
func Parse(s string) (UUID, error) { return parse(s) }

// MustParse is like Parse but panics on error. It is for constants in tests and
// examples.
func MustParse(s string) UUID {
	u, err := parse(s)
	if err != nil {
		panic(fmt.Errorf("uuidv7.MustParse(%q): %w", s, err))
	}
	return u
}

// parse is the one decoder behind Parse, UnmarshalText, UnmarshalJSON and
// UnmarshalBSONValue. It is generic so that neither a string nor a []byte is
// copied to call it.
func parse[T string | []byte](s T) (UUID, error) {
	var u UUID
	if len(s) != textLen {
		return Nil, fmt.Errorf("%w: length %d, want %d (8-4-4-4-12 hex digits)", ErrInvalidUUID, len(s), textLen)
	}
	for _, i := range hyphens {
		if s[i] != '-' {
			return Nil, fmt.Errorf("%w: want '-' at index %d, got %s", ErrInvalidUUID, i, describe(string(s[i:])))
		}
	}
	j := 0 // index in s
	for i := range u {
		if j == 8 || j == 13 || j == 18 || j == 23 {
			j++
		}
		hi, lo := idjson.HexValue[s[j]], idjson.HexValue[s[j+1]]
		if hi|lo > 0x0f {
			bad := j
			if hi <= 0x0f {
				bad++
			}
			return Nil, fmt.Errorf("%w: invalid %s at index %d", ErrInvalidUUID, describe(string(s[bad:])), bad)
		}
		u[i] = hi<<4 | lo
		j += 2
	}
	return u, nil
}

// describe names the character starting rest, for an error.
func describe(rest string) string {
	r, size := utf8.DecodeRuneInString(rest)
	if r == utf8.RuneError && size <= 1 {
		return fmt.Sprintf("byte %#02x", rest[0])
	}
	return fmt.Sprintf("character %q", r)
}

// FromBytes returns the UUID whose 16 bytes are b.
func FromBytes(b []byte) (UUID, error) {
	if len(b) != len(UUID{}) {
		return Nil, fmt.Errorf("%w: %d bytes, want %d", ErrInvalidUUID, len(b), len(UUID{}))
	}
	return UUID(b), nil
}

// String returns the canonical form, lowercase: 8-4-4-4-12 hex digits.
func (u UUID) String() string {
	var buf [textLen]byte
	return string(u.appendCanonical(buf[:0]))
}

// AppendText appends the canonical form of u to dst. It never fails, and does
// not allocate when dst has room for 36 bytes.
func (u UUID) AppendText(dst []byte) ([]byte, error) { return u.appendCanonical(dst), nil }

func (u UUID) appendCanonical(dst []byte) []byte {
	dst = hex.AppendEncode(dst, u[0:4])
	dst = append(dst, '-')
	dst = hex.AppendEncode(dst, u[4:6])
	dst = append(dst, '-')
	dst = hex.AppendEncode(dst, u[6:8])
	dst = append(dst, '-')
	dst = hex.AppendEncode(dst, u[8:10])
	dst = append(dst, '-')
	return hex.AppendEncode(dst, u[10:16])
}

// MarshalText returns the canonical form. UUID is therefore usable as a JSON
// object key.
func (u UUID) MarshalText() ([]byte, error) { return u.appendCanonical(make([]byte, 0, textLen)), nil }

// UnmarshalText decodes the canonical form, like Parse.
func (u *UUID) UnmarshalText(b []byte) error {
	v, err := parse(b)
	if err == nil {
		*u = v
	}
	return err
}

// MarshalJSON returns u as a JSON string in the canonical form.
func (u UUID) MarshalJSON() ([]byte, error) { return idjson.Quote(textLen, u.appendCanonical), nil }

// UnmarshalJSON decodes a JSON string in the canonical form, or MongoDB's
// extended JSON shorthand {"$uuid": "…"}. A JSON null leaves u unchanged, as
// encoding/json does for other types.
func (u *UUID) UnmarshalJSON(b []byte) error {
	return idjson.Unmarshal(b, textLen, "$uuid", "…", ErrInvalidUUID, u.UnmarshalText)
}

// bsonUUIDSubtype is BSON binary subtype 4, UUID. Subtype 3 is the legacy one,
// whose byte order each old driver chose for itself.
const (
	bsonUUIDSubtype       = 0x04
	bsonLegacyUUIDSubtype = 0x03
)

// MarshalBSONValue stores u as BSON binary subtype 4, which mongosh shows as
// UUID("…"), and the drivers read as a UUID.
func (u UUID) MarshalBSONValue() (byte, []byte, error) {
	// int32 length, subtype, the bytes.
	data := make([]byte, 4+1+len(u))
	binary.LittleEndian.PutUint32(data, uint32(len(u)))
	data[4] = bsonUUIDSubtype
	copy(data[5:], u[:])
	return byte(bson.TypeBinary), data, nil
}

// UnmarshalBSONValue decodes BSON binary subtype 4 of 16 bytes. It also takes
// a string in the canonical form (as an application that stored UUIDs as text
// wrote them), and turns null and undefined into Nil. Subtype 3, the legacy
// UUID, is refused: its byte order depends on the driver that wrote it.
func (u *UUID) UnmarshalBSONValue(typ byte, data []byte) error {
	switch t := bson.Type(typ); t {
	case bson.TypeBinary:
		if len(data) < 5 || int(binary.LittleEndian.Uint32(data)) != len(data)-5 {
			return fmt.Errorf("%w: malformed BSON binary", ErrInvalidUUID)
		}
		switch sub := data[4]; sub {
		case bsonUUIDSubtype:
		case bsonLegacyUUIDSubtype:
			return fmt.Errorf("%w: BSON binary subtype 3 (legacy UUID, in the byte order of the driver that wrote it), want subtype 4", ErrInvalidUUID)
		default:
			return fmt.Errorf("%w: BSON binary subtype %d, want 4", ErrInvalidUUID, sub)
		}
		v, err := FromBytes(data[5:])
		if err != nil {
			return fmt.Errorf("BSON binary: %w", err)
		}
		*u = v
	case bson.TypeString:
		// int32 length, including the trailing NUL, then the bytes and NUL.
		if len(data) < 5 || int(binary.LittleEndian.Uint32(data)) != len(data)-4 || data[len(data)-1] != 0 {
			return fmt.Errorf("%w: malformed BSON string", ErrInvalidUUID)
		}
		v, err := parse(data[4 : len(data)-1])
		if err != nil {
			return fmt.Errorf("BSON string: %w", err)
		}
		*u = v
	case bson.TypeNull, bson.TypeUndefined:
		*u = Nil
	default:
		return fmt.Errorf("%w: cannot decode BSON %s", ErrInvalidUUID, t)
	}
	return nil
}
