package snowflake

import (
	"errors"
	"fmt"
	"strconv"
)

// ID is a snowflake id. Its layout is not in it: decode it with the Layout
// that made it.
type ID int64

// ErrInvalidID is wrapped by every error about a malformed id.
var ErrInvalidID = errors.New("snowflake: invalid ID")

// Parse decodes an id written in decimal, as String writes it. The error
// wraps ErrInvalidID.
func Parse(s string) (ID, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		if len(s) > 32 {
			s = s[:32] + "…"
		}
		return 0, fmt.Errorf("%w: %q is not a non-negative 64-bit decimal integer", ErrInvalidID, s)
	}
	return ID(n), nil
}

// String returns id in decimal.
func (id ID) String() string { return strconv.FormatInt(int64(id), 10) }

// Int64 returns id as an int64.
func (id ID) Int64() int64 { return int64(id) }
