package engine

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/stepwisetype"
	"stepwise/store"
)

func TestNestedExecutions(t *testing.T) {
	t.Parallel()
	b := setup(t, 1)
	b.machine(t, "child", `{"StartAt": "Work", "States": {"Work": {"Type": "Task", "Resource": "`+activityArn+`", "End": true}}}`)
	childArn := "arn:aws:states:us-east-1:123456789012:stateMachine:child"
	sm, m := b.machine(t, "parent", `{"StartAt": "Fire", "States": {
		"Fire": {"Type": "Task", "Resource": "arn:aws:states:::states:startExecution",
			"Parameters": {"StateMachineArn": "`+childArn+`", "Name": "fire", "Input": {"job": "fire"}}, "ResultSelector": {"arn.$": "$.ExecutionArn"}, "ResultPath": "$.fired", "Next": "Sync2"},
		"Sync2": {"Type": "Task", "Resource": "arn:aws:states:::states:startExecution.sync:2",
			"Parameters": {"StateMachineArn": "`+childArn+`", "Input": {"job": "two"}}, "ResultSelector": {"out.$": "$.Output", "status.$": "$.Status"}, "ResultPath": "$.two", "Next": "Sync"},
		"Sync": {"Type": "Task", "Resource": "arn:aws:states:::states:startExecution.sync",
			"Parameters": {"StateMachineArn": "`+childArn+`", "Input": {"job": "one"}},
			"Catch": [{"ErrorEquals": ["States.TaskFailed"], "ResultPath": "$.failed", "Next": "Done"}], "End": true},
		"Done": {"Type": "Pass", "End": true}}}`)
	ctx := context.Background()
	parent := b.start(t, sm, m, "p1", `{}`)

	// The request-response child runs on its own; the .sync:2 child holds
	// the parent until it ends. A restart in between changes nothing.
	for range 2 {
		task := mustPoll(t, b, activityArn)
		require.NotNil(t, task)
		require.NoError(t, b.engine.SendTaskSuccess(ctx, task.Token, `{"done": true}`))
	}
	b.close()
	b.open(t, 1)
	// The .sync child fails: the parent's task fails with States.TaskFailed.
	task := mustPoll(t, b, activityArn)
	require.NotNil(t, task)
	require.NoError(t, b.engine.SendTaskFailure(ctx, task.Token, "Broken", "child failed"))

	row := b.waitStatus(t, parent.Arn, stepwisetype.StatusSucceeded)
	require.Contains(t, *row.Output, `"fired":{"arn":"arn:aws:states:us-east-1:123456789012:execution:child:fire"}`)
	require.Contains(t, *row.Output, `"two":{"out":{"done":true},"status":"SUCCEEDED"}`)
	require.Contains(t, *row.Output, `"failed":{"Error":"States.TaskFailed","Cause":"{`)
	require.Contains(t, *row.Output, `\"Error\":\"Broken\"`)
	children, err := b.drv.Executor().ExecutionList(ctx, &store.ExecutionListParams{StateMachineArn: childArn})
	require.NoError(t, err)
	require.Len(t, children, 3, "no child started twice")
}

func TestStoppingParentStopsSyncChild(t *testing.T) {
	t.Parallel()
	b := setup(t, 1)
	b.machine(t, "child", `{"StartAt": "W", "States": {"W": {"Type": "Wait", "Seconds": 3600, "End": true}}}`)
	sm, m := b.machine(t, "parent", `{"StartAt": "S", "States": {"S": {"Type": "Task", "Resource": "arn:aws:states:::states:startExecution.sync",
		"Parameters": {"StateMachineArn": "arn:aws:states:us-east-1:123456789012:stateMachine:child", "Name": "kid"}, "End": true}}}`)
	parent := b.start(t, sm, m, "p1", `{}`)
	kid := "arn:aws:states:us-east-1:123456789012:execution:child:kid"
	b.waitStatus(t, kid, stepwisetype.StatusRunning)
	_, err := b.engine.StopExecution(context.Background(), parent.Arn, "", "")
	require.NoError(t, err)
	b.waitStatus(t, kid, stepwisetype.StatusAborted)
}
