// Package testwait waits in tests for a condition to hold, in the test's
// own goroutine.
//
// require.Eventually runs its condition in a goroutine of its own: a
// condition that calls require (or t.Fatal, or a helper taking t) fails
// the test from another goroutine, and a condition still running when
// Eventually gives up can fail a test that has already returned, which
// aborts the whole test binary. Until calls the condition from the
// caller's goroutine, so a condition may use t freely and nothing outlives
// the wait.
package testwait

import (
	"fmt"
	"testing"
	"time"
)

// Until calls cond every tick until it returns true, and fails the test
// (t.Fatalf, with msgAndArgs: a format and its arguments) if it has not by
// the time timeout ran out. The condition is called once more at the end,
// so a slow last tick is not taken for a failure.
func Until(t testing.TB, cond func() bool, timeout, tick time.Duration, msgAndArgs ...any) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if cond() {
			return
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(tick)
	}
	if cond() {
		return
	}
	t.Fatalf("condition not met within %s%s", timeout, message(msgAndArgs))
}

func message(msgAndArgs []any) string {
	if len(msgAndArgs) == 0 {
		return ""
	}
	if format, ok := msgAndArgs[0].(string); ok {
		return ": " + fmt.Sprintf(format, msgAndArgs[1:]...)
	}
	return ": " + fmt.Sprint(msgAndArgs...)
}
