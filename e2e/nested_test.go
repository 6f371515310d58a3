package e2e

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/stretchr/testify/require"
	"stepwise/internal/testkit/testwait"
)

// createMachine creates a STANDARD state machine and returns its ARN.
func createMachine(t testing.TB, c *sfn.Client, name, def string) string {
	t.Helper()
	out, err := c.CreateStateMachine(context.Background(), &sfn.CreateStateMachineInput{
		Name: aws.String(name), RoleArn: aws.String(roleArn), Definition: aws.String(def),
	})
	require.NoError(t, err)
	return aws.ToString(out.StateMachineArn)
}

func startExecution(t testing.TB, c *sfn.Client, smArn, name, input string) string {
	t.Helper()
	out, err := c.StartExecution(context.Background(), &sfn.StartExecutionInput{
		StateMachineArn: aws.String(smArn), Name: aws.String(name), Input: aws.String(input),
	})
	require.NoError(t, err)
	return aws.ToString(out.ExecutionArn)
}

func decodeJSON(t *testing.T, text string) map[string]any {
	t.Helper()
	var v map[string]any
	require.NoError(t, json.Unmarshal([]byte(text), &v), text)
	return v
}

// TestNestedExecutions runs parents that start children with
// states:startExecution through the real server: a .sync:2 child that
// fails fails its parent with AWS's error and cause, a .sync child that
// succeeds gives its description as the parent's result, and stopping a
// parent stops its .sync child.
func TestNestedExecutions(t *testing.T) {
	t.Parallel()
	s := startServer(t, filepath.Join(t.TempDir(), "nested.db"))
	c := s.client(t)
	ctx := context.Background()
	ok := createMachine(t, c, "ok", `{"StartAt": "P", "States": {"P": {"Type": "Pass", "Result": {"Arg1": "argument1"}, "End": true}}}`)
	broken := createMachine(t, c, "broken", `{"StartAt": "F", "States": {"F": {"Type": "Fail", "Error": "JobFailed", "Cause": "disk full"}}}`)
	slow := createMachine(t, c, "slow", `{"StartAt": "W", "States": {"W": {"Type": "Wait", "Seconds": 3600, "End": true}}}`)
	sync2 := createMachine(t, c, "parent-sync2", `{"StartAt": "Run", "States": {"Run": {"Type": "Task",
		"Resource": "arn:aws:states:::states:startExecution.sync:2", "Parameters": {"StateMachineArn.$": "$.child", "Name.$": "$.name",
			"Input": {"AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID.$": "$$.Execution.Id", "job.$": "$.name"}}, "End": true}}}`)
	sync1 := createMachine(t, c, "parent-sync", `{"StartAt": "Run", "States": {"Run": {"Type": "Task",
		"Resource": "arn:aws:states:::states:startExecution.sync", "Parameters": {"StateMachineArn.$": "$.child", "Name.$": "$.name",
			"Input": {"AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID.$": "$$.Execution.Id", "job.$": "$.name"}}, "End": true}}}`)

	// A failing .sync:2 child fails the parent with States.TaskFailed; the
	// cause is the child's description.
	p1 := startExecution(t, c, sync2, "p1", `{"child": "`+broken+`", "name": "fails"}`)
	d := waitDone(t, c, p1)
	require.Equal(t, types.ExecutionStatusFailed, d.Status)
	require.Equal(t, "States.TaskFailed", aws.ToString(d.Error))
	cause := decodeJSON(t, aws.ToString(d.Cause))
	childArn := "arn:aws:states:us-east-1:123456789012:execution:broken:fails"
	require.Equal(t, childArn, cause["ExecutionArn"])
	require.Equal(t, "FAILED", cause["Status"])
	require.Equal(t, "JobFailed", cause["Error"])
	require.Equal(t, "disk full", cause["Cause"])
	require.Equal(t, map[string]any{"AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID": p1, "job": "fails"}, cause["Input"])
	require.IsType(t, float64(0), cause["StartDate"], "dates are epoch milliseconds")
	require.Greater(t, cause["StopDate"].(float64), float64(time.Now().Add(-time.Hour).UnixMilli()))
	require.NotContains(t, cause, "Output")
	hist, err := c.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(p1)})
	require.NoError(t, err)
	var failed *types.TaskFailedEventDetails
	for _, e := range hist.Events {
		if e.Type == types.HistoryEventTypeTaskFailed {
			failed = e.TaskFailedEventDetails
		}
	}
	require.NotNil(t, failed)
	require.Equal(t, "states", aws.ToString(failed.ResourceType))
	require.Equal(t, "startExecution.sync:2", aws.ToString(failed.Resource))
	child, err := c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(childArn)})
	require.NoError(t, err)
	require.JSONEq(t, `{"AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID": "`+p1+`", "job": "fails"}`, aws.ToString(child.Input),
		"the child's input links it to its parent")

	// A .sync child that succeeds: its description, Input and Output as text.
	p2 := startExecution(t, c, sync1, "p2", `{"child": "`+ok+`", "name": "works"}`)
	d = waitDone(t, c, p2)
	require.Equal(t, types.ExecutionStatusSucceeded, d.Status)
	out := decodeJSON(t, aws.ToString(d.Output))
	require.Equal(t, "arn:aws:states:us-east-1:123456789012:execution:ok:works", out["ExecutionArn"])
	require.Equal(t, "works", out["Name"])
	require.Equal(t, ok, out["StateMachineArn"])
	require.Equal(t, "SUCCEEDED", out["Status"])
	require.Equal(t, `{"Arg1":"argument1"}`, out["Output"])
	require.Equal(t, `{"AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID":"`+p2+`","job":"works"}`, out["Input"])
	require.Equal(t, map[string]any{"Included": true}, out["InputDetails"])
	require.Equal(t, map[string]any{"Included": true}, out["OutputDetails"])
	require.IsType(t, float64(0), out["StartDate"])
	require.IsType(t, float64(0), out["StopDate"])
	require.Len(t, out, 10)
	require.True(t, strings.HasPrefix(aws.ToString(d.Output), `{"ExecutionArn":`), "members in alphabetical order")

	// Stopping a parent stops its .sync child.
	p3 := startExecution(t, c, sync1, "p3", `{"child": "`+slow+`", "name": "sleeps"}`)
	kid := "arn:aws:states:us-east-1:123456789012:execution:slow:sleeps"
	testwait.Until(t, func() bool {
		_, err := c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(kid)})
		return err == nil
	}, 30*time.Second, 10*time.Millisecond)
	_, err = c.StopExecution(ctx, &sfn.StopExecutionInput{ExecutionArn: aws.String(p3)})
	require.NoError(t, err)
	require.Equal(t, types.ExecutionStatusAborted, waitDone(t, c, p3).Status)
	require.Equal(t, types.ExecutionStatusAborted, waitDone(t, c, kid).Status)
}
