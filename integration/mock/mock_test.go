package mock_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/asl"
	"stepwise/engine/task"
	"stepwise/failure"
	"stepwise/history"
	"stepwise/integration/mock"
	"stepwise/interp"
	"stepwise/jsonvalue"
)

const config = `{
  "StateMachines": {
    "jobs": {"TestCases": {
      "HappyPath": {"Fetch": "fetched", "Notify": "retryThenOk", "Work": "lambdaOk"},
      "Broken": {"Fetch": "broken"}
    }}
  },
  "MockedResponses": {
    "fetched": {"0": {"Return": {"Item": {"id": {"S": "1"}}}}},
    "retryThenOk": {"0-1": {"Throw": {"Error": "Busy", "Cause": "try later"}}, "2": {"Return": "sent"}},
    "lambdaOk": {"0": {"Return": {"StatusCode": 200, "Payload": {"done": true}}}},
    "broken": {"0": {"Throw": {"Error": "States.TaskFailed"}}}
  }
}`

func taskOf(testCase, state, resource string, invocation int) *task.Task {
	return &task.Task{
		StateMachineArn: "arn:aws:states:us-east-1:123456789012:stateMachine:jobs", TestCase: testCase,
		Request: &interp.TaskRequest{StateName: state, Resource: resource, Invocation: invocation},
	}
}

// A test case answers the states it names, invocation by invocation; a
// function ARN gets the payload of a lambda:invoke-shaped answer; states
// it does not name run for real.
func TestMocked(t *testing.T) {
	t.Parallel()
	c, err := mock.Parse([]byte(config))
	require.NoError(t, err)
	require.True(t, c.HasTestCase("jobs", "HappyPath"))
	require.False(t, c.HasTestCase("jobs", "Nope"))
	require.False(t, c.HasTestCase("other", "HappyPath"))

	r, ok := c.Mocked(taskOf("HappyPath", "Fetch", "arn:aws:states:::dynamodb:getItem", 0))
	require.True(t, ok)
	require.Equal(t, `{"Item":{"id":{"S":"1"}}}`, jsonvalue.String(r.Output))

	for n, want := range []string{"Busy", "Busy", ""} {
		r, ok = c.Mocked(taskOf("HappyPath", "Notify", "arn:aws:states:::sns:publish", n))
		require.True(t, ok)
		if want == "" {
			require.Nil(t, r.Failure)
			require.Equal(t, "sent", r.Output)
			continue
		}
		require.Equal(t, want, r.Failure.Name, "invocation %d", n)
		require.Equal(t, "try later", r.Failure.Cause)
	}
	// Past its last answer a response fails the execution (States.Runtime
	// is neither retried nor caught), naming the state and the invocation.
	r, ok = c.Mocked(taskOf("HappyPath", "Notify", "arn:aws:states:::sns:publish", 3))
	require.True(t, ok)
	require.Equal(t, "States.Runtime", r.Failure.Name)
	require.Equal(t, "The mocked response retryThenOk has no answer for invocation 3 of state 'Notify' in test case HappyPath (invocations count from 0, retries included).", r.Failure.Cause)

	r, _ = c.Mocked(taskOf("HappyPath", "Work", "arn:aws:lambda:us-east-1:123456789012:function:work", 0))
	require.Equal(t, `{"done":true}`, jsonvalue.String(r.Output))
	r, _ = c.Mocked(taskOf("HappyPath", "Work", "arn:aws:states:::lambda:invoke", 0))
	require.Equal(t, `{"StatusCode":200,"Payload":{"done":true}}`, jsonvalue.String(r.Output))

	r, _ = c.Mocked(taskOf("Broken", "Fetch", "arn:aws:states:::dynamodb:getItem", 0))
	require.Equal(t, "States.TaskFailed", r.Failure.Name)
	require.False(t, r.Failure.HasCause)

	_, ok = c.Mocked(taskOf("HappyPath", "Unmocked", "arn:aws:states:::sqs:sendMessage", 0))
	require.False(t, ok)
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, msg string }{
		{`[]`, "must be a JSON object"},
		{`{"Extra": {}}`, "Extra: unknown member (StateMachines and MockedResponses are)"},
		{`{"MockedResponses": {"r": {"x": {"Return": 1}}}}`, `MockedResponses.r.x: not an invocation number or a range of them ("0", "1-2")`},
		{`{"MockedResponses": {"r": {"2-1": {"Return": 1}}}}`, `MockedResponses.r.2-1: not an invocation number or a range of them ("0", "1-2")`},
		{`{"MockedResponses": {"r": {"0": {"Return": 1, "Throw": {}}}}}`, "MockedResponses.r.0: must be an object with one member, Return or Throw"},
		{`{"MockedResponses": {"r": {"0-2": {"Return": 1}, "1": {"Return": 2}}}}`, "MockedResponses.r.1: overlaps invocations 0-2"},
		{`{"MockedResponses": {"r": {"0": {"Throw": {"Error": 1}}}}}`, "MockedResponses.r.0.Throw: Error: must be a string"},
		{`{"StateMachines": {"m": {"TestCases": {"t": {"S": "missing"}}}}}`, `StateMachines.m.TestCases.t.S: no mocked response "missing" in MockedResponses`},
		{`{"StateMachines": {"m": {"TestCases": {"t": {"S": 1}}}}}`, "StateMachines.m.TestCases.t.S: must name a mocked response"},
		{`{"StateMachines": {"m": []}}`, "StateMachines.m: must be an object"},
		{`{`, "unexpected end of JSON input"},
	} {
		_, err := mock.Parse([]byte(tt.in))
		require.ErrorContains(t, err, tt.msg, tt.in)
	}
}

