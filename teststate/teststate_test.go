package teststate_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/failure"
	"stepwise/jsonvalue"
	"stepwise/service"
	"stepwise/service/teststate"
	"stepwise/sfnapi"
)

type testBundle struct {
	ctx context.Context
	cfg teststate.Config
	r   *teststate.Runner
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	var ids atomic.Int64
	cfg := teststate.Config{
		Now:   func() time.Time { return time.Date(2025, 1, 15, 10, 30, 0, 0, time.UTC) },
		NewID: func() string { return fmt.Sprintf("id-%d", ids.Add(1)) },
	}
	return &testBundle{ctx: context.Background(), cfg: cfg, r: teststate.New(cfg)}
}

// run runs a request that must not be refused and returns the response
// as JSON.
func (b *testBundle) run(t *testing.T, in *service.TestStateInput) string {
	t.Helper()
	out, err := b.r.TestState(b.ctx, in)
	require.NoError(t, err)
	data, err := json.Marshal(out)
	require.NoError(t, err)
	return string(data)
}

// refuse runs a request that must be refused and returns the error.
func (b *testBundle) refuse(t *testing.T, in *service.TestStateInput) *sfnapi.Error {
	t.Helper()
	_, err := b.r.TestState(b.ctx, in)
	var apiErr *sfnapi.Error
	require.True(t, errors.As(err, &apiErr), "got %v", err)
	return apiErr
}

func str(s string) *string { return &s }
func num(n int) *int       { return &n }

func errorMock(name, cause string) *service.MockInput {
	return &service.MockInput{ErrorOutput: &service.MockErrorOutput{Error: str(name), Cause: str(cause)}}
}

const retryingTask = `{
	"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke",
	"Parameters": {"FunctionName": "f"},
	"Retry": [{"ErrorEquals": ["MockException"], "IntervalSeconds": 1, "MaxAttempts": 5, "BackoffRate": 2}],
	"Catch": [
		{"ErrorEquals": ["Other"], "Next": "HandleOther"},
		{"ErrorEquals": ["States.ALL"], "ResultPath": "$.error", "Next": "Handle"}
	],
	"End": true}`

