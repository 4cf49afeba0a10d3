//go:build !race

package uuidv7

const RaceEnabled = false
