// Package objectid generates and encodes MongoDB ObjectIds that never repeat
// within a process, whatever the rate.
//
// # Why
//
// The common generators (the driver's bson.NewObjectID, rs/xid) pair the clock
// second with a 24-bit counter that wraps: past 16,777,216 ids in one second
// they hand out ids they have already handed out. Here the counter never wraps
// inside a second; it carries into the timestamp instead.
//
// # Layout
//
// An ID is 12 bytes, compared bytewise:
//
//	bytes 0–3   timestamp, Unix seconds, big-endian
//	bytes 4–8   process part, fixed for the life of a Generator:
//	              Spec:   5 bytes from crypto/rand
//	              Legacy: first 3 bytes of md5(hostname), then the pid's
//	                      low 16 bits, big-endian (as mgo did)
//	bytes 9–11  counter, big-endian
//
// Spec is the current MongoDB layout and the default. Legacy exists for
// systems that read the machine and pid back out of ids; if the hostname
// cannot be read, its 3 machine bytes are random instead.
//
// # Guarantees
//
// A Generator keeps the timestamp and counter of the last id it handed out in
// one 64-bit word (timestamp<<24 | counter) and moves it forward with a single
// atomic operation per call (internal/clockseq, the core uuidv7 and snowflake
// use too). From that:
//
//   - Unique: a Generator never returns the same id twice, at any rate and from
//     any number of goroutines. The package-level New and NewLegacy each use
//     one Generator per process, so ids from either never repeat within the
//     process.
//   - Ordered: ids from one Generator are strictly increasing, bytewise, in the
//     order the calls take effect (for concurrent callers, the order of their
//     atomic operations). A batch from Fill is a run of consecutive ids.
//   - Overflow: a second holds 2^24 ids (counter 0 to 0xffffff). When the
//     counter would overflow, the next id takes the next second's timestamp,
//     with counter 0, whether or not the clock has got there. So timestamps
//     run ahead of the wall clock only under overload, and by at most
//     floor(k / 2^24) seconds, where k is the number of ids the Generator made
//     since its timestamp last caught up with the clock (counted from the
//     random start in a Generator's first second, see below). At 2^24 ids per
//     second or fewer they never run ahead; under sustained overload they
//     drift ahead by one second per 2^24 ids of excess, and rejoin the clock
//     when it catches up with them.
//   - Clock steps: the timestamp never goes back. If the wall clock steps back,
//     ids keep the last timestamp and count on, carrying as above, until the
//     clock passes it again. Times before 1970 count as second 0.
//   - Range: the timestamp field ends at 0xffffffff seconds
//     (2106-02-07T06:28:15Z). New and Fill panic rather than wrap past it. A
//     clock reading past it makes that one call panic and changes nothing, so
//     the Generator goes on once the clock reads right again.
//
// A Spec counter starts each second at 0, so the whole 2^24 is available; a
// Generator's first second starts instead at a random value below 2^23, as the
// specification and mgo ask, which keeps at least 2^23 ids for that second.
// A Legacy counter starts every second at a random value below 2^24, for the
// twins below; a second then holds 2^24 minus that start before it carries, so
// under bursts a Legacy Generator's timestamps run ahead of the clock sooner.
//
// Uniqueness across processes rests on the process part, as it does for every
// ObjectId: 40 random bits for Spec. Legacy has only the hostname's hash and the
// pid, and two live processes can share both ("twins": pid 1 in containers
// given one hostname). Twins' ids can collide only within a second in which both
// make ids. Because each second's counter starts at random, twins that make k1
// and k2 ids in one second collide in it with probability about
// (k1+k2-1)/2^24, independently from second to second: 1 in 16.8 million for one
// id each, and no more than if every counter were drawn at random, which gives
// about k1·k2/2^24. (Counters that restarted at 0 would collide in every such
// second.) Prefer Spec: its twins need the same 40 random bits.
//
// # Clock
//
// A Generator stamps ids with the wall clock's Unix second, as
// time.Now().Unix() gives it, for little more than half the cost: time.Now
// reads two clocks, wall and monotonic, while a Generator reads the wall clock
// once per second and only the monotonic clock in between. A step of the wall
// clock therefore reaches the timestamps within a second. WithClock replaces
// the clock, for tests.
//
// # Fork
//
// The process part is drawn when a Generator is created; the package-level
// functions use Generators created when the package initializes. A Go
// program's pid does not change while it runs: the runtime does not support
// fork without exec, and an exec'd program initializes this package, and draws
// new bytes, afresh. So New does not check the pid, which would cost a getpid
// system call per id (about 190 ns where New takes about 40).
//
// # Encoding
//
// Text and JSON use 24 lowercase hex characters; Parse, UnmarshalText and
// UnmarshalJSON share one decoder that accepts either case, and UnmarshalJSON
// also takes MongoDB extended JSON, {"$oid": "…"}. In BSON an ID is a real
// ObjectId (type 0x07), interchangeable with the driver's bson.ObjectID. Every
// decoding error wraps ErrInvalidID.
//
// Because the timestamp leads, Min and Max turn a time range into an _id range
// that MongoDB serves from the _id index.
package objectid