func TestTaskRetryAndCatch(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name    string
		retries *int
		mock    *service.MockInput
		want    string
	}{
		{
			name: "first failure is retriable", mock: errorMock("MockException", "boom"),
			want: `{"error":"MockException","cause":"boom","status":"RETRIABLE","inspectionData":{
				"input":"{\"a\":1}","afterInputPath":"{\"a\":1}","afterParameters":"{\"FunctionName\":\"f\"}",
				"errorDetails":{"retryIndex":0,"retryBackoffIntervalSeconds":1}}}`,
		},
		{
			name: "back-off grows with the retries made", retries: num(4), mock: errorMock("MockException", "boom"),
			want: `{"error":"MockException","cause":"boom","status":"RETRIABLE","inspectionData":{
				"input":"{\"a\":1}","afterInputPath":"{\"a\":1}","afterParameters":"{\"FunctionName\":\"f\"}",
				"errorDetails":{"retryIndex":0,"retryBackoffIntervalSeconds":16}}}`,
		},
		{
			name: "retries exhausted, then caught", retries: num(5), mock: errorMock("MockException", "boom"),
			want: `{"error":"MockException","cause":"boom","status":"CAUGHT_ERROR","nextState":"Handle",
				"output":"{\"a\":1,\"error\":{\"Error\":\"MockException\",\"Cause\":\"boom\"}}",
				"inspectionData":{"input":"{\"a\":1}","afterInputPath":"{\"a\":1}","afterParameters":"{\"FunctionName\":\"f\"}",
				"errorDetails":{"retryIndex":0,"catchIndex":1}}}`,
		},
		{
			name: "no retrier matches", mock: errorMock("Other", "x"),
			want: `{"error":"Other","cause":"x","status":"CAUGHT_ERROR","nextState":"HandleOther",
				"output":"{\"Error\":\"Other\",\"Cause\":\"x\"}",
				"inspectionData":{"input":"{\"a\":1}","afterInputPath":"{\"a\":1}","afterParameters":"{\"FunctionName\":\"f\"}",
				"errorDetails":{"catchIndex":0}}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			in := &service.TestStateInput{Definition: retryingTask, Input: str(`{"a":1}`), InspectionLevel: "DEBUG", Mock: tt.mock}
			if tt.retries != nil {
				in.StateConfiguration = &service.TestStateConfiguration{RetrierRetryCount: tt.retries}
			}
			require.JSONEq(t, tt.want, b.run(t, in))
		})
	}
}

func TestTaskDataFlow(t *testing.T) {
	t.Parallel()
	b := setup(t)
	got := b.run(t, &service.TestStateInput{
		Definition: `{
			"Type": "Task", "Resource": "arn:aws:states:::dynamodb:getItem",
			"InputPath": "$.req", "Parameters": {"TableName.$": "$.table", "Key": {"id": {"S": "1"}}},
			"ResultSelector": {"item.$": "$.Item"}, "ResultPath": "$.res", "OutputPath": "$.res",
			"Next": "After"}`,
		Input:           str(`{"req": {"table": "t"}}`),
		InspectionLevel: "TRACE",
		Mock:            &service.MockInput{Result: str(`{"Item": {"id": {"S": "1"}}}`)},
	})
	require.JSONEq(t, `{
		"status": "SUCCEEDED", "nextState": "After", "output": "{\"item\":{\"id\":{\"S\":\"1\"}}}",
		"inspectionData": {
			"input": "{\"req\":{\"table\":\"t\"}}",
			"afterInputPath": "{\"table\":\"t\"}",
			"afterParameters": "{\"TableName\":\"t\",\"Key\":{\"id\":{\"S\":\"1\"}}}",
			"result": "{\"Item\":{\"id\":{\"S\":\"1\"}}}",
			"afterResultSelector": "{\"item\":{\"id\":{\"S\":\"1\"}}}",
			"afterResultPath": "{\"req\":{\"table\":\"t\"},\"res\":{\"item\":{\"id\":{\"S\":\"1\"}}}}"
		}}`, got)
}

func TestInfoLevelHasNoInspectionData(t *testing.T) {
	t.Parallel()
	b := setup(t)
	got := b.run(t, &service.TestStateInput{Definition: `{"Type": "Pass", "Next": "B"}`, Input: str(`[1, 2]`)})
	require.JSONEq(t, `{"status":"SUCCEEDED","output":"[1,2]","nextState":"B"}`, got)
}

func TestRuntimeErrorsAreNotCaught(t *testing.T) {
	t.Parallel()
	b := setup(t)
	got := b.run(t, &service.TestStateInput{
		Definition: `{"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke",
			"Parameters": {"FunctionName.$": "$.missing"},
			"Catch": [{"ErrorEquals": ["States.ALL"], "Next": "H"}], "End": true}`,
		Mock: &service.MockInput{Result: str(`{}`)},
	})
	require.JSONEq(t, `{"status":"FAILED","error":"States.Runtime",
		"cause":"An error occurred while executing the state 'StateName' (entered at the event id #2). The JSONPath '$.missing' specified for the field 'FunctionName.$' could not be found in the input '{}'"}`, got)
}

func TestMap(t *testing.T) {
	t.Parallel()
	const def = `{
		"Type": "Map", "ItemsPath": "$.items",
		"ItemSelector": {"i.$": "$$.Map.Item.Index", "v.$": "$$.Map.Item.Value"},
		"ItemProcessor": {"StartAt": "P", "States": {"P": {"Type": "Pass", "End": true}}},
		"ToleratedFailureCount": 1,
		"Retry": [{"ErrorEquals": ["Nope"]}],
		"Catch": [{"ErrorEquals": ["States.ExceedToleratedFailureThreshold"], "Next": "TooMany"}],
		"End": true}`
	inspection := `"input":"{\"items\":[\"a\",\"b\",\"c\"]}","afterInputPath":"{\"items\":[\"a\",\"b\",\"c\"]}",
		"afterItemsPath":"[\"a\",\"b\",\"c\"]",
		"afterItemSelector":"[{\"i\":0,\"v\":\"a\"},{\"i\":1,\"v\":\"b\"},{\"i\":2,\"v\":\"c\"}]",
		"maxConcurrency":0,"toleratedFailureCount":1`

	tests := []struct {
		name     string
		failures *int
		mock     *service.MockInput
		want     string
	}{
		{
			name: "mocked result", failures: num(1), mock: &service.MockInput{Result: str(`[1, 2, 3]`)},
			want: `{"status":"SUCCEEDED","output":"[1,2,3]","inspectionData":{` + inspection + `,
				"afterResultSelector":"[1,2,3]","afterResultPath":"[1,2,3]"}}`,
		},
		{
			name: "too many failed iterations", failures: num(2), mock: &service.MockInput{Result: str(`[1, 2, 3]`)},
			want: `{"status":"CAUGHT_ERROR","error":"States.ExceedToleratedFailureThreshold",
				"cause":"The specified tolerated failure threshold was exceeded","nextState":"TooMany",
				"output":"{\"Error\":\"States.ExceedToleratedFailureThreshold\",\"Cause\":\"The specified tolerated failure threshold was exceeded\"}",
				"inspectionData":{` + inspection + `,"errorDetails":{"catchIndex":0}}}`,
		},
		{
			name: "mocked error", mock: errorMock("Boom", "b"),
			want: `{"status":"FAILED","error":"Boom","cause":"b","inspectionData":{` + inspection + `}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			in := &service.TestStateInput{Definition: def, Input: str(`{"items":["a","b","c"]}`), InspectionLevel: "DEBUG", Mock: tt.mock}
			if tt.failures != nil {
				in.StateConfiguration = &service.TestStateConfiguration{MapIterationFailureCount: tt.failures}
			}
			require.JSONEq(t, tt.want, b.run(t, in))
		})
	}
}