// runCase runs def in-process as a test case of the "jobs" state machine,
// its tasks answered by the configuration alone; it returns the execution
// and the result of each task in the order they succeeded.
func runCase(t *testing.T, c *mock.Config, testCase, def string) (*interp.Execution, []string) {
	t.Helper()
	m, diags := asl.Parse([]byte(def))
	require.Empty(t, diags)
	arn := "arn:aws:states:us-east-1:123456789012:stateMachine:jobs"
	info := interp.Info{ExecutionArn: "arn:aws:states:us-east-1:123456789012:execution:jobs:" + testCase, Name: testCase,
		StateMachineArn: arn, StateMachineName: "jobs", Region: "us-east-1", Account: "123456789012"}
	x := interp.New(m, info, jsonvalue.NewObject(0), interp.Options{})
	d := &interp.Driver{MaxSteps: 1000, Resolver: interp.ResolverFunc(func(req *interp.TaskRequest) (any, *failure.Failure) {
		r, ok := c.Mocked(&task.Task{StateMachineArn: arn, TestCase: testCase, Request: req})
		require.True(t, ok, "state %s is not mocked", req.StateName)
		return r.Output, r.Failure
	})}
	var results []string
	for _, e := range d.Run(x, time.Date(2026, 11, 24, 2, 0, 0, 0, time.UTC)) {
		if e.TaskSucceededEventDetails != nil {
			results = append(results, *e.TaskSucceededEventDetails.Output)
		}
	}
	return x, results
}

