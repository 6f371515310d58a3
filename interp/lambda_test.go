package interp_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/failure"
	"stepwise/interp"
)

const functionArn = "arn:aws:lambda:us-east-1:123456789012:function:work"

// A Task whose resource is a function's ARN writes the LambdaFunction*
// events AWS writes for it, with the parameters as the function's input.
func TestFunctionArnHistory(t *testing.T) {
	t.Parallel()
	def := `{"StartAt": "T", "States": {"T": {"Type": "Task", "Resource": "` + functionArn + `", "TimeoutSeconds": 5,
		"Parameters": {"n.$": "$.n"}, "End": true}}}`

	b := setup(t, def, `{"n": 1}`, interp.Options{})
	task := b.only(t, interp.RunTask)[0]
	b.step(t, interp.Event{Kind: interp.TaskSucceeded, ID: task.ID, Output: "done"})
	require.Equal(t, []string{"ExecutionStarted", "TaskStateEntered", "LambdaFunctionScheduled", "LambdaFunctionStarted",
		"LambdaFunctionSucceeded", "TaskStateExited", "ExecutionSucceeded"}, b.types())
	scheduled := b.events[2].LambdaFunctionScheduledEventDetails
	require.Equal(t, functionArn, scheduled.Resource)
	require.Equal(t, `{"n":1}`, scheduled.Input)
	require.Equal(t, int64(5), *scheduled.TimeoutInSeconds)
	require.Equal(t, `"done"`, b.events[4].LambdaFunctionSucceededEventDetails.Output)

	b = setup(t, def, `{"n": 1}`, interp.Options{})
	b.step(t, interp.Event{Kind: interp.TaskFailed, ID: b.only(t, interp.RunTask)[0].ID, Error: "JobFailed", Cause: "{}"})
	require.Equal(t, []string{"ExecutionStarted", "TaskStateEntered", "LambdaFunctionScheduled", "LambdaFunctionStarted",
		"LambdaFunctionFailed", "ExecutionFailed"}, b.types())
	require.Equal(t, "JobFailed", *b.events[4].LambdaFunctionFailedEventDetails.Error)

	b = setup(t, def, `{"n": 1}`, interp.Options{})
	timeout := b.only(t, interp.StartTimer)[0]
	b.now = timeout.At
	b.step(t, interp.Event{Kind: interp.TimerFired, ID: timeout.ID})
	require.Equal(t, []string{"ExecutionStarted", "TaskStateEntered", "LambdaFunctionScheduled", "LambdaFunctionStarted",
		"LambdaFunctionTimedOut", "ExecutionFailed"}, b.types())
	require.Equal(t, failure.Timeout, *b.events[4].LambdaFunctionTimedOutEventDetails.Error)
}
