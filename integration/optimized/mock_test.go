package optimized_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/stretchr/testify/require"

	"stepwise/integration/mock"
	"stepwise/server"
	"stepwise/server/servertest"
	"stepwise/workflowtest"
)

// summarize asks a model, runs a query and posts the summary: three of
// the optimized integrations, none of which can be reached in a test.
const summarize = `{"StartAt": "Ask", "States": {
	"Ask": {"Type": "Task", "Resource": "arn:aws:states:::bedrock:invokeModel",
		"Parameters": {"ModelId": "anthropic.claude-v2", "Body": {"prompt.$": "$.prompt"}},
		"ResultSelector": {"text.$": "$.Body.completion"}, "ResultPath": "$.answer", "Next": "Query"},
	"Query": {"Type": "Task", "Resource": "arn:aws:states:::athena:startQueryExecution.sync",
		"Parameters": {"QueryString": "SELECT 1", "WorkGroup": "primary"},
		"ResultSelector": {"id.$": "$.QueryExecution.QueryExecutionId", "state.$": "$.QueryExecution.Status.State"},
		"ResultPath": "$.query", "Next": "Post"},
	"Post": {"Type": "Task", "Resource": "arn:aws:states:::apigateway:invoke",
		"Parameters": {"ApiEndpoint": "abc123.execute-api.us-east-1.amazonaws.com", "Method": "POST", "Stage": "prod", "Path": "summaries",
			"RequestBody.$": "$.answer"},
		"ResultSelector": {"status.$": "$.StatusCode"}, "ResultPath": "$.post", "End": true}}}`

// mockConfig answers the three tasks in test cases, as Step Functions
// Local's MockConfigFile does.
const mockConfig = `{"StateMachines": {"summarize": {"TestCases": {
		"Happy": {"Ask": "answered", "Query": "queried", "Post": "posted"},
		"Throttled": {"Ask": "throttled"},
		"QueryFails": {"Ask": "answered", "Query": "queryFailed"}}}},
	"MockedResponses": {
		"answered": {"0": {"Return": {"Body": {"completion": "all is well"}, "ContentType": "application/json"}}},
		"throttled": {"0": {"Throw": {"Error": "Bedrock.ThrottlingException", "Cause": "too many requests"}}},
		"queried": {"0": {"Return": {"QueryExecution": {"QueryExecutionId": "q-1", "Status": {"State": "SUCCEEDED"}}}}},
		"queryFailed": {"0": {"Throw": {"Error": "States.TaskFailed", "Cause": "{\"QueryExecution\":{\"Status\":{\"State\":\"FAILED\"}}}"}}},
		"posted": {"0": {"Return": {"StatusCode": 201, "StatusText": "Created", "ResponseBody": {}}}}}}`

const happyOutput = `{"prompt": "hi", "answer": {"text": "all is well"}, "query": {"id": "q-1", "state": "SUCCEEDED"}, "post": {"status": 201}}`

// stepwise test answers bedrock:invokeModel, athena:startQueryExecution.sync
// and apigateway:invoke from a mock configuration and from a test file's
// own mocks: a mocked result and a mocked error each.
func TestMockedThroughTestFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := map[string]string{
		"summarize.asl.json": summarize,
		"mocks.json":         mockConfig,
		"summarize.test.json": `{"definition": "summarize.asl.json", "stateMachine": "summarize", "mockConfig": "mocks.json", "cases": [
			{"name": "happy", "testCase": "Happy", "input": {"prompt": "hi"}, "expect": {"output": ` + happyOutput + `, "path": ["Ask", "Query", "Post"]}},
			{"name": "throttled", "testCase": "Throttled", "input": {"prompt": "hi"},
			 "expect": {"error": "Bedrock.ThrottlingException", "cause": "too many requests", "path": ["Ask"]}},
			{"name": "query fails", "testCase": "QueryFails", "input": {"prompt": "hi"},
			 "expect": {"error": "States.TaskFailed", "causeContains": "FAILED", "path": ["Ask", "Query"]}},
			{"name": "case mocks", "input": {"prompt": "hi"}, "mocks": {
				"Ask": {"Return": {"Body": {"completion": "fine"}}},
				"Query": {"Return": {"QueryExecution": {"QueryExecutionId": "q-2", "Status": {"State": "SUCCEEDED"}}}},
				"Post": {"Throw": {"Error": "ApiGateway.500", "Cause": "down"}}},
			 "expect": {"error": "ApiGateway.500", "cause": "down", "path": ["Ask", "Query", "Post"]}}
		]}`,
	}
	for name, text := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600))
	}
	rep := (&workflowtest.Runner{}).RunFiles([]string{filepath.Join(dir, "summarize.test.json")}, nil)
	require.Empty(t, rep.Errors)
	require.Len(t, rep.Results, 4)
	for _, r := range rep.Results {
		require.True(t, r.Passed, "%s: %s %v", r.Case.Name, r.Failure, r.Got)
	}
}

// The server started with a mock configuration answers the same tasks of
// an execution started as "<stateMachineArn>#<TestCase>".
func TestMockedThroughServer(t *testing.T) {
	t.Parallel()
	cfg, err := mock.Parse([]byte(mockConfig))
	require.NoError(t, err)
	s := servertest.New(t, servertest.WithOptions(server.WithMocks(cfg)))
	ctx := context.Background()
	sm, err := s.SFN.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("summarize"),
		RoleArn: aws.String("arn:aws:iam::123456789012:role/r"), Definition: aws.String(summarize)})
	require.NoError(t, err)

	run := func(testCase string) *sfn.DescribeExecutionOutput {
		started, err := s.SFN.StartExecution(ctx, &sfn.StartExecutionInput{
			StateMachineArn: aws.String(aws.ToString(sm.StateMachineArn) + "#" + testCase), Input: aws.String(`{"prompt": "hi"}`)})
		require.NoError(t, err)
		var out *sfn.DescribeExecutionOutput
		require.Eventually(t, func() bool {
			out, err = s.SFN.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: started.ExecutionArn})
			require.NoError(t, err)
			return out.Status != "RUNNING"
		}, 30*time.Second, 10*time.Millisecond)
		return out
	}

	happy := run("Happy")
	require.Equal(t, "SUCCEEDED", string(happy.Status), "%s: %s", aws.ToString(happy.Error), aws.ToString(happy.Cause))
	require.JSONEq(t, happyOutput, aws.ToString(happy.Output))

	throttled := run("Throttled")
	require.Equal(t, "FAILED", string(throttled.Status))
	require.Equal(t, "Bedrock.ThrottlingException", aws.ToString(throttled.Error))
	require.Equal(t, "too many requests", aws.ToString(throttled.Cause))

	failed := run("QueryFails")
	require.Equal(t, "FAILED", string(failed.Status))
	require.Equal(t, "States.TaskFailed", aws.ToString(failed.Error))
}
