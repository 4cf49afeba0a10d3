//go:build !race

package uuidv7_test

const raceEnabled = false
