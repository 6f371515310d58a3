package sdkjob_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/integration"
	"stepwise/integration/sdkjob"
)

// The start token names a task: the same for every dispatch of it,
// another for another task, execution, or execution of the same name
// started at another time; none outside an execution.
func TestStartToken(t *testing.T) {
	t.Parallel()
	start := time.UnixMilli(1700000000123)
	r := &integration.Request{ExecutionArn: "arn:aws:states:us-east-1:123456789012:execution:sm:e1", TaskID: "task-3", ExecutionStart: start}
	token := sdkjob.StartToken(r)
	require.Regexp(t, `^stepwise-[0-9a-f]{40}$`, token)
	require.LessOrEqual(t, len(token), 64, "ECS takes client tokens of up to 64 characters")

	again := *r
	again.Resumed, again.ExecutionStart = true, start.Add(400*time.Microsecond).UTC() // as read back from the store
	require.Equal(t, token, sdkjob.StartToken(&again))
	for _, other := range []integration.Request{
		{ExecutionArn: r.ExecutionArn, TaskID: "task-4", ExecutionStart: start},
		{ExecutionArn: r.ExecutionArn + "x", TaskID: "task-3", ExecutionStart: start},
		{ExecutionArn: r.ExecutionArn, TaskID: "task-3", ExecutionStart: start.Add(time.Millisecond)},
	} {
		require.NotEqual(t, token, sdkjob.StartToken(&other))
	}
	require.Empty(t, sdkjob.StartToken(&integration.Request{}), "TestState")
	// A synchronous Express run's ids ("sync-1", "task-1") start again
	// with every process: its tasks carry no token.
	require.Empty(t, sdkjob.StartToken(&integration.Request{ExecutionArn: "sync-1", TaskID: "task-1"}), "a synchronous run")
}

// A task looks for its job first only when it is dispatched again with
// no start recorded, in an execution.
func TestLookFirst(t *testing.T) {
	t.Parallel()
	r := &integration.Request{ExecutionArn: "arn:e", TaskID: "task-1", ExecutionStart: time.Now()}
	require.False(t, sdkjob.LookFirst(r), "a first dispatch")
	r.Resumed = true
	require.True(t, sdkjob.LookFirst(r))
	r.Submitted = "recorded"
	require.False(t, sdkjob.LookFirst(r), "its start recorded: followed")
	require.False(t, sdkjob.LookFirst(&integration.Request{Resumed: true}), "outside an execution")
}
