package main

import (
	"fmt"

	"github.com/seqd/seqd/objectid"
)

// parseObjectID decodes the wire form. Upper-case digits are refused: the API promises
// lower case, and hex order equals byte order only when every id is written the same way.
func parseObjectID(s string) (objectid.ID, error) {
	id, err := objectid.Parse(s)
	if err != nil {
		return id, fmt.Errorf("oid %q: %w", s, err)
	}
	var buf [24]byte
	if string(id.AppendHex(buf[:0])) != s {
		return id, fmt.Errorf("oid %q: not lowercase hex", s)
	}
	return id, nil
}
