package engine

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/engine/nested"
	"stepwise/failure"
	"stepwise/history"
	"stepwise/jsonvalue"
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

	row := b.waitStatus(t, parent.Arn, history.StatusSucceeded)
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
	b.waitStatus(t, kid, history.StatusRunning)
	_, err := b.engine.StopExecution(context.Background(), parent.Arn, "", "")
	require.NoError(t, err)
	b.waitStatus(t, kid, history.StatusAborted)
}

// parseJSON parses JSON text into a map, numbers as json.Number.
func parseJSON(t *testing.T, text string) map[string]any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(text))
	d.UseNumber()
	var v map[string]any
	require.NoError(t, d.Decode(&v))
	return v
}

// keysOf returns the members of a JSON object in the order written.
func keysOf(t *testing.T, text string) []string {
	t.Helper()
	v, err := jsonvalue.ParseString(text)
	require.NoError(t, err)
	return v.(*jsonvalue.Object).Keys()
}

func TestNestedOutputShapes(t *testing.T) {
	t.Parallel()
	b := setup(t, 1)
	childArn := "arn:aws:states:us-east-1:123456789012:stateMachine:child"
	b.machine(t, "child", `{"StartAt": "P", "States": {"P": {"Type": "Pass", "Result": {"Arg1": "argument1"}, "End": true}}}`)
	b.machine(t, "failing", `{"StartAt": "F", "States": {"F": {"Type": "Fail", "Error": "SomeFailure", "Cause": "This state machines raises a 'SomeFailure' failure."}}}`)
	sm, m := b.machine(t, "parent", `{"StartAt": "RR", "States": {
		"RR": {"Type": "Task", "Resource": "arn:aws:states:::states:startExecution",
			"Parameters": {"StateMachineArn": "`+childArn+`", "Name": "rr"}, "ResultPath": "$.rr", "Next": "Sync"},
		"Sync": {"Type": "Task", "Resource": "arn:aws:states:::states:startExecution.sync",
			"Parameters": {"StateMachineArn": "`+childArn+`", "Input": {"Payload": null}}, "ResultPath": "$.sync", "Next": "Sync2"},
		"Sync2": {"Type": "Task", "Resource": "arn:aws:states:::states:startExecution.sync:2",
			"Parameters": {"StateMachineArn": "`+childArn+`", "Input": {"AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID.$": "$$.Execution.Id"}}, "ResultPath": "$.sync2", "Next": "Fails"},
		"Fails": {"Type": "Task", "Resource": "arn:aws:states:::states:startExecution.sync",
			"Parameters": {"StateMachineArn": "arn:aws:states:us-east-1:123456789012:stateMachine:failing"},
			"Catch": [{"ErrorEquals": ["States.TaskFailed"], "ResultPath": "$.failed", "Next": "Missing"}], "End": true},
		"Missing": {"Type": "Task", "Resource": "arn:aws:states:::states:startExecution",
			"Parameters": {"StateMachineArn": "arn:aws:states:us-east-1:123456789012:stateMachine:nope"},
			"Catch": [{"ErrorEquals": ["StepFunctions.StateMachineDoesNotExistException"], "ResultPath": "$.missing", "Next": "Done"}], "End": true},
		"Done": {"Type": "Pass", "End": true}}}`)
	parent := b.start(t, sm, m, "p1", `{}`)
	row := b.waitStatus(t, parent.Arn, history.StatusSucceeded)
	out := parseJSON(t, *row.Output)

	rr := out["rr"].(map[string]any)
	require.Equal(t, "arn:aws:states:us-east-1:123456789012:execution:child:rr", rr["ExecutionArn"])
	_, err := rr["StartDate"].(json.Number).Int64()
	require.NoError(t, err, "StartDate is epoch milliseconds")
	meta := rr["SdkHttpMetadata"].(map[string]any)
	require.Equal(t, json.Number("200"), meta["HttpStatusCode"])
	require.Equal(t, meta["HttpHeaders"].(map[string]any)["x-amzn-RequestId"], rr["SdkResponseMetadata"].(map[string]any)["RequestId"])
	rrText, _ := jsonvalue.ParseString(*row.Output)
	rrObj, _ := rrText.(*jsonvalue.Object).Get("rr")
	require.Equal(t, []string{"ExecutionArn", "SdkHttpMetadata", "SdkResponseMetadata", "StartDate"}, rrObj.(*jsonvalue.Object).Keys())

	sync := out["sync"].(map[string]any)
	require.Equal(t, `{"Payload":null}`, sync["Input"])
	require.Equal(t, `{"Arg1":"argument1"}`, sync["Output"])
	require.Equal(t, "SUCCEEDED", sync["Status"])
	require.Equal(t, childArn, sync["StateMachineArn"])
	require.Equal(t, map[string]any{"Included": true}, sync["OutputDetails"])
	for _, k := range []string{"StartDate", "StopDate"} {
		_, err := sync[k].(json.Number).Int64()
		require.NoError(t, err, "%s is epoch milliseconds", k)
	}
	syncObj, _ := rrText.(*jsonvalue.Object).Get("sync")
	require.Equal(t, []string{"ExecutionArn", "Input", "InputDetails", "Name", "Output", "OutputDetails", "StartDate", "StateMachineArn", "Status", "StopDate"},
		syncObj.(*jsonvalue.Object).Keys())

	sync2 := out["sync2"].(map[string]any)
	require.Equal(t, map[string]any{"Arg1": "argument1"}, sync2["Output"])
	require.Equal(t, map[string]any{nested.StartedByMember: parent.Arn}, sync2["Input"], "the child's input links it to its parent")

	failed := out["failed"].(map[string]any)
	require.Equal(t, "States.TaskFailed", failed["Error"])
	require.Equal(t, []string{"Cause", "Error", "ExecutionArn", "Input", "InputDetails", "Name", "StartDate", "StateMachineArn", "Status", "StopDate"},
		keysOf(t, failed["Cause"].(string)))
	cause := parseJSON(t, failed["Cause"].(string))
	require.Equal(t, "SomeFailure", cause["Error"])
	require.Equal(t, "This state machines raises a 'SomeFailure' failure.", cause["Cause"])
	require.Equal(t, "FAILED", cause["Status"])
	require.Equal(t, "{}", cause["Input"])

	missing := out["missing"].(map[string]any)
	require.Equal(t, "StepFunctions.StateMachineDoesNotExistException", missing["Error"])
	require.Regexp(t, `^State Machine Does Not Exist: 'arn:aws:states:us-east-1:123456789012:stateMachine:nope' \(Service: AWSStepFunctions; Status Code: 400; Error Code: StateMachineDoesNotExist; Request ID: [0-9a-f-]{36}; Proxy: null\)$`, missing["Cause"])
}

