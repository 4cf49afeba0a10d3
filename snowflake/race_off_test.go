//go:build !race

package snowflake_test

const raceEnabled = false