func TestMapToleratedPercentage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	in := func(failures int) *service.TestStateInput {
		return &service.TestStateInput{
			Definition: `{"Type": "Map", "ToleratedFailurePercentage": 50, "MaxConcurrency": 2,
				"ItemProcessor": {"StartAt": "P", "States": {"P": {"Type": "Pass", "End": true}}}, "End": true}`,
			Input:              str(`[1, 2, 3, 4]`),
			Mock:               &service.MockInput{Result: str(`[1, 2, 3, 4]`)},
			StateConfiguration: &service.TestStateConfiguration{MapIterationFailureCount: num(failures)},
		}
	}
	require.JSONEq(t, `{"status":"SUCCEEDED","output":"[1,2,3,4]"}`, b.run(t, in(2)))
	require.JSONEq(t, `{"status":"FAILED","error":"States.ExceedToleratedFailureThreshold",
		"cause":"The specified tolerated failure threshold was exceeded"}`, b.run(t, in(3)))

	debug := in(0)
	debug.InspectionLevel = "DEBUG"
	require.JSONEq(t, `{"status":"SUCCEEDED","output":"[1,2,3,4]","inspectionData":{
		"input":"[1,2,3,4]","afterInputPath":"[1,2,3,4]","afterItemsPath":"[1,2,3,4]",
		"afterResultSelector":"[1,2,3,4]","afterResultPath":"[1,2,3,4]",
		"maxConcurrency":2,"toleratedFailurePercentage":50}}`, b.run(t, debug))
}

func TestParallel(t *testing.T) {
	t.Parallel()
	b := setup(t)
	got := b.run(t, &service.TestStateInput{
		Definition: `{"Type": "Parallel", "ResultSelector": {"first.$": "$[0]"}, "Next": "N",
			"Branches": [{"StartAt": "A", "States": {"A": {"Type": "Pass", "End": true}}},
			             {"StartAt": "B", "States": {"B": {"Type": "Pass", "End": true}}}]}`,
		InspectionLevel: "DEBUG",
		Mock:            &service.MockInput{Result: str(`["x", "y"]`)},
	})
	require.JSONEq(t, `{"status":"SUCCEEDED","output":"{\"first\":\"x\"}","nextState":"N","inspectionData":{
		"input":"{}","afterResultSelector":"{\"first\":\"x\"}","afterResultPath":"{\"first\":\"x\"}"}}`, got)
}

func TestChoice(t *testing.T) {
	t.Parallel()
	const def = `{"Type": "Choice", "OutputPath": "$.v",
		"Choices": [{"Variable": "$.v", "NumericGreaterThan": 10, "Next": "Big"}]}`
	b := setup(t)
	require.JSONEq(t, `{"status":"SUCCEEDED","output":"11","nextState":"Big"}`,
		b.run(t, &service.TestStateInput{Definition: def, Input: str(`{"v": 11}`)}))
	require.JSONEq(t, `{"status":"FAILED","error":"States.NoChoiceMatched","cause":"No Matches! (at state 'StateName')"}`,
		b.run(t, &service.TestStateInput{Definition: def, Input: str(`{"v": 1}`)}))
}

func TestWait(t *testing.T) {
	t.Parallel()
	b := setup(t)
	require.JSONEq(t, `{"status":"SUCCEEDED","output":"{\"s\":86400}","nextState":"Later"}`,
		b.run(t, &service.TestStateInput{Definition: `{"Type": "Wait", "SecondsPath": "$.s", "Next": "Later"}`, Input: str(`{"s": 86400}`)}))
	require.JSONEq(t, `{"status":"FAILED","error":"States.Runtime",
		"cause":"An error occurred while executing the state 'StateName' (entered at the event id #2). The SecondsPath parameter references a negative value: $.s == -1"}`,
		b.run(t, &service.TestStateInput{Definition: `{"Type": "Wait", "SecondsPath": "$.s", "End": true}`, Input: str(`{"s": -1}`)}))
}

