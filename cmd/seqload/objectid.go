package main

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
)

// objectID is an ObjectId as seqd hands it out: 12 bytes, sent as 24 lowercase hex digits.
// seqload keeps every id it receives, so this, not the string, is what it stores.
type objectID [12]byte

// parseObjectID decodes the wire form. Upper-case digits are refused: the API promises
// lower case, and hex order equals byte order only when every id is written the same way.
func parseObjectID(s string) (objectID, error) {
	var id objectID
	if len(s) != 2*len(id) {
		return id, fmt.Errorf("oid %q: want 24 hex digits, got %d characters", s, len(s))
	}
	for i := range id {
		hi, okHi := lowerHexDigit(s[2*i])
		lo, okLo := lowerHexDigit(s[2*i+1])
		if !okHi || !okLo {
			return id, fmt.Errorf("oid %q: not lowercase hex", s)
		}
		id[i] = hi<<4 | lo
	}
	return id, nil
}

func lowerHexDigit(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}

func (id objectID) String() string { return hex.EncodeToString(id[:]) }

// compareObjectIDs orders ids bytewise, which is also the order of their hex strings.
// It compares two words instead of twelve bytes: sorting tens of millions of ids
// spends most of its time here.
func compareObjectIDs(a, b objectID) int {
	if x, y := binary.BigEndian.Uint64(a[:8]), binary.BigEndian.Uint64(b[:8]); x != y {
		if x < y {
			return -1
		}
		return 1
	}
	x, y := binary.BigEndian.Uint32(a[8:]), binary.BigEndian.Uint32(b[8:])
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}
