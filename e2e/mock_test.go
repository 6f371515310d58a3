package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/stretchr/testify/require"
)

// TestMockConfig runs a workflow with no service at all: the server reads
// a Step Functions Local MockConfigFile, "<stateMachineArn>#<TestCase>"
// runs a test case, each mocked Task is answered by attempt (a Throw the
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
	require.Contains(t, string(out), `MockedResponses.r.first: not an attempt number or a range of them`)
}