func TestNestedRefusedStarts(t *testing.T) {
	t.Parallel()
	b := setup(t, 1)
	childArn := "arn:aws:states:us-east-1:123456789012:stateMachine:child"
	b.machine(t, "child", `{"StartAt": "P", "States": {"P": {"Type": "Pass", "End": true}}}`)
	for name, tc := range map[string]struct{ params, error, cause string }{
		"bad name":  {`{"StateMachineArn": "` + childArn + `", "Name": "a b"}`, "StepFunctions.InvalidNameException", "Invalid Name: 'a b' ("},
		"bad input": {`{"StateMachineArn": "` + childArn + `", "Input": "{nope"}`, "StepFunctions.InvalidExecutionInputException", "Invalid State Machine Execution Input: "},
		"bad arn":   {`{"StateMachineArn": "child"}`, "StepFunctions.InvalidArnException", "Invalid Arn: 'Invalid ARN prefix: child' ("},
		"name taken": {`{"StateMachineArn": "` + childArn + `", "Name": "taken"}`, "StepFunctions.ExecutionAlreadyExistsException",
			"Execution Already Exists: 'arn:aws:states:us-east-1:123456789012:execution:child:taken' ("},
	} {
		t.Run(name, func(t *testing.T) {
			if name == "name taken" {
				sm, err := b.drv.Executor().StateMachineGet(context.Background(), childArn)
				require.NoError(t, err)
				m, err := b.engine.machine(context.Background(), sm.Arn, sm.RevisionID)
				require.NoError(t, err)
				b.waitStatus(t, b.start(t, sm, m, "taken", `{"another": "input"}`).Arn, history.StatusSucceeded)
			}
			sm, m := b.machine(t, "parent"+strings.ReplaceAll(name, " ", ""), `{"StartAt": "S", "States": {"S": {"Type": "Task",
				"Resource": "arn:aws:states:::states:startExecution.sync", "Parameters": `+tc.params+`, "End": true}}}`)
			row := b.waitStatus(t, b.start(t, sm, m, "p", `{}`).Arn, history.StatusFailed)
			require.Equal(t, tc.error, *row.Error)
			require.True(t, strings.HasPrefix(*row.Cause, tc.cause), *row.Cause)
		})
	}
}