func TestFail(t *testing.T) {
	t.Parallel()
	b := setup(t)
	got := b.run(t, &service.TestStateInput{
		Definition:      `{"Type": "Fail", "ErrorPath": "$.e", "CausePath": "States.Format('code {}', $.c)"}`,
		Input:           str(`{"e": "Bad", "c": 7}`),
		InspectionLevel: "DEBUG",
	})
	require.JSONEq(t, `{"status":"FAILED","error":"Bad","cause":"code 7","inspectionData":{
		"input":"{\"e\":\"Bad\",\"c\":7}","afterInputPath":"{\"e\":\"Bad\",\"c\":7}"}}`, got)
}

func TestVariables(t *testing.T) {
	t.Parallel()
	b := setup(t)
	got := b.run(t, &service.TestStateInput{
		Definition:      `{"Type": "Pass", "Parameters": {"x.$": "$x"}, "Assign": {"y.$": "$.x"}, "End": true}`,
		Variables:       str(`{"x": 1, "y": 0}`),
		InspectionLevel: "DEBUG",
	})
	require.JSONEq(t, `{"status":"SUCCEEDED","output":"{\"x\":1}","inspectionData":{
		"input":"{}","afterInputPath":"{}","afterParameters":"{\"x\":1}",
		"afterResultSelector":"{\"x\":1}","afterResultPath":"{\"x\":1}",
		"variables":"{\"x\":1,\"y\":1}"}}`, got)
}

func TestContextObject(t *testing.T) {
	t.Parallel()

	t.Run("default", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		got := b.run(t, &service.TestStateInput{
			Definition: `{"Type": "Task", "Resource": "arn:aws:states:::sqs:sendMessage.waitForTaskToken",
				"Parameters": {"ctx.$": "$$"}, "ResultPath": null, "OutputPath": "$", "End": true}`,
			Input:              str(`{"a": 1}`),
			StateConfiguration: &service.TestStateConfiguration{RetrierRetryCount: num(2)},
			Mock:               &service.MockInput{Result: str(`{}`)},
			InspectionLevel:    "DEBUG",
		})
		var out struct {
			InspectionData struct{ AfterParameters string }
		}
		require.NoError(t, json.Unmarshal([]byte(got), &out))
		require.JSONEq(t, `{"ctx": {
			"Execution": {"Id": "arn:aws:states:us-east-1:123456789012:express:id-1:id-2", "Input": {"a": 1},
				"Name": "id-2", "StartTime": "2025-01-15T10:30:00.000Z"},
			"StateMachine": {"Id": "arn:aws:states:us-east-1:123456789012:stateMachine:id-1", "Name": "id-1"},
			"State": {"Name": "StateName", "EnteredTime": "2025-01-15T10:30:00.000Z", "RetryCount": 2},
			"Task": {"Token": "id-3"}}}`, out.InspectionData.AfterParameters)
	})

	t.Run("given", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		got := b.run(t, &service.TestStateInput{
			Definition: `{"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke",
				"Parameters": {"FunctionName": "f"}, "ResultSelector": {"name.$": "$$.Execution.Name"}, "End": true}`,
			Context: str(`{"Execution": {"Name": "mine"}}`),
			Mock:    &service.MockInput{Result: str(`{}`)},
		})
		require.JSONEq(t, `{"status":"SUCCEEDED","output":"{\"name\":\"mine\"}"}`, got)
	})
}

func TestStateName(t *testing.T) {
	t.Parallel()
	b := setup(t)
	got := b.run(t, &service.TestStateInput{
		Definition: `{"StartAt": "P", "States": {"P": {"Type": "Parallel", "End": true, "Branches": [
			{"StartAt": "Inner", "States": {"Inner": {"Type": "Pass", "Result": "r", "Next": "Last"}, "Last": {"Type": "Succeed"}}}]}}}`,
		StateName: str("Inner"),
	})
	require.JSONEq(t, `{"status":"SUCCEEDED","output":"\"r\"","nextState":"Last"}`, got)
}

func TestInvoke(t *testing.T) {
	t.Parallel()
	const def = `{"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "Parameters": {"FunctionName": "f"}, "TimeoutSeconds": 30, "End": true}`

	t.Run("no integration", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		err := b.refuse(t, &service.TestStateInput{Definition: def, RoleArn: str("arn:aws:iam::1:role/r")})
		require.Equal(t, sfnapi.CodeValidation, err.Code)
		require.Equal(t, "TestState cannot call 'arn:aws:states:::lambda:invoke' on this server: no integration is configured. Specify a mock to test the state.", err.Message)
	})

	t.Run("result and failure", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		var calls []*teststate.Call
		b.cfg.Invoke = func(_ context.Context, c *teststate.Call) (any, error) {
			calls = append(calls, c)
			if len(calls) == 2 {
				return nil, failure.New("Lambda.Unknown", "gone")
			}
			return jsonvalue.ParseString(`{"Payload": 1}`)
		}
		r := teststate.New(b.cfg)
		in := &service.TestStateInput{Definition: def, RoleArn: str("arn:aws:iam::1:role/r")}
		out, err := r.TestState(b.ctx, in)
		require.NoError(t, err)
		require.Equal(t, `{"Payload":1}`, *out.Output)
		out, err = r.TestState(b.ctx, in)
		require.NoError(t, err)
		require.Equal(t, teststate.StatusFailed, out.Status)
		require.Equal(t, "Lambda.Unknown", *out.Error)
		require.Len(t, calls, 2)
		require.Equal(t, "arn:aws:iam::1:role/r", calls[0].RoleArn)
		require.Equal(t, int64(30), calls[0].TimeoutSeconds)
		require.Equal(t, `{"FunctionName":"f"}`, jsonvalue.String(calls[0].Parameters))
	})
}

