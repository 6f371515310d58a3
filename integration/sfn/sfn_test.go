package sfn_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/awsjson"
	"stepwise/engine"
	"stepwise/history"
	"stepwise/integration"
	_ "stepwise/integration/sfn"
	"stepwise/internal/testkit/testwait"
	"stepwise/service"
	"stepwise/store"
	"stepwise/store/sqlitestore"
)

type testBundle struct {
	drv *sqlitestore.Driver
	svc *service.Service
}

// setup runs an engine whose tasks go through the integration registry,
// with the registry's aws-sdk:sfn calls answered by the same server.
func setup(t *testing.T) *testBundle {
	t.Helper()
	ctx := context.Background()
	drv, err := sqlitestore.Open(ctx, filepath.Join(t.TempDir(), "stepwise.db"), sqlitestore.Options{})
	require.NoError(t, err)
	reg, err := integration.New(integration.Config{Region: "us-east-1", Account: "123456789012"})
	require.NoError(t, err)
	eng, err := engine.New(drv, engine.Config{Region: "us-east-1", Account: "123456789012", Tasks: reg, WaitTimeScale: 1})
	require.NoError(t, err)
	require.NoError(t, eng.Start(ctx))
	svc, err := service.New(drv, eng, service.Config{})
	require.NoError(t, err)
	reg.SetSelf(awsjson.NewAPI(svc, awsjson.Options{}).Call)
	t.Cleanup(func() {
		eng.Stop()
		drv.Close()
	})
	return &testBundle{drv: drv, svc: svc}
}

func (b *testBundle) create(t *testing.T, name, def string) string {
	t.Helper()
	out, err := b.svc.CreateStateMachine(context.Background(), &service.CreateStateMachineInput{
		Name: name, Definition: def, RoleArn: "arn:aws:iam::123456789012:role/r",
	})
	require.NoError(t, err)
	return out.StateMachineArn
}

func (b *testBundle) start(t *testing.T, smArn, name, input string) string {
	t.Helper()
	out, err := b.svc.StartExecution(context.Background(), &service.StartExecutionInput{StateMachineArn: smArn, Name: &name, Input: &input})
	require.NoError(t, err)
	return out.ExecutionArn
}

func (b *testBundle) wait(t *testing.T, arn string, want history.ExecutionStatus) *store.Execution {
	t.Helper()
	var row *store.Execution
	testwait.Until(t, func() bool {
		var err error
		row, err = b.drv.Executor().ExecutionGet(context.Background(), arn)
		if errors.Is(err, store.ErrNotFound) {
			return false
		}
		require.NoError(t, err)
		return row.Status == want
	}, 30*time.Second, 5*time.Millisecond, "execution %s never reached %s", arn, want)
	return row
}

func output(t *testing.T, row *store.Execution) map[string]any {
	t.Helper()
	var v map[string]any
	require.NoError(t, json.Unmarshal([]byte(*row.Output), &v))
	return v
}

func TestSendTaskSuccessCompletesAnotherExecution(t *testing.T) {
	t.Parallel()
	b := setup(t)
	waiter := b.create(t, "waiter", `{"StartAt": "Wait", "States": {"Wait": {"Type": "Task",
		"Resource": "arn:aws:states:::sqs:sendMessage.waitForTaskToken",
		"Parameters": {"QueueUrl": "nowhere", "MessageBody": {"token.$": "$$.Task.Token"}}, "End": true}}}`)
	completer := b.create(t, "completer", `{"StartAt": "Find", "States": {
		"Find": {"Type": "Task", "Resource": "arn:aws:states:::aws-sdk:sfn:getExecutionHistory",
			"Parameters": {"ExecutionArn.$": "$.arn"}, "ResultSelector": {"params.$": "States.StringToJson($.Events[2].TaskScheduledEventDetails.Parameters)"},
			"ResultPath": "$.found", "Next": "Complete"},
		"Complete": {"Type": "Task", "Resource": "arn:aws:states:::aws-sdk:sfn:sendTaskSuccess",
			"Parameters": {"TaskToken.$": "$.found.params.MessageBody.token", "Output": {"approved": true}}, "ResultPath": "$.sent", "Next": "Describe"},
		"Describe": {"Type": "Task", "Resource": "arn:aws:states:::aws-sdk:sfn:describeExecution",
			"Parameters": {"ExecutionArn.$": "$.arn"}, "ResultPath": "$.described", "End": true}}}`)
	w := b.start(t, waiter, "w1", `{}`)
	testwait.Until(t, func() bool {
		evs, err := b.drv.Executor().EventList(context.Background(), &store.EventListParams{ExecutionArn: w, Limit: 100})
		require.NoError(t, err)
		return len(evs) >= 3
	}, 30*time.Second, 5*time.Millisecond)
	c := b.start(t, completer, "c1", `{"arn": "`+w+`"}`)

	row := b.wait(t, w, history.StatusSucceeded)
	require.JSONEq(t, `{"approved": true}`, *row.Output)
	out := output(t, b.wait(t, c, history.StatusSucceeded))
	require.Equal(t, map[string]any{}, out["sent"])
	described := out["described"].(map[string]any)
	require.Equal(t, w, described["ExecutionArn"])
	require.Equal(t, "SUCCEEDED", described["Status"])
	require.Equal(t, `{"approved":true}`, described["Output"])
	require.Equal(t, map[string]any{"Included": true}, described["InputDetails"])
	require.Regexp(t, `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{3})?Z$`, described["StartDate"])
	require.Regexp(t, `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{3})?Z$`, described["StopDate"])
}

