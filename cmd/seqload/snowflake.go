package main

import (
	"encoding/json"
	"fmt"

	"github.com/seqd/seqd/snowflake"
)

// decodeSnowflakes appends the ids of a GET /snowflake body, as decodeObjectIDs
// does for /oid: {"snowflakes":[…]} with want ids when the request carried a
// count, else {"snowflake":…}, ids as JSON numbers.
func decodeSnowflakes(dst []snowflake.ID, body []byte, list bool, want int) ([]snowflake.ID, error) {
	var resp struct {
		Snowflake  *int64  `json:"snowflake"`
		Snowflakes []int64 `json:"snowflakes"`
	}
	if err := json.Unmarshal(body, &resp); err != nil {
		return dst, fmt.Errorf("snowflake body: %w", err)
	}
	ids := resp.Snowflakes
	switch {
	case list && resp.Snowflakes == nil:
		return dst, fmt.Errorf(`snowflake body: no "snowflakes" list`)
	case !list && resp.Snowflake == nil:
		return dst, fmt.Errorf(`snowflake body: no "snowflake"`)
	case !list:
		ids = []int64{*resp.Snowflake}
	}
	if len(ids) != want {
		return dst, fmt.Errorf("snowflake body: %d ids, want %d", len(ids), want)
	}
	for _, id := range ids {
		if id < 0 {
			return dst, fmt.Errorf("snowflake body: negative id %d", id)
		}
		dst = append(dst, snowflake.ID(id))
	}
	return dst, nil
}