func TestStoppedChildFailsSyncParent(t *testing.T) {
	t.Parallel()
	b := setup(t, 1)
	b.machine(t, "child", `{"StartAt": "W", "States": {"W": {"Type": "Wait", "Seconds": 3600, "End": true}}}`)
	sm, m := b.machine(t, "parent", `{"StartAt": "S", "States": {"S": {"Type": "Task", "Resource": "arn:aws:states:::states:startExecution.sync:2",
		"Parameters": {"StateMachineArn": "arn:aws:states:us-east-1:123456789012:stateMachine:child", "Name": "kid"}, "End": true}}}`)
	parent := b.start(t, sm, m, "p1", `{}`)
	kid := "arn:aws:states:us-east-1:123456789012:execution:child:kid"
	b.waitStatus(t, kid, history.StatusRunning)
	_, err := b.engine.StopExecution(context.Background(), kid, "Stopped", "by hand")
	require.NoError(t, err)
	row := b.waitStatus(t, parent.Arn, history.StatusFailed)
	require.Equal(t, failure.TaskFailed, *row.Error)
	cause := parseJSON(t, *row.Cause)
	require.Equal(t, "ABORTED", cause["Status"])
	require.Equal(t, "Stopped", cause["Error"])
	require.Equal(t, "by hand", cause["Cause"])
	require.Equal(t, map[string]any{}, cause["Input"], ".sync:2 parses the input")
	require.NotContains(t, cause, "Output")
}

// TestSyncTaskStartedWithItsChild: a .sync task's TaskStarted and
// TaskSubmitted (with the StartExecution response) are written once the
// child is started, while it runs, as AWS records them.
func TestSyncTaskStartedWithItsChild(t *testing.T) {
	t.Parallel()
	b := setup(t, 1)
	b.machine(t, "child", `{"StartAt": "Work", "States": {"Work": {"Type": "Task", "Resource": "`+activityArn+`", "End": true}}}`)
	sm, m := b.machine(t, "parent", `{"StartAt": "S", "States": {"S": {"Type": "Task", "Resource": "arn:aws:states:::states:startExecution.sync:2",
		"Parameters": {"StateMachineArn": "arn:aws:states:us-east-1:123456789012:stateMachine:child", "Name": "kid"}, "End": true}}}`)
	parent := b.start(t, sm, m, "p1", `{}`)
	for deadline := time.Now().Add(10 * time.Second); !slices.Contains(b.history(t, parent.Arn), "TaskSubmitted"); {
		require.False(t, time.Now().After(deadline), "no TaskSubmitted while the child runs: %v", b.history(t, parent.Arn))
		time.Sleep(5 * time.Millisecond)
	}
	evs, err := b.drv.Executor().EventList(context.Background(), &store.EventListParams{ExecutionArn: parent.Arn, Limit: 100})
	require.NoError(t, err)
	var last struct {
		TaskSubmittedEventDetails *history.TaskEventDetails `json:"taskSubmittedEventDetails"`
	}
	require.NoError(t, json.Unmarshal(evs[len(evs)-1].Body, &last))
	submitted := last.TaskSubmittedEventDetails
	require.NotNil(t, submitted)
	require.Equal(t, "states", submitted.ResourceType)
	require.Equal(t, "startExecution.sync:2", submitted.Resource)
	require.Contains(t, *submitted.Output, `"ExecutionArn":"arn:aws:states:us-east-1:123456789012:execution:child:kid"`)
	task := mustPoll(t, b, activityArn)
	require.NotNil(t, task)
	require.NoError(t, b.engine.SendTaskSuccess(context.Background(), task.Token, `{}`))
	b.waitStatus(t, parent.Arn, history.StatusSucceeded)
	require.Equal(t, []string{"ExecutionStarted", "TaskStateEntered", "TaskScheduled", "TaskStarted", "TaskSubmitted", "TaskSucceeded", "TaskStateExited", "ExecutionSucceeded"},
		b.history(t, parent.Arn))
}