// The responses of a state are chosen by its invocation in the execution,
// as Step Functions Local chooses them: a polling loop that goes back to
// its Check state gets the next response each time round, a retry takes
// the next one too, and the iterations of a Map and the runs of a
// Parallel's branches share their states' count.
func TestMockedByInvocation(t *testing.T) {
	t.Parallel()
	c, err := mock.Parse([]byte(`{
  "StateMachines": {"jobs": {"TestCases": {
    "Poll": {"Submit": "submitted", "Check": "runningThenDone"},
    "PollTooLong": {"Submit": "submitted", "Check": "runningForever"},
    "Items": {"Call": "boomThenEach"},
    "Branches": {"Left": "twoTimes", "Right": "twoTimes"}
  }}},
  "MockedResponses": {
    "submitted": {"0": {"Return": {"JobId": "j-1"}}},
    "runningThenDone": {"0": {"Return": {"Status": "RUNNING"}}, "1": {"Throw": {"Error": "Busy", "Cause": "later"}},
                        "2-3": {"Return": {"Status": "RUNNING"}}, "4": {"Return": {"Status": "SUCCEEDED"}}},
    "runningForever": {"0-2": {"Return": {"Status": "RUNNING"}}},
    "boomThenEach": {"0": {"Throw": {"Error": "Boom"}}, "1": {"Return": "idx1"}, "2": {"Return": "idx2"}, "3": {"Return": "idx3"}},
    "twoTimes": {"0": {"Return": "first"}, "1": {"Return": "second"}}
  }
}`))
	require.NoError(t, err)

	const poll = `{"StartAt": "Submit", "States": {
		"Submit": {"Type": "Task", "Resource": "arn:aws:states:::batch:submitJob", "ResultPath": "$.job", "Next": "Wait"},
		"Wait": {"Type": "Wait", "Seconds": 300, "Next": "Check"},
		"Check": {"Type": "Task", "Resource": "arn:aws:states:::aws-sdk:batch:describeJobs", "ResultPath": "$.check",
			"Retry": [{"ErrorEquals": ["Busy"], "IntervalSeconds": 1, "MaxAttempts": 1}], "Next": "Done?"},
		"Done?": {"Type": "Choice", "Choices": [{"Variable": "$.check.Status", "StringEquals": "SUCCEEDED", "Next": "Done"}], "Default": "Wait"},
		"Done": {"Type": "Succeed"}}}`
	x, results := runCase(t, c, "Poll", poll)
	require.Equal(t, history.StatusSucceeded, x.Status, "%v", x.Failure)
	require.Equal(t, []string{`{"JobId":"j-1"}`, `{"Status":"RUNNING"}`, `{"Status":"RUNNING"}`, `{"Status":"RUNNING"}`, `{"Status":"SUCCEEDED"}`}, results)

	// Out of responses: the execution fails (States.Runtime, past any
	// Retry or Catch), naming the state and the invocation.
	const caught = `{"StartAt": "Submit", "States": {
		"Submit": {"Type": "Task", "Resource": "arn:aws:states:::batch:submitJob", "ResultPath": "$.job", "Next": "Wait"},
		"Wait": {"Type": "Wait", "Seconds": 300, "Next": "Check"},
		"Check": {"Type": "Task", "Resource": "arn:aws:states:::aws-sdk:batch:describeJobs", "ResultPath": "$.check",
			"Retry": [{"ErrorEquals": ["States.ALL"], "MaxAttempts": 5}],
			"Catch": [{"ErrorEquals": ["States.ALL"], "Next": "Done"}], "Next": "Done?"},
		"Done?": {"Type": "Choice", "Choices": [{"Variable": "$.check.Status", "StringEquals": "SUCCEEDED", "Next": "Done"}], "Default": "Wait"},
		"Done": {"Type": "Succeed"}}}`
	x, results = runCase(t, c, "PollTooLong", caught)
	require.Equal(t, history.StatusFailed, x.Status)
	require.Len(t, results, 4)
	require.Equal(t, "States.Runtime", x.Failure.Name)
	require.Equal(t, "The mocked response runningForever has no answer for invocation 3 of state 'Check' in test case PollTooLong (invocations count from 0, retries included).", x.Failure.Cause)

	x, _ = runCase(t, c, "Items", `{"StartAt": "Items", "States": {
		"Items": {"Type": "Pass", "Result": [1, 2, 3], "Next": "Each"},
		"Each": {"Type": "Map", "MaxConcurrency": 1,
		"ItemProcessor": {"StartAt": "Call", "States": {"Call": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke",
			"Retry": [{"ErrorEquals": ["Boom"], "IntervalSeconds": 1}], "End": true}}}, "End": true}}}`)
	require.Equal(t, history.StatusSucceeded, x.Status, "%v", x.Failure)
	require.Equal(t, `["idx1","idx2","idx3"]`, jsonvalue.String(x.Output))

	x, _ = runCase(t, c, "Branches", `{"StartAt": "Both", "States": {
		"Both": {"Type": "Parallel", "ResultPath": "$.last", "Next": "Again?", "Branches": [
			{"StartAt": "Left", "States": {"Left": {"Type": "Task", "Resource": "arn:aws:states:::sqs:sendMessage", "End": true}}},
			{"StartAt": "Right", "States": {"Right": {"Type": "Task", "Resource": "arn:aws:states:::sns:publish", "End": true}}}]},
		"Again?": {"Type": "Choice", "Choices": [{"Variable": "$.last[0]", "StringEquals": "first", "Next": "Both"}], "Default": "Done"},
		"Done": {"Type": "Succeed"}}}`)
	require.Equal(t, history.StatusSucceeded, x.Status, "%v", x.Failure)
	require.Equal(t, `{"last":["second","second"]}`, jsonvalue.String(x.Output), "each branch's state counts its own invocations")
}

func TestLoadReadsOnlyARegularFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "mocks.json")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	big := filepath.Join(dir, "big.json")
	require.NoError(t, os.WriteFile(big, []byte(`{"MockedResponses": {"r": {"0": {"Return": "`+strings.Repeat("x", mock.MaxFileSize)+`"}}}}`), 0o600))
	for file, want := range map[string]string{
		"/dev/zero": "mock configuration: /dev/zero is not a regular file (a device)",
		fifo:        "mock configuration: " + fifo + " is not a regular file (a named pipe)",
		big:         "mock configuration: " + big + " is larger than 32 MiB, the most read of such a file",
	} {
		done := make(chan error, 1)
		go func() {
			_, err := mock.Load(file)
			done <- err
		}()
		select {
		case err := <-done:
			require.EqualError(t, err, want)
		case <-time.After(10 * time.Second):
			t.Fatalf("reading %s: still running after 10s", file)
		}
	}
}
