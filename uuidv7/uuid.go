package uuidv7

import (
	"cmp"
	"encoding/binary"
	"time"
)

// UUID is a UUID of any version, 16 bytes in network order. The zero value is
// Nil.
type UUID [16]byte

// Nil is the zero UUID. Every generated UUID is greater than Nil.
var Nil UUID

// maxMillis is the last millisecond the 48-bit timestamp can hold,
// 10889-08-02T05:31:50.655Z.
const maxMillis = 1<<48 - 1

// lastMillis is the last millisecond a Generator stamps: 9999-12-31T23:59:59.999Z,
// the last that RFC 3339 can write. It keeps every id's time printable, and it
// keeps the state word (millis<<16 | counter) 2^60 away from wrapping, so that
// calls that panic at the limit cannot wrap it either.
const lastMillis = 253402300799999

// IsZero reports whether u is Nil. With it, the driver omits a UUID field
// tagged omitempty when it is Nil.
func (u UUID) IsZero() bool { return u == Nil }

// Version returns the version field, bits 48–51: 7 for the ids New makes.
func (u UUID) Version() int { return int(u[6] >> 4) }

// IsV7 reports whether u is a version 7 UUID of RFC 9562's variant (10), the
// only kind whose first 48 bits are a time.
func (u UUID) IsV7() bool { return u.Version() == 7 && u[8]&0xc0 == 0x80 }

// UnixMilli returns the first 48 bits, the Unix milliseconds of a version 7
// UUID.
func (u UUID) UnixMilli() int64 {
	return int64(binary.BigEndian.Uint64(u[0:8]) >> 16)
}

// Time returns UnixMilli as a UTC time. It means something only if IsV7.
func (u UUID) Time() time.Time { return time.UnixMilli(u.UnixMilli()).UTC() }

// Counter returns the 16-bit counter that New puts in bits 52–63 and 66–69. Ids
// of other generators hold other bits there.
func (u UUID) Counter() uint16 {
	return uint16(u[6]&0x0f)<<12 | uint16(u[7])<<4 | uint16(u[8]>>2&0x0f)
}

// Compare returns -1, 0 or +1 as a is less than, equal to or greater than b,
// bytewise. Ids from one Generator compare in the order they were made, so
// Compare suits slices.SortFunc.
func Compare(a, b UUID) int {
	if x, y := binary.BigEndian.Uint64(a[:8]), binary.BigEndian.Uint64(b[:8]); x != y {
		return cmp.Compare(x, y)
	}
	return cmp.Compare(binary.BigEndian.Uint64(a[8:]), binary.BigEndian.Uint64(b[8:]))
}

// Min returns the smallest version 7 UUID of the millisecond t.UnixMilli(): the
// timestamp, version 7, variant 10, and zero bits. Together with Max it turns
// a time range into an _id range:
//
//	bson.M{"_id": bson.M{"$gte": uuidv7.Min(t0), "$lt": uuidv7.Min(t1)}}
//
// selects the version 7 ids of milliseconds [t0, t1), both truncated to the
// millisecond.
//
// Min clamps t to what the timestamp can hold, 1970-01-01T00:00:00Z to
// 10889-08-02T05:31:50.655Z; it never wraps. Earlier times give the smallest
// bound of millisecond 0, below every version 7 id.
func Min(t time.Time) UUID { return bound(t, 0x00) }

// Max returns the largest version 7 UUID of the millisecond t.UnixMilli(): the
// timestamp, version 7, variant 10, and one bits, for inclusive upper bounds
// ("$lte"). It clamps t like Min.
func Max(t time.Time) UUID { return bound(t, 0xff) }

func bound(t time.Time, fill byte) UUID {
	ms := uint64(min(max(t.UnixMilli(), 0), maxMillis))
	var u UUID
	binary.BigEndian.PutUint64(u[0:8], ms<<16)
	for i := 6; i < len(u); i++ {
		u[i] = fill
	}
	u[6] = 0x70 | u[6]&0x0f
	u[8] = 0x80 | u[8]&0x3f
	return u
}