func TestDataLimit(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.cfg.PayloadLimit = 20
	r := teststate.New(b.cfg)
	out, err := r.TestState(b.ctx, &service.TestStateInput{
		Definition: `{"Type": "Pass", "Result": "a result that is too long", "End": true}`,
	})
	require.NoError(t, err)
	require.Equal(t, failure.DataLimitExceeded, *out.Error)
}

func TestRefusals(t *testing.T) {
	t.Parallel()
	const (
		task     = `{"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "Parameters": {"FunctionName": "f"}, "End": true}`
		parallel = `{"Type": "Parallel", "End": true, "Branches": [{"StartAt": "A", "States": {"A": {"Type": "Pass", "End": true}}}]}`
		mapState = `{"Type": "Map", "End": true, "ItemProcessor": {"StartAt": "A", "States": {"A": {"Type": "Pass", "End": true}}}}`
	)
	result := &service.MockInput{Result: str(`{}`)}

	tests := []struct {
		name string
		in   *service.TestStateInput
		code string
		msg  string
	}{
		{
			name: "invalid state", in: &service.TestStateInput{Definition: `{"Type": "Pass", "Next": 3}`},
			code: sfnapi.CodeInvalidDefinition,
			msg:  "Invalid State Machine Definition: 'SCHEMA_VALIDATION_FAILED: Expected value of type [STRING] at /Next'",
		},
		{
			name: "state without transition", in: &service.TestStateInput{Definition: `{"Type": "Pass"}`},
			code: sfnapi.CodeInvalidDefinition,
			msg:  "Invalid State Machine Definition: 'SCHEMA_VALIDATION_FAILED: Exactly one of these fields is required: [Next, End] at /'",
		},
		{
			name: "unknown state name", in: &service.TestStateInput{
				Definition: `{"StartAt": "A", "States": {"A": {"Type": "Pass", "End": true}}}`, StateName: str("B")},
			code: sfnapi.CodeValidation, msg: "State not found in definition",
		},
		{
			name: "parallel without mock", in: &service.TestStateInput{Definition: parallel},
			code: sfnapi.CodeInvalidDefinition,
			msg:  "TestState API does not support Map or Parallel states. Supported state types include: [Task, Wait, Pass, Succeed, Fail, Choice]",
		},
		{
			name: "failure count without mock", in: &service.TestStateInput{Definition: mapState,
				StateConfiguration: &service.TestStateConfiguration{MapIterationFailureCount: num(0)}},
			code: sfnapi.CodeValidation, msg: "TestState does not support MapIterationFailureCount when a mock is not specified.",
		},
		{
			name: "task without role", in: &service.TestStateInput{Definition: task},
			code: sfnapi.CodeValidation, msg: "RoleArn must be specified when testing a Task state",
		},
		{
			name: "callback task without mock", in: &service.TestStateInput{RoleArn: str("r"),
				Definition: `{"Type": "Task", "Resource": "arn:aws:states:::sqs:sendMessage.waitForTaskToken", "End": true}`},
			code: sfnapi.CodeValidation,
			msg:  "TestState supports Activity tasks and the '.sync' and '.waitForTaskToken' integration patterns only when a mock is specified: 'arn:aws:states:::sqs:sendMessage.waitForTaskToken'",
		},
		{
			name: "mocked choice", in: &service.TestStateInput{Mock: result,
				Definition: `{"Type": "Choice", "Choices": [{"Variable": "$.a", "IsPresent": true, "Next": "B"}]}`},
			code: sfnapi.CodeValidation, msg: "State type 'Choice' is not supported when a mock is specified",
		},
		{
			name: "mock and reveal secrets", in: &service.TestStateInput{Definition: task, Mock: result, RevealSecrets: true},
			code: sfnapi.CodeValidation, msg: "TestState does not support RevealSecrets when a mock is specified.",
		},
		{
			name: "empty mock", in: &service.TestStateInput{Definition: task, Mock: &service.MockInput{}},
			code: sfnapi.CodeValidation, msg: "A test mock should have one of the following fields: [result, errorOutput].",
		},
		{
			name: "mock result not JSON", in: &service.TestStateInput{Definition: task, Mock: &service.MockInput{Result: str(`{`)}},
			code: sfnapi.CodeValidation,
			msg:  "Mocked result must be valid JSON",
		},
		{
			name: "parallel result of the wrong length", in: &service.TestStateInput{Definition: parallel, Mock: &service.MockInput{Result: str(`[1, 2]`)}},
			code: sfnapi.CodeValidation, msg: "Mocked result must contain the same number of items as number of Parallel branches.",
		},
		{
			name: "map result not an array", in: &service.TestStateInput{Definition: mapState, Mock: result},
			code: sfnapi.CodeValidation, msg: "Mocked result must be an array.",
		},
		{
			name: "context member unknown", in: &service.TestStateInput{Definition: task, Mock: result, Context: str(`{"Nope": {}}`)},
			code: sfnapi.CodeValidation, msg: "Invalid Context object provided: Field 'Nope' is not allowed",
		},
		{
			name: "context field of the wrong type", in: &service.TestStateInput{Definition: task, Mock: result, Context: str(`{"Execution": {"Id": 1}}`)},
			code: sfnapi.CodeValidation, msg: "Invalid Context object provided: Execution.Id must be a string",
		},
		{
			name: "task token without callback", in: &service.TestStateInput{Definition: task, Mock: result, Context: str(`{"Task": {"Token": "t"}}`)},
			code: sfnapi.CodeValidation,
			msg:  "Invalid Context object provided: 'Task' field is only supported for Task states with the '.sync' or '.waitForTaskToken' integration pattern",
		},
		{
			name: "context without mock", in: &service.TestStateInput{Definition: `{"Type": "Pass", "End": true}`, Context: str(`{}`)},
			code: sfnapi.CodeValidation, msg: "TestState does not support Context when a mock is not specified.",
		},
		{
			name: "input not JSON", in: &service.TestStateInput{Definition: `{"Type": "Pass", "End": true}`, Input: str(`{"a"}`)},
			code: sfnapi.CodeInvalidExecutionInput,
			msg:  "Invalid State Machine Execution Input: 'Unexpected character ('}' (code 125)): was expecting a colon to separate field name and value'",
		},
		{
			name: "variables not an object", in: &service.TestStateInput{Definition: `{"Type": "Pass", "End": true}`, Variables: str(`[]`)},
			code: sfnapi.CodeValidation, msg: "Invalid variables: 'variables must be a JSON object'",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := setup(t).refuse(t, tt.in)
			require.Equal(t, tt.code, err.Code)
			require.Equal(t, tt.msg, err.Message)
		})
	}
}

