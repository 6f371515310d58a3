package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/stretchr/testify/require"
	"stepwise/internal/testkit/testwait"
)

// TestMockConfig runs a workflow with no service at all: the server reads
// a Step Functions Local MockConfigFile, "<stateMachineArn>#<TestCase>"
// runs a test case, each mocked Task is answered by invocation (a Throw the
// Retry absorbs, then a Return), a callback task records its submission,
// and the history is what the calls would have written. A test case the
// file does not define is refused.
func TestMockConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mockFile := filepath.Join(dir, "mocks.json")
	require.NoError(t, os.WriteFile(mockFile, []byte(`{
  "StateMachines": {"orders": {"TestCases": {
    "HappyPath": {"Charge": "chargeAfterRetry", "Approve": "approved", "Ship": "shipped"},
    "Declined": {"Charge": "declined"}
  }}},
  "MockedResponses": {
    "chargeAfterRetry": {"0": {"Throw": {"Error": "Lambda.TooManyRequestsException", "Cause": "slow down"}},
                         "1": {"Return": {"StatusCode": 200, "Payload": {"charged": 42}}}},
    "approved": {"0": {"Return": {"approver": "ada"}}},
    "shipped": {"0": {"Return": {"StatusCode": 200, "Payload": "on its way"}}},
    "declined": {"0": {"Throw": {"Error": "CardDeclined", "Cause": "insufficient funds"}}}
  }
}`), 0o600))
	s := startServer(t, filepath.Join(dir, "mock.db"), "--mock-config", mockFile)
	c := s.client(t)
	ctx := context.Background()
	sm := createMachine(t, c, "orders", `{"StartAt": "Charge", "States": {
		"Charge": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "Parameters": {"FunctionName": "charge", "Payload.$": "$"},
			"Retry": [{"ErrorEquals": ["Lambda.TooManyRequestsException"], "IntervalSeconds": 1, "MaxAttempts": 2}],
			"ResultSelector": {"charged.$": "$.Payload.charged"}, "ResultPath": "$.charge", "Next": "Approve"},
		"Approve": {"Type": "Task", "Resource": "arn:aws:states:::sqs:sendMessage.waitForTaskToken",
			"Parameters": {"QueueUrl": "https://sqs.us-east-1.amazonaws.com/123456789012/approvals", "MessageBody": {"token.$": "$$.Task.Token"}},
			"ResultPath": "$.approval", "Next": "Ship"},
		"Ship": {"Type": "Task", "Resource": "arn:aws:lambda:us-east-1:123456789012:function:ship", "ResultPath": "$.shipping", "End": true}}}`)

	exec := startExecution(t, c, sm+"#HappyPath", "happy", `{"order": 7}`)
	done := waitDone(t, c, exec)
	require.Equal(t, "SUCCEEDED", string(done.Status), "%s: %s", aws.ToString(done.Error), aws.ToString(done.Cause))
	require.JSONEq(t, `{"order": 7, "charge": {"charged": 42}, "approval": {"approver": "ada"}, "shipping": "on its way"}`, aws.ToString(done.Output))
	require.Equal(t, sm, aws.ToString(done.StateMachineArn))
	hist, err := c.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(exec)})
	require.NoError(t, err)
	var types []string
	for _, e := range hist.Events {
		types = append(types, string(e.Type))
	}
	require.Equal(t, []string{"ExecutionStarted",
		"TaskStateEntered", "TaskScheduled", "TaskStarted", "TaskFailed", "TaskScheduled", "TaskStarted", "TaskSucceeded", "TaskStateExited",
		"TaskStateEntered", "TaskScheduled", "TaskStarted", "TaskSubmitted", "TaskSucceeded", "TaskStateExited",
		"TaskStateEntered", "LambdaFunctionScheduled", "LambdaFunctionStarted", "LambdaFunctionSucceeded", "TaskStateExited",
		"ExecutionSucceeded"}, types)

	declined := waitDone(t, c, startExecution(t, c, sm+"#Declined", "declined", `{"order": 8}`))
	require.Equal(t, "FAILED", string(declined.Status))
	require.Equal(t, "CardDeclined", aws.ToString(declined.Error))
	require.Equal(t, "insufficient funds", aws.ToString(declined.Cause))

	_, err = c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(sm + "#Nope")})
	require.ErrorContains(t, err, "The mock configuration has no test case 'Nope' for state machine 'orders'")
}

