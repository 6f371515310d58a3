// Package slowtest tells whether the slow test suite runs.
//
// `go test ./...` runs the fast suite: unit tests, the store on SQLite,
// the interpreter and the corpus replays in process. The slow suite adds
// what needs real processes and outside programs: the end-to-end tests
// (the stepwise binary, moto, the Lambda stand-in, the AWS CLI, Chromium),
// PostgreSQL, and the differential tests against jsonata.js (npm). It runs
// when STEPWISE_SLOW_TESTS is set to 1, as .ci/run sets it:
//
//	STEPWISE_SLOW_TESTS=1 go test ./...
//
// A test of the slow suite calls Require, or its package's TestMain asks
// Enabled.
package slowtest

import (
	"os"
	"testing"
)

// Env is the environment variable that turns the slow suite on.
const Env = "STEPWISE_SLOW_TESTS"

// Enabled reports whether the slow suite runs.
func Enabled() bool {
	v := os.Getenv(Env)
	return v != "" && v != "0"
}

// Require skips t unless the slow suite runs; what names what makes the
// test slow.
func Require(t testing.TB, what string) {
	t.Helper()
	if !Enabled() {
		t.Skipf("skipping a test of the slow suite (%s): set %s=1 to run it, as .ci/run does", what, Env)
	}
}

// Skipped says why a package of the slow suite ran no test, for a
// TestMain that skips the whole package.
func Skipped(pkg string) string {
	return pkg + ": the slow suite is off; set " + Env + "=1 to run these tests, as .ci/run does"
}