func TestFieldValidation(t *testing.T) {
	t.Parallel()
	const (
		startExecution = `{"Type": "Task", "Resource": "arn:aws:states:::states:startExecution", "Parameters": {"StateMachineArn": "a"}, "End": true}`
		invoke         = `{"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "Parameters": {"FunctionName": "f"}, "End": true}`
		sdkInvoke      = `{"Type": "Task", "Resource": "arn:aws:states:::aws-sdk:lambda:invoke", "Parameters": {"FunctionName": "f"}, "End": true}`
		callback       = `{"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke.waitForTaskToken", "Parameters": {"FunctionName": "f"}, "End": true}`
	)
	tests := []struct {
		name   string
		def    string
		result string
		mode   string
		msg    string // "" when the result is accepted
	}{
		{name: "required field missing", def: startExecution, result: `{"ExecutionArn": "a"}`,
			msg: "Mock result schema validation error: Required field 'StartDate' is missing"},
		{name: "required fields present", def: startExecution, result: `{"ExecutionArn": "a", "StartDate": "2025-01-01T00:00:00Z"}`},
		{name: "required fields not checked when PRESENT", def: startExecution, result: `{"ExecutionArn": "a"}`, mode: "PRESENT"},
		{name: "nothing checked when NONE", def: invoke, result: `{"StatusCode": "200"}`, mode: "NONE"},
		{name: "wrong type", def: invoke, result: `{"StatusCode": "200"}`,
			msg: "Mock result schema validation error: Field 'StatusCode' must be a number"},
		{name: "optimised payload may hold any JSON", def: invoke, result: `{"Payload": {"a": [1]}, "StatusCode": 200}`},
		{name: "aws-sdk payload is a blob", def: sdkInvoke, result: `{"Payload": {"a": [1]}}`,
			msg: "Mock result schema validation error: Field 'Payload' must be a string"},
		{name: "callback result is not the API's", def: callback, result: `{"StatusCode": "200"}`},
		{name: "result not an object", def: invoke, result: `[1]`, msg: "Mocked result must be a JSON object."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			in := &service.TestStateInput{Definition: tt.def, Mock: &service.MockInput{Result: str(tt.result), FieldValidationMode: tt.mode}}
			if tt.msg == "" {
				b.run(t, in)
				return
			}
			err := b.refuse(t, in)
			require.Equal(t, sfnapi.CodeValidation, err.Code)
			require.Equal(t, tt.msg, err.Message)
		})
	}
}

