//go:build race

package engine

// raceEnabled: the tests run under the race detector (go test -race).
const raceEnabled = true
