package main

import (
	"fmt"

	"github.com/seqd/seqd/snowflake"
)

// decodeSnowflakes appends the ids of a GET /snowflake body, as decodeObjectIDs
// does for /oid: {"snowflakes":[…]} with want ids when the request carried a
// count, else {"snowflake":…}, ids as JSON numbers.
func decodeSnowflakes(dst []snowflake.ID, body []byte, list bool, want int) ([]snowflake.ID, error) {
	return decodeIDs(dst, body, list, want, "snowflake", parseSnowflake)
}

func parseSnowflake(n int64) (snowflake.ID, error) {
	if n < 0 {
		return 0, fmt.Errorf("snowflake %d: negative", n)
	}
	return snowflake.ID(n), nil
}