func TestJSONata(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name string
		in   *service.TestStateInput
		want string
	}{
		{
			name: "Pass: Assign and Output read the variables before the state",
			in: &service.TestStateInput{
				Definition: `{"Type": "Pass", "QueryLanguage": "JSONata", "Next": "N",
					"Assign": {"n": "{% $n + 1 %}", "old": "{% $n %}"}, "Output": {"n": "{% $n %}", "in": "{% $states.input.a %}"}}`,
				Input: str(`{"a": 1}`), Variables: str(`{"n": 5}`), InspectionLevel: "DEBUG",
			},
			want: `{"status":"SUCCEEDED","output":"{\"n\":5,\"in\":1}","nextState":"N","inspectionData":{
				"input":"{\"a\":1}","variables":"{\"n\":6,\"old\":5}"}}`,
		},
		{
			name: "Task: Arguments, then Output and Assign read the result",
			in: &service.TestStateInput{
				Definition: `{"Type": "Task", "QueryLanguage": "JSONata", "Resource": "arn:aws:states:::lambda:invoke",
					"Arguments": {"FunctionName": "f", "Payload": "{% $states.input %}"},
					"Output": "{% $states.result.Payload %}", "Assign": {"status": "{% $states.result.StatusCode %}"}, "End": true}`,
				Input: str(`{"a": 1}`), InspectionLevel: "TRACE",
				Mock: &service.MockInput{Result: str(`{"StatusCode": 200, "Payload": [1, 2]}`)},
			},
			want: `{"status":"SUCCEEDED","output":"[1,2]","inspectionData":{
				"input":"{\"a\":1}","afterArguments":"{\"FunctionName\":\"f\",\"Payload\":{\"a\":1}}",
				"result":"{\"StatusCode\":200,\"Payload\":[1,2]}","variables":"{\"status\":200}"}}`,
		},
		{
			name: "Task: an Output that yields nothing is caught, with $states.errorOutput",
			in: &service.TestStateInput{
				Definition: `{"Type": "Task", "QueryLanguage": "JSONata", "Resource": "arn:aws:states:::lambda:invoke",
					"Arguments": {"FunctionName": "f"}, "Output": "{% $states.result.missing %}",
					"Catch": [{"ErrorEquals": ["States.ALL"], "Output": {"e": "{% $states.errorOutput.Error %}"},
					           "Assign": {"caught": true}, "Next": "H"}], "End": true}`,
				InspectionLevel: "DEBUG",
				Mock:            &service.MockInput{Result: str(`{"StatusCode": 200}`)},
			},
			want: `{"status":"CAUGHT_ERROR","error":"States.QueryEvaluationError",
				"cause":"An error occurred while executing the state 'StateName' (entered at the event id #2). The JSONata expression '$states.result.missing' specified for the field 'Output' returned nothing (undefined).",
				"output":"{\"e\":\"States.QueryEvaluationError\"}","nextState":"H","inspectionData":{
				"input":"{}","afterArguments":"{\"FunctionName\":\"f\"}","result":"{\"StatusCode\":200}",
				"errorDetails":{"catchIndex":0},"variables":"{\"caught\":true}"}}`,
		},
		{
			name: "Choice: the matching rule's Output",
			in: &service.TestStateInput{
				Definition: `{"Type": "Choice", "QueryLanguage": "JSONata", "Default": "Small",
					"Choices": [{"Condition": "{% $states.input.v > 10 %}", "Output": {"big": "{% $states.input.v %}"}, "Next": "Big"}]}`,
				Input: str(`{"v": 11}`),
			},
			want: `{"status":"SUCCEEDED","output":"{\"big\":11}","nextState":"Big"}`,
		},
		{
			name: "Choice: the Default",
			in: &service.TestStateInput{
				Definition: `{"Type": "Choice", "QueryLanguage": "JSONata", "Default": "Small",
					"Choices": [{"Condition": "{% $states.input.v > 10 %}", "Next": "Big"}]}`,
				Input: str(`{"v": 1}`),
			},
			want: `{"status":"SUCCEEDED","output":"{\"v\":1}","nextState":"Small"}`,
		},
		{
			name: "Choice: a Condition that is not a boolean",
			in: &service.TestStateInput{
				Definition: `{"Type": "Choice", "QueryLanguage": "JSONata",
					"Choices": [{"Condition": "{% $states.input.v %}", "Next": "Big"}]}`,
				Input: str(`{"v": 1}`),
			},
			want: `{"status":"FAILED","error":"States.QueryEvaluationError",
				"cause":"An error occurred while executing the state 'StateName' (entered at the event id #2). The JSONata expression '$states.input.v' specified for the field 'Condition' returned an unexpected result type. Expected 'boolean', but was 'number' for value: 1"}`,
		},
		{
			name: "Wait: a Timestamp that is not a date",
			in: &service.TestStateInput{
				Definition: `{"Type": "Wait", "QueryLanguage": "JSONata", "Timestamp": "{% $states.input.t %}", "End": true}`,
				Input:      str(`{"t": "soon"}`),
			},
			want: `{"status":"FAILED","error":"States.QueryEvaluationError",
				"cause":"An error occurred while executing the state 'StateName' (entered at the event id #2). The Timestamp field cannot be parsed as an ISO-8601 extended offset date-time format string: soon"}`,
		},
		{
			name: "Wait: Seconds, not waited for",
			in: &service.TestStateInput{
				Definition: `{"Type": "Wait", "QueryLanguage": "JSONata", "Seconds": "{% $states.input.s %}", "Next": "Later"}`,
				Input:      str(`{"s": 86400}`),
			},
			want: `{"status":"SUCCEEDED","output":"{\"s\":86400}","nextState":"Later"}`,
		},
		{
			name: "Fail: Error and Cause expressions",
			in: &service.TestStateInput{
				Definition: `{"Type": "Fail", "QueryLanguage": "JSONata", "Error": "{% $states.input.e %}", "Cause": "{% 'code ' & $states.input.c %}"}`,
				Input:      str(`{"e": "Bad", "c": 7}`), InspectionLevel: "DEBUG",
			},
			want: `{"status":"FAILED","error":"Bad","cause":"code 7","inspectionData":{"input":"{\"e\":\"Bad\",\"c\":7}"}}`,
		},
		{
			name: "Map: Items and ItemSelector with the iteration's context",
			in: &service.TestStateInput{
				Definition: `{"Type": "Map", "QueryLanguage": "JSONata", "Items": "{% $states.input.xs %}",
					"ItemSelector": {"i": "{% $states.context.Map.Item.Index %}", "v": "{% $states.context.Map.Item.Value %}"},
					"MaxConcurrency": "{% $states.input.mc %}", "ToleratedFailurePercentage": 50,
					"ItemProcessor": {"StartAt": "A", "States": {"A": {"Type": "Pass", "End": true}}},
					"Output": {"n": "{% $count($states.result) %}"}, "End": true}`,
				Input: str(`{"xs": ["a", "b"], "mc": 2}`), InspectionLevel: "DEBUG",
				Mock: &service.MockInput{Result: str(`[1, 2]`)},
			},
			want: `{"status":"SUCCEEDED","output":"{\"n\":2}","inspectionData":{
				"input":"{\"xs\":[\"a\",\"b\"],\"mc\":2}",
				"afterItemSelector":"[{\"i\":0,\"v\":\"a\"},{\"i\":1,\"v\":\"b\"}]",
				"maxConcurrency":2,"toleratedFailurePercentage":50}}`,
		},
		{
			name: "Map: Items that are not an array",
			in: &service.TestStateInput{
				Definition: `{"Type": "Map", "QueryLanguage": "JSONata", "Items": "{% $states.input.xs %}",
					"ItemProcessor": {"StartAt": "A", "States": {"A": {"Type": "Pass", "End": true}}}, "End": true}`,
				Input: str(`{"xs": "a"}`),
				Mock:  &service.MockInput{Result: str(`[]`)},
			},
			want: `{"status":"FAILED","error":"States.QueryEvaluationError",
				"cause":"An error occurred while executing the state 'StateName' (entered at the event id #2). The JSONata expression '$states.input.xs' specified for the field 'Items' returned an unexpected result type. Expected 'array', but was 'string' for value: \"a\""}`,
		},
		{
			name: "Parallel: Output reads the mocked result",
			in: &service.TestStateInput{
				Definition: `{"Type": "Parallel", "QueryLanguage": "JSONata", "Arguments": {"x": 1},
					"Output": {"first": "{% $states.result[0] %}"}, "Next": "N",
					"Branches": [{"StartAt": "A", "States": {"A": {"Type": "Pass", "End": true}}},
					             {"StartAt": "B", "States": {"B": {"Type": "Pass", "End": true}}}]}`,
				InspectionLevel: "DEBUG",
				Mock:            &service.MockInput{Result: str(`["x", "y"]`)},
			},
			want: `{"status":"SUCCEEDED","output":"{\"first\":\"x\"}","nextState":"N","inspectionData":{"input":"{}"}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			require.JSONEq(t, tt.want, b.run(t, tt.in))
		})
	}
}