// A states:startExecution task may name a version or an alias: the child
// runs that version's revision and records the version (and alias).
func TestNestedStartOnVersionAndAlias(t *testing.T) {
	t.Parallel()
	b := setup(t, 1)
	ctx := context.Background()
	childSM, _ := b.machine(t, "child", `{"StartAt": "P", "States": {"P": {"Type": "Pass", "Result": "v1", "End": true}}}`)
	v1, _, err := b.drv.Executor().VersionPublish(ctx, &store.Version{StateMachineArn: childSM.Arn, RevisionID: childSM.RevisionID, CreatedAt: time.Now()})
	require.NoError(t, err)
	require.NoError(t, b.drv.Executor().AliasInsert(ctx, &store.Alias{StateMachineArn: childSM.Arn, Name: "live",
		Routing: []store.AliasRoute{{Version: v1.Number, Weight: 100}}, CreatedAt: time.Now(), UpdatedAt: time.Now()}))
	sm, m := b.machine(t, "parent", `{"StartAt": "OnVersion", "States": {
		"OnVersion": {"Type": "Task", "Resource": "arn:aws:states:::states:startExecution.sync:2",
			"Parameters": {"StateMachineArn": "`+v1.Arn()+`", "Name": "on-version"}, "ResultSelector": {"out.$": "$.Output"}, "ResultPath": "$.version", "Next": "OnAlias"},
		"OnAlias": {"Type": "Task", "Resource": "arn:aws:states:::states:startExecution.sync:2",
			"Parameters": {"StateMachineArn": "`+childSM.Arn+`:live", "Name": "on-alias"}, "ResultSelector": {"out.$": "$.Output"}, "ResultPath": "$.alias", "Next": "Missing"},
		"Missing": {"Type": "Task", "Resource": "arn:aws:states:::states:startExecution",
			"Parameters": {"StateMachineArn": "`+childSM.Arn+`:9"}, "Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.missing", "Next": "Done"}], "End": true},
		"Done": {"Type": "Pass", "End": true}}}`)
	parent := b.start(t, sm, m, "p1", `{}`)
	row := b.waitStatus(t, parent.Arn, history.StatusSucceeded)
	require.Contains(t, *row.Output, `"version":{"out":"v1"}`)
	require.Contains(t, *row.Output, `"alias":{"out":"v1"}`)
	require.Contains(t, *row.Output, `StateMachineDoesNotExist`)
	child, err := b.drv.Executor().ExecutionGet(ctx, "arn:aws:states:us-east-1:123456789012:execution:child:on-alias")
	require.NoError(t, err)
	require.Equal(t, v1.Arn(), child.VersionArn)
	require.Equal(t, childSM.Arn+":live", child.AliasArn)
	child, err = b.drv.Executor().ExecutionGet(ctx, "arn:aws:states:us-east-1:123456789012:execution:child:on-version")
	require.NoError(t, err)
	require.Equal(t, v1.Arn(), child.VersionArn)
	require.Empty(t, child.AliasArn)
}
