package testwait

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// recorder is a testing.TB that records a fatal failure instead of ending
// the goroutine.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) { r.failed = fmt.Sprintf(format, args...) }

func TestUntil(t *testing.T) {
	t.Parallel()
	calls := 0
	Until(t, func() bool { calls++; return calls == 3 }, time.Minute, time.Millisecond)
	require.Equal(t, 3, calls, "called until it held, then no more")

	r := &recorder{TB: t}
	began := time.Now()
	Until(r, func() bool { return false }, 20*time.Millisecond, time.Millisecond, "never %s", "true")
	require.Equal(t, "condition not met within 20ms: never true", r.failed)
	require.GreaterOrEqual(t, time.Since(began), 20*time.Millisecond, "waited the whole timeout")

	// The condition runs in the caller's goroutine: it may use t.
	Until(t, func() bool { t.Helper(); return true }, time.Second, time.Millisecond)
}

func TestMessage(t *testing.T) {
	t.Parallel()
	require.Equal(t, "", message(nil))
	require.Equal(t, ": execution e1 never reached SUCCEEDED", message([]any{"execution %s never reached %s", "e1", "SUCCEEDED"}))
	require.Equal(t, ": 42", message([]any{42}))
}
