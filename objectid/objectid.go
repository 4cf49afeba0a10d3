package objectid

import (
	"cmp"
	"encoding/binary"
	"time"
)

// ID is a MongoDB ObjectId. The zero value is Nil.
type ID [12]byte

// Nil is the zero ID. Every generated ID is greater than Nil.
var Nil ID

// maxTimestamp is the last second the 4-byte timestamp can hold,
// 2106-02-07T06:28:15Z.
const maxTimestamp = 1<<32 - 1

// IsZero reports whether id is Nil. With it, the driver omits an ID field
// tagged omitempty when it is Nil.
func (id ID) IsZero() bool { return id == Nil }

// Timestamp returns the id's timestamp, in Unix seconds.
func (id ID) Timestamp() uint32 { return binary.BigEndian.Uint32(id[0:4]) }

// Time returns the id's timestamp as a UTC time.
func (id ID) Time() time.Time { return time.Unix(int64(id.Timestamp()), 0).UTC() }

// Counter returns the id's 3-byte counter.
func (id ID) Counter() uint32 { return uint32(id[9])<<16 | uint32(id[10])<<8 | uint32(id[11]) }

// Process returns bytes 4–8: the random process part of a Spec id, or the
// machine and pid of a Legacy one.
func (id ID) Process() [5]byte { return [5]byte(id[4:9]) }

// Machine returns the machine part of a Legacy id, the first 3 bytes of
// md5(hostname). For a Spec id it is the first 3 random bytes.
func (id ID) Machine() [3]byte { return [3]byte(id[4:7]) }

// Pid returns the pid part of a Legacy id, the low 16 bits of the process id.
// For a Spec id it is the last 2 random bytes.
func (id ID) Pid() uint16 { return binary.BigEndian.Uint16(id[7:9]) }

// Compare returns -1, 0 or +1 as a is less than, equal to or greater than b,
// bytewise. Ids from one Generator compare in the order they were generated,
// so Compare suits slices.SortFunc.
func Compare(a, b ID) int {
	// Two big-endian words rather than twelve bytes: sorting many ids spends
	// most of its time here.
	if x, y := binary.BigEndian.Uint64(a[:8]), binary.BigEndian.Uint64(b[:8]); x != y {
		if x < y {
			return -1
		}
		return 1
	}
	return cmp.Compare(binary.BigEndian.Uint32(a[8:]), binary.BigEndian.Uint32(b[8:]))
}

// Min returns the smallest id with the timestamp t.Unix(): the timestamp and 8
// zero bytes. Together with Max it turns a time range into an _id range:
//
//	bson.M{"_id": bson.M{"$gte": objectid.Min(t0), "$lt": objectid.Min(t1)}}
//
// selects the ids made in seconds [t0, t1), both truncated to the second.
//
// Min clamps t to the range the timestamp can hold, 1970-01-01T00:00:00Z to
// 2106-02-07T06:28:15Z; it never wraps. Earlier times give Nil, the smallest
// id of all, so a range starting before 1970 still starts at the first id.
// Later times give the smallest id of the last second.
func Min(t time.Time) ID { return withTimestamp(t, 0x00) }

// Max returns the largest id with the timestamp t.Unix(): the timestamp and 8
// 0xff bytes, for inclusive upper bounds ("$lte").
//
// Max clamps t like Min: later times give the largest id of all (12 0xff
// bytes), so a range ending after 2106 still takes every id; earlier times
// give the largest id of second 0.
func Max(t time.Time) ID { return withTimestamp(t, 0xff) }

func withTimestamp(t time.Time, fill byte) ID {
	sec := min(max(t.Unix(), 0), maxTimestamp)
	var id ID
	binary.BigEndian.PutUint32(id[0:4], uint32(sec))
	for i := 4; i < len(id); i++ {
		id[i] = fill
	}
	return id
}
