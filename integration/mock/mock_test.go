package mock_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/engine"
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

func task(testCase, state, resource string, attempt int) *engine.Task {
	return &engine.Task{
		StateMachineArn: "arn:aws:states:us-east-1:123456789012:stateMachine:jobs", TestCase: testCase,
		Request: &interp.TaskRequest{StateName: state, Resource: resource, RetryCount: attempt},
	}
}

// A test case answers the states it names, attempt by attempt; a
// function ARN gets the payload of a lambda:invoke-shaped answer; states
// it does not name run for real.
func TestMocked(t *testing.T) {
	t.Parallel()
	c, err := mock.Parse([]byte(config))
	require.NoError(t, err)
	require.True(t, c.HasTestCase("jobs", "HappyPath"))
	require.False(t, c.HasTestCase("jobs", "Nope"))
	require.False(t, c.HasTestCase("other", "HappyPath"))

	r, ok := c.Mocked(task("HappyPath", "Fetch", "arn:aws:states:::dynamodb:getItem", 0))
	require.True(t, ok)
	require.Equal(t, `{"Item":{"id":{"S":"1"}}}`, jsonvalue.String(r.Output))

	for attempt, want := range []string{"Busy", "Busy", ""} {
		r, ok = c.Mocked(task("HappyPath", "Notify", "arn:aws:states:::sns:publish", attempt))
		require.True(t, ok)
		if want == "" {
			require.Nil(t, r.Failure)
			require.Equal(t, "sent", r.Output)
			continue
		}
		require.Equal(t, want, r.Failure.Name, "attempt %d", attempt)
		require.Equal(t, "try later", r.Failure.Cause)
	}
	r, ok = c.Mocked(task("HappyPath", "Notify", "arn:aws:states:::sns:publish", 3))
	require.True(t, ok)
	require.Equal(t, "The mocked response retryThenOk of state 'Notify' in test case HappyPath has no answer for attempt 3.", r.Failure.Cause)

	r, _ = c.Mocked(task("HappyPath", "Work", "arn:aws:lambda:us-east-1:123456789012:function:work", 0))
	require.Equal(t, `{"done":true}`, jsonvalue.String(r.Output))
	r, _ = c.Mocked(task("HappyPath", "Work", "arn:aws:states:::lambda:invoke", 0))
	require.Equal(t, `{"StatusCode":200,"Payload":{"done":true}}`, jsonvalue.String(r.Output))

	r, _ = c.Mocked(task("Broken", "Fetch", "arn:aws:states:::dynamodb:getItem", 0))
	require.Equal(t, "States.TaskFailed", r.Failure.Name)
	require.False(t, r.Failure.HasCause)

	_, ok = c.Mocked(task("HappyPath", "Unmocked", "arn:aws:states:::sqs:sendMessage", 0))
	require.False(t, ok)
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, msg string }{
		{`[]`, "must be a JSON object"},
		{`{"Extra": {}}`, "Extra: unknown member (StateMachines and MockedResponses are)"},
		{`{"MockedResponses": {"r": {"x": {"Return": 1}}}}`, `MockedResponses.r.x: not an attempt number or a range of them ("0", "1-2")`},
		{`{"MockedResponses": {"r": {"2-1": {"Return": 1}}}}`, `MockedResponses.r.2-1: not an attempt number or a range of them ("0", "1-2")`},
		{`{"MockedResponses": {"r": {"0": {"Return": 1, "Throw": {}}}}}`, "MockedResponses.r.0: must be an object with one member, Return or Throw"},
		{`{"MockedResponses": {"r": {"0-2": {"Return": 1}, "1": {"Return": 2}}}}`, "overlaps attempts"},
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