func TestActionsOfTheAPI(t *testing.T) {
	t.Parallel()
	b := setup(t)
	child := b.create(t, "child", `{"StartAt": "W", "States": {"W": {"Type": "Wait", "Seconds": 3600, "End": true}}}`)
	parent := b.create(t, "parent", `{"StartAt": "Start", "States": {
		"Start": {"Type": "Task", "Resource": "arn:aws:states:::aws-sdk:sfn:startExecution",
			"Parameters": {"StateMachineArn": "`+child+`", "Name": "kid", "Input": {"AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID.$": "$$.Execution.Id"}},
			"ResultPath": "$.started", "Next": "List"},
		"List": {"Type": "Task", "Resource": "arn:aws:states:::aws-sdk:sfn:listExecutions",
			"Parameters": {"StateMachineArn": "`+child+`", "StatusFilter": "RUNNING"}, "ResultPath": "$.listed", "Next": "Stop"},
		"Stop": {"Type": "Task", "Resource": "arn:aws:states:::aws-sdk:sfn:stopExecution",
			"Parameters": {"ExecutionArn.$": "$.started.ExecutionArn", "Error": "Enough", "Cause": "stopped by its parent"}, "ResultPath": "$.stopped", "Next": "Heartbeat"},
		"Heartbeat": {"Type": "Task", "Resource": "arn:aws:states:::aws-sdk:sfn:sendTaskHeartbeat",
			"Parameters": {"TaskToken": "not-a-token"},
			"Catch": [{"ErrorEquals": ["Sfn.InvalidTokenException"], "ResultPath": "$.heartbeat", "Next": "Failure"}], "End": true},
		"Failure": {"Type": "Task", "Resource": "arn:aws:states:::aws-sdk:sfn:sendTaskFailure",
			"Parameters": {"TaskToken": "not-a-token", "Error": "E"},
			"Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.failure", "Next": "Missing"}], "End": true},
		"Missing": {"Type": "Task", "Resource": "arn:aws:states:::aws-sdk:sfn:describeExecution",
			"Parameters": {"ExecutionArn": "arn:aws:states:us-east-1:123456789012:execution:child:nope"},
			"Catch": [{"ErrorEquals": ["Sfn.ExecutionDoesNotExistException"], "ResultPath": "$.missing", "Next": "Unknown"}], "End": true},
		"Unknown": {"Type": "Task", "Resource": "arn:aws:states:::aws-sdk:sfn:noSuchAction", "Parameters": {},
			"Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.unknown", "Next": "Done"}], "End": true},
		"Done": {"Type": "Pass", "End": true}}}`)
	p := b.start(t, parent, "p1", `{}`)
	out := output(t, b.wait(t, p, history.StatusSucceeded))

	started := out["started"].(map[string]any)
	kid := "arn:aws:states:us-east-1:123456789012:execution:child:kid"
	require.Equal(t, kid, started["ExecutionArn"])
	require.Regexp(t, `Z$`, started["StartDate"])
	require.NotContains(t, started, "SdkHttpMetadata", "AWS SDK integrations return the response alone")

	listed := out["listed"].(map[string]any)["Executions"].([]any)
	require.Len(t, listed, 1)
	require.Equal(t, kid, listed[0].(map[string]any)["ExecutionArn"])
	require.Equal(t, "RUNNING", listed[0].(map[string]any)["Status"])

	require.Regexp(t, `Z$`, out["stopped"].(map[string]any)["StopDate"])
	row := b.wait(t, kid, history.StatusAborted)
	require.Equal(t, "Enough", *row.Error)
	require.JSONEq(t, `{"AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID": "`+p+`"}`, row.Input)

	for _, k := range []string{"heartbeat", "failure"} {
		f := out[k].(map[string]any)
		require.Equal(t, "Sfn.InvalidTokenException", f["Error"])
		require.Regexp(t, `^Invalid Token: '.*' \(Service: Sfn, Status Code: 400, Request ID: [0-9a-f-]{36}\)$`, f["Cause"])
	}
	missing := out["missing"].(map[string]any)
	require.Equal(t, "Sfn.ExecutionDoesNotExistException", missing["Error"])
	require.True(t, strings.HasPrefix(missing["Cause"].(string), "Execution Does Not Exist: 'arn:aws:states:us-east-1:123456789012:execution:child:nope' (Service: Sfn, Status Code: 400"), missing["Cause"])
	require.Equal(t, "Sfn.UnknownOperationException", out["unknown"].(map[string]any)["Error"])
}