// A mock configuration that does not parse stops the server at start-up
// with a message naming what is wrong.
func TestMockConfigRefusedAtStartUp(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mockFile := filepath.Join(dir, "mocks.json")
	require.NoError(t, os.WriteFile(mockFile, []byte(`{"MockedResponses": {"r": {"first": {"Return": 1}}}}`), 0o600))
	out, err := exec.Command(binary, "serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(dir, "x.db"), "--mock-config", mockFile).CombinedOutput()
	require.Error(t, err)
	require.Contains(t, string(out), `MockedResponses.r.first: not an invocation number or a range of them`)
}

// TestMockConfigPollingLoop runs the polling pattern of a job net on the
// server: submit a job, wait, check its status and go back to the wait
// until it is done. Each pass around the loop gets the next mocked
// response (the state's invocation in the execution, a retry included), so
// the loop ends on the fourth check; a test case with too few responses
// fails the execution with States.Runtime naming the state and invocation;
// a redrive goes on counting.
func TestMockConfigPollingLoop(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mockFile := filepath.Join(dir, "mocks.json")
	require.NoError(t, os.WriteFile(mockFile, []byte(`{
  "StateMachines": {"nightly": {"TestCases": {
    "Done": {"Submit": "submitted", "Check": "runningThenDone"},
    "Stuck": {"Submit": "submitted", "Check": "running"}
  }},
  "check": {"TestCases": {"Redriven": {"Check": "failsOnceThenDone"}}}},
  "MockedResponses": {
    "submitted": {"0": {"Return": {"StatusCode": 200, "Payload": {"jobId": "j-42"}}}},
    "runningThenDone": {"0": {"Return": {"StatusCode": 200, "Payload": {"status": "RUNNING", "done": 10}}},
                        "1": {"Throw": {"Error": "Lambda.TooManyRequestsException", "Cause": "slow down"}},
                        "2": {"Return": {"StatusCode": 200, "Payload": {"status": "RUNNING", "done": 60}}},
                        "3": {"Return": {"StatusCode": 200, "Payload": {"status": "SUCCEEDED", "done": 100}}}},
    "running": {"0-1": {"Return": {"StatusCode": 200, "Payload": {"status": "RUNNING", "done": 0}}}},
    "failsOnceThenDone": {"0": {"Throw": {"Error": "Lambda.ServiceException", "Cause": "down"}},
                          "1": {"Return": {"StatusCode": 200, "Payload": {"status": "SUCCEEDED", "done": 100}}}}
  }
}`), 0o600))
	s := startServer(t, filepath.Join(dir, "poll.db"), "--mock-config", mockFile, "--time-skip")
	c := s.client(t)
	ctx := context.Background()
	sm := createMachine(t, c, "nightly", `{"StartAt": "Submit", "States": {
		"Submit": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "Parameters": {"FunctionName": "submit", "Payload.$": "$"},
			"ResultSelector": {"id.$": "$.Payload.jobId"}, "ResultPath": "$.job", "Next": "Wait"},
		"Wait": {"Type": "Wait", "Seconds": 300, "Next": "Check"},
		"Check": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "Parameters": {"FunctionName": "check", "Payload.$": "$.job"},
			"Retry": [{"ErrorEquals": ["Lambda.TooManyRequestsException"], "IntervalSeconds": 2, "MaxAttempts": 3}],
			"Catch": [{"ErrorEquals": ["States.ALL"], "Next": "Gave up"}],
			"ResultSelector": {"status.$": "$.Payload.status", "done.$": "$.Payload.done"}, "ResultPath": "$.check", "Next": "Done?"},
		"Done?": {"Type": "Choice", "Choices": [{"Variable": "$.check.status", "StringEquals": "SUCCEEDED", "Next": "Finished"}], "Default": "Wait"},
		"Gave up": {"Type": "Fail", "Error": "GaveUp"},
		"Finished": {"Type": "Succeed"}}}`)

	exec := startExecution(t, c, sm+"#Done", "done", `{"night": "2026-11-24"}`)
	done := waitDone(t, c, exec)
	require.Equal(t, "SUCCEEDED", string(done.Status), "%s: %s", aws.ToString(done.Error), aws.ToString(done.Cause))
	require.JSONEq(t, `{"night": "2026-11-24", "job": {"id": "j-42"}, "check": {"status": "SUCCEEDED", "done": 100}}`, aws.ToString(done.Output))
	hist, err := c.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(exec)})
	require.NoError(t, err)
	var checks []string
	for _, e := range hist.Events {
		if d := e.TaskSucceededEventDetails; d != nil {
			checks = append(checks, aws.ToString(d.Output))
		}
		if d := e.TaskFailedEventDetails; d != nil {
			checks = append(checks, aws.ToString(d.Error))
		}
	}
	require.Equal(t, []string{`{"StatusCode":200,"Payload":{"jobId":"j-42"}}`,
		`{"StatusCode":200,"Payload":{"status":"RUNNING","done":10}}`,
		"Lambda.TooManyRequestsException",
		`{"StatusCode":200,"Payload":{"status":"RUNNING","done":60}}`,
		`{"StatusCode":200,"Payload":{"status":"SUCCEEDED","done":100}}`}, checks)

	stuck := waitDone(t, c, startExecution(t, c, sm+"#Stuck", "stuck", `{}`))
	require.Equal(t, "FAILED", string(stuck.Status), "the Catch does not take a mock that ran out")
	require.Equal(t, "States.Runtime", aws.ToString(stuck.Error))
	require.Equal(t, "The mocked response running has no answer for invocation 2 of state 'Check' in test case Stuck (invocations count from 0, retries included).", aws.ToString(stuck.Cause))

	// A redrive goes on counting: the check that failed the execution was
	// invocation 0, the one the redrive runs is invocation 1.
	check := createMachine(t, c, "check", `{"StartAt": "Check", "States": {
		"Check": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "Parameters": {"FunctionName": "check"},
			"OutputPath": "$.Payload", "End": true}}}`)
	redriven := startExecution(t, c, check+"#Redriven", "redriven", `{}`)
	failed := waitDone(t, c, redriven)
	require.Equal(t, "FAILED", string(failed.Status))
	require.Equal(t, "Lambda.ServiceException", aws.ToString(failed.Error))
	_, err = c.RedriveExecution(ctx, &sfn.RedriveExecutionInput{ExecutionArn: aws.String(redriven)})
	require.NoError(t, err)
	var d *sfn.DescribeExecutionOutput
	testwait.Until(t, func() bool {
		d, err = c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(redriven)})
		return err == nil && d.Status == "SUCCEEDED"
	}, 30*time.Second, 20*time.Millisecond)
	require.JSONEq(t, `{"status": "SUCCEEDED", "done": 100}`, aws.ToString(d.Output))
}
