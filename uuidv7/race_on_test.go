//go:build race

package uuidv7

// RaceEnabled: the race detector makes each contended atomic operation cost
// about a microsecond, so the longest tests make fewer ids under it.
const RaceEnabled = true
