//go:build race

package api_test

// raceSlowdown is how much slower code runs under the race detector: time budgets that
// hold for the gateway as built are widened by it in `go test -race`.
const raceSlowdown = 5
