//go:build race

package snowflake_test

// raceEnabled: the race detector makes each contended atomic operation cost
// about a microsecond, so the longest tests make fewer ids under it.
const raceEnabled = true
