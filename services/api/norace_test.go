//go:build !race

package api_test

// raceSlowdown: no race detector, budgets hold as they are.
const raceSlowdown = 1
