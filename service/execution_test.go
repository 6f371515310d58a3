package service_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/engine/start"
	"stepwise/history"
	"stepwise/service"
	"stepwise/service/servicetest"
	"stepwise/sfnapi"
	"stepwise/store"
)

const execPrefix = "arn:aws:states:us-east-1:123456789012:execution:"

func TestStartExecution(t *testing.T) {
	t.Parallel()

	t.Run("Starts", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		smArn := b.create(t, "sm", passDefinition)
		var got *start.Params
		prev := b.engine.StartExecutionFunc
		b.engine.StartExecutionFunc = func(ctx context.Context, p *start.Params) (*store.Execution, error) {
			got = p
			return prev(ctx, p)
		}
		out, err := b.svc.StartExecution(b.ctx, &service.StartExecutionInput{StateMachineArn: smArn, Name: ptr("run-1"), Input: ptr(`{"a": 1}`), TraceHeader: ptr("Root=1")})
		require.NoError(t, err)
		require.Equal(t, execPrefix+"sm:run-1", out.ExecutionArn)
		require.Equal(t, `{"a": 1}`, got.Input)
		require.Equal(t, "run-1", got.Name)
		require.Equal(t, "Root=1", got.TraceHeader)
		require.NotNil(t, got.Machine)
		require.Equal(t, "State_1", got.Machine.StartAt)

		// No name: a generated one; no input: {}.
		out, err = b.svc.StartExecution(b.ctx, &service.StartExecutionInput{StateMachineArn: smArn})
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(out.ExecutionArn, execPrefix+"sm:id-"), out.ExecutionArn)
		require.Equal(t, "{}", got.Input)
	})

	t.Run("Idempotent", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		smArn := b.create(t, "sm", passDefinition)
		first, err := b.svc.StartExecution(b.ctx, &service.StartExecutionInput{StateMachineArn: smArn, Name: ptr("x"), Input: ptr(`{"a":1}`)})
		require.NoError(t, err)
		again, err := b.svc.StartExecution(b.ctx, &service.StartExecutionInput{StateMachineArn: smArn, Name: ptr("x"), Input: ptr(`{"a": 1}`)})
		require.NoError(t, err)
		require.Equal(t, first, again)

		_, err = b.svc.StartExecution(b.ctx, &service.StartExecutionInput{StateMachineArn: smArn, Name: ptr("x"), Input: ptr(`{"a": 2}`)})
		requireAPIError(t, err, "ExecutionAlreadyExists", "Execution Already Exists: '"+execPrefix+"sm:x'")

		// Once ended, the name is taken for good.
		_, err = servicetest.Finish(b.ctx, b.drv, first.ExecutionArn, history.StatusSucceeded, ptr(`{}`), nil, nil, time.Now())
		require.NoError(t, err)
		_, err = b.svc.StartExecution(b.ctx, &service.StartExecutionInput{StateMachineArn: smArn, Name: ptr("x"), Input: ptr(`{"a":1}`)})
		requireAPIError(t, err, "ExecutionAlreadyExists", "")
	})

	t.Run("Express", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		smArn := b.create(t, "ex", passDefinition, func(in *service.CreateStateMachineInput) { in.Type = "EXPRESS" })
		out, err := b.svc.StartExecution(b.ctx, &service.StartExecutionInput{StateMachineArn: smArn, Name: ptr("e1")})
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(out.ExecutionArn, "arn:aws:states:us-east-1:123456789012:express:ex:e1:"), out.ExecutionArn)
		d, err := b.svc.DescribeExecution(b.ctx, &service.DescribeExecutionInput{ExecutionArn: out.ExecutionArn})
		require.NoError(t, err)
		require.Equal(t, "RUNNING", d.Status)
		_, err = b.svc.ListExecutions(b.ctx, &service.ListExecutionsInput{StateMachineArn: smArn})
		requireAPIError(t, err, "StateMachineTypeNotSupported", "This operation is not supported by this type of state machine")
	})

	t.Run("Errors", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		smArn := b.create(t, "sm", passDefinition)
		big := `"` + strings.Repeat("é", 256*1024/2) + `"` // 262146 bytes
		for _, tt := range []struct {
			name    string
			in      service.StartExecutionInput
			code    string
			message string
		}{
			{"NotJSON", service.StartExecutionInput{StateMachineArn: smArn, Input: ptr("not some json")}, "InvalidExecutionInput",
				"Invalid State Machine Execution Input: 'Unrecognized token 'not': was expecting (JSON String, Number, Array, Object or token 'null', 'true' or 'false')'"},
			{"SingleQuotes", service.StartExecutionInput{StateMachineArn: smArn, Input: ptr("{'not': 'json'")}, "InvalidExecutionInput",
				"Invalid State Machine Execution Input: 'Unexpected character (''' (code 39)): was expecting double-quote to start field name'"},
			{"Empty", service.StartExecutionInput{StateMachineArn: smArn, Input: ptr("")}, "InvalidExecutionInput",
				"Invalid State Machine Execution Input: 'Invalid execution input.'"},
			{"TooBig", service.StartExecutionInput{StateMachineArn: smArn, Input: &big}, "InvalidExecutionInput", ""},
			{"BadName", service.StartExecutionInput{StateMachineArn: smArn, Name: ptr("a/b")}, "InvalidName", "Invalid Name: 'a/b'"},
			{"UnpairedSurrogate", service.StartExecutionInput{StateMachineArn: smArn, Name: ptr("\xed\xb0\x80")}, "InvalidName", "Invalid Name: '\xed\xb0\x80'"},
			{"LongName", service.StartExecutionInput{StateMachineArn: smArn, Name: ptr(strings.Repeat("n", 81))}, "ValidationException", ""},
			{"TraceHeader", service.StartExecutionInput{StateMachineArn: smArn, TraceHeader: ptr("é")}, "ValidationException",
				`1 validation error detected: Value 'é' at 'traceHeader' failed to satisfy constraint: Member must satisfy regular expression pattern: \p{ASCII}*`},
			{"Missing", service.StartExecutionInput{StateMachineArn: smPrefix + "statemachine_invalid"}, "StateMachineDoesNotExist",
				"State Machine Does Not Exist: '" + smPrefix + "statemachine_invalid'"},
			{"BadArn", service.StartExecutionInput{StateMachineArn: "sm"}, "InvalidArn", "Invalid Arn: 'Invalid ARN prefix: sm'"},
		} {
			_, err := b.svc.StartExecution(b.ctx, &tt.in)
			requireAPIError(t, err, tt.code, tt.message)
		}
		// Numbers, strings and null are inputs too.
		for _, in := range []string{"2", `"some text"`, "null"} {
			_, err := b.svc.StartExecution(b.ctx, &service.StartExecutionInput{StateMachineArn: smArn, Input: ptr(in)})
			require.NoError(t, err)
		}
	})
}

func TestStartSyncExecution(t *testing.T) {
	t.Parallel()
	b := setup(t)
	std := b.create(t, "std", passDefinition)
	_, err := b.svc.StartSyncExecution(b.ctx, &service.StartSyncExecutionInput{StateMachineArn: std})
	requireAPIError(t, err, "StateMachineTypeNotSupported", "This operation is not supported by this type of state machine")

	ex := b.create(t, "ex", passDefinition, func(in *service.CreateStateMachineInput) { in.Type = "EXPRESS" })
	out, err := b.svc.StartSyncExecution(b.ctx, &service.StartSyncExecutionInput{StateMachineArn: ex, Name: ptr("s1"), Input: ptr(`{"x":1}`)})
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(out.ExecutionArn, "arn:aws:states:us-east-1:123456789012:express:ex:s1:"))
	require.Equal(t, "SUCCEEDED", out.Status)
	require.Equal(t, `{"x":1}`, *out.Output)
	require.Equal(t, `{"x":1}`, *out.Input)
	require.True(t, out.InputDetails.Included)
	require.Equal(t, &service.BillingDetails{BilledMemoryUsedInMB: 64, BilledDurationInMilliseconds: 100}, out.BillingDetails)

	meta, err := b.svc.StartSyncExecution(b.ctx, &service.StartSyncExecutionInput{StateMachineArn: ex, IncludedData: "METADATA_ONLY"})
	require.NoError(t, err)
	require.Nil(t, meta.Input)
	require.Nil(t, meta.Output)
	require.False(t, meta.OutputDetails.Included)

	b.engine.StartSyncExecutionFunc = func(ctx context.Context, p *start.Params) (*start.SyncResult, error) {
		now := time.Now()
		return &start.SyncResult{Execution: &store.Execution{Arn: p.ExecutionArn, StateMachineArn: p.StateMachine.Arn, Name: p.Name,
			Status: history.StatusAborted, Input: p.Input, StartDate: now, StopDate: &now, Error: ptr("E")}}, nil
	}
	failed, err := b.svc.StartSyncExecution(b.ctx, &service.StartSyncExecutionInput{StateMachineArn: ex})
	require.NoError(t, err)
	require.Equal(t, "FAILED", failed.Status)
	require.Equal(t, "E", *failed.Error)
	require.Nil(t, failed.Output)
}

func TestDescribeExecution(t *testing.T) {
	t.Parallel()
	b := setup(t)
	smArn := b.create(t, "sm", passDefinition)
	arn := b.start(t, smArn, "x", `{}`)

	d, err := b.svc.DescribeExecution(b.ctx, &service.DescribeExecutionInput{ExecutionArn: arn})
	require.NoError(t, err)
	require.JSONEq(t, `{
		"executionArn": "`+arn+`", "stateMachineArn": "`+smArn+`", "name": "x", "status": "RUNNING",
		"startDate": `+toJSON(t, d.StartDate)+`, "input": "{}", "inputDetails": {"included": true},
		"redriveCount": 0, "redriveStatus": "NOT_REDRIVABLE", "redriveStatusReason": "Execution is RUNNING and cannot be redriven"
	}`, toJSON(t, d))

	_, err = servicetest.Finish(b.ctx, b.drv, arn, history.StatusSucceeded, ptr(`{"Arg1":"argument1"}`), nil, nil, time.Now())
	require.NoError(t, err)
	d, err = b.svc.DescribeExecution(b.ctx, &service.DescribeExecutionInput{ExecutionArn: arn})
	require.NoError(t, err)
	require.Equal(t, "SUCCEEDED", d.Status)
	require.Equal(t, `{"Arg1":"argument1"}`, *d.Output)
	require.True(t, d.OutputDetails.Included)
	require.NotNil(t, d.StopDate)
	require.Equal(t, "Execution is SUCCEEDED and cannot be redriven", *d.RedriveStatusReason)

	failed := b.start(t, smArn, "f", `{}`)
	_, err = servicetest.Finish(b.ctx, b.drv, failed, history.StatusFailed, nil, ptr("SomeFailure"), ptr("boom"), time.Now())
	require.NoError(t, err)
	d, err = b.svc.DescribeExecution(b.ctx, &service.DescribeExecutionInput{ExecutionArn: failed, IncludedData: "METADATA_ONLY"})
	require.NoError(t, err)
	require.Equal(t, "REDRIVABLE", d.RedriveStatus)
	require.Nil(t, d.RedriveStatusReason)
	require.Equal(t, "SomeFailure", *d.Error)
	require.Equal(t, "boom", *d.Cause)
	require.Nil(t, d.Input)
	require.False(t, d.InputDetails.Included)

	for _, tt := range []struct{ arn, code, message string }{
		{"invalid_execution_arn", "InvalidArn", "Invalid Arn: 'Invalid ARN prefix: invalid_execution_arn'"},
		{execPrefix + "sm:missing", "ExecutionDoesNotExist", "Execution Does Not Exist: '" + execPrefix + "sm:missing'"},
		{"arn:aws:states:eu-west-1:123456789012:execution:sm:x", "ExecutionDoesNotExist", ""},
		{smArn, "InvalidArn", "Invalid Arn: 'Resource type not valid in this context: statemachine'"},
		{execPrefix + "sm", "InvalidArn", ""},
	} {
		_, err := b.svc.DescribeExecution(b.ctx, &service.DescribeExecutionInput{ExecutionArn: tt.arn})
		requireAPIError(t, err, tt.code, tt.message)
	}
}

func TestDescribeStateMachineForExecution(t *testing.T) {
	t.Parallel()
	b := setup(t)
	def := `{"StartAt": "A", "States": {"A": {"Type": "Pass", "Assign": {"v": 1}, "Next": "B"}, "B": {"Type": "Pass", "InputPath": "$v", "End": true}}}`
	smArn := b.create(t, "sm", def)
	arn := b.start(t, smArn, "x", `{}`)
	_, err := b.svc.UpdateStateMachine(b.ctx, &service.UpdateStateMachineInput{StateMachineArn: smArn, Definition: ptr(passDefinition)})
	require.NoError(t, err)

	d, err := b.svc.DescribeStateMachineForExecution(b.ctx, &service.DescribeStateMachineForExecutionInput{ExecutionArn: arn})
	require.NoError(t, err)
	require.Equal(t, def, d.Definition) // the revision the execution runs
	require.Equal(t, "sm", d.Name)
	require.Equal(t, roleArn, d.RoleArn)
	require.Empty(t, d.RevisionID) // the first revision has none
	require.Equal(t, service.VariableReferences{"B": {"v"}}, d.VariableReferences)
	require.JSONEq(t, `{"level": "OFF", "includeExecutionData": false}`, toJSON(t, d.LoggingConfiguration))

	// It still answers once the state machine is gone.
	_, err = b.svc.DeleteStateMachine(b.ctx, &service.DeleteStateMachineInput{StateMachineArn: smArn})
	require.NoError(t, err)
	d, err = b.svc.DescribeStateMachineForExecution(b.ctx, &service.DescribeStateMachineForExecutionInput{ExecutionArn: arn})
	require.NoError(t, err)
	require.Equal(t, "sm", d.Name)
}

func TestListExecutions(t *testing.T) {
	t.Parallel()
	b := setup(t)
	smArn := b.create(t, "sm", passDefinition)
	other := b.create(t, "other", passDefinition)
	b.start(t, other, "o", `{}`)
	var arns []string
	for _, name := range []string{"e1", "e2", "e3", "e4", "e5"} {
		arns = append(arns, b.start(t, smArn, name, `{}`))
	}
	_, err := servicetest.Finish(b.ctx, b.drv, arns[1], history.StatusSucceeded, ptr(`{}`), nil, nil, time.Now())
	require.NoError(t, err)
	_, err = b.svc.RedriveExecution(b.ctx, &service.RedriveExecutionInput{ExecutionArn: arns[2]})
	requireAPIError(t, err, "ExecutionNotRedrivable", "")

	var names []string
	var token *string
	for {
		out, err := b.svc.ListExecutions(b.ctx, &service.ListExecutionsInput{StateMachineArn: smArn, MaxResults: ptr(2), NextToken: token})
		require.NoError(t, err)
		for _, x := range out.Executions {
			names = append(names, x.Name)
		}
		if out.NextToken == "" {
			break
		}
		token = &out.NextToken
	}
	require.Equal(t, []string{"e5", "e4", "e3", "e2", "e1"}, names) // newest first

	out, err := b.svc.ListExecutions(b.ctx, &service.ListExecutionsInput{StateMachineArn: smArn, StatusFilter: "SUCCEEDED"})
	require.NoError(t, err)
	require.Len(t, out.Executions, 1)
	require.Equal(t, "e2", out.Executions[0].Name)
	require.NotNil(t, out.Executions[0].StopDate)
	require.JSONEq(t, `{"executionArn": "`+arns[1]+`", "stateMachineArn": "`+smArn+`", "name": "e2", "status": "SUCCEEDED",
		"startDate": `+toJSON(t, out.Executions[0].StartDate)+`, "stopDate": `+toJSON(t, out.Executions[0].StopDate)+`}`,
		toJSON(t, out.Executions[0]))

	// A token belongs to its list.
	page, err := b.svc.ListExecutions(b.ctx, &service.ListExecutionsInput{StateMachineArn: smArn, MaxResults: ptr(1)})
	require.NoError(t, err)
	_, err = b.svc.ListExecutions(b.ctx, &service.ListExecutionsInput{StateMachineArn: other, NextToken: &page.NextToken})
	requireAPIError(t, err, "InvalidToken", "")

	_, err = b.svc.ListExecutions(b.ctx, &service.ListExecutionsInput{StateMachineArn: smArn, StatusFilter: "succeeded"})
	requireAPIError(t, err, "ValidationException", "1 validation error detected: Value 'succeeded' at 'statusFilter' failed to satisfy constraint: Member must satisfy enum value set: [SUCCEEDED, TIMED_OUT, PENDING_REDRIVE, ABORTED, FAILED, RUNNING]")
	_, err = b.svc.ListExecutions(b.ctx, &service.ListExecutionsInput{StateMachineArn: smPrefix + "ssm_nonexistent"})
	requireAPIError(t, err, "StateMachineDoesNotExist", "State Machine Does Not Exist: '"+smPrefix+"ssm_nonexistent'")
	_, err = b.svc.ListExecutions(b.ctx, &service.ListExecutionsInput{StateMachineArn: "invalid_state_machine_arn"})
	requireAPIError(t, err, "InvalidArn", "Invalid Arn: 'Invalid ARN prefix: invalid_state_machine_arn'")
	_, err = b.svc.ListExecutions(b.ctx, &service.ListExecutionsInput{})
	requireAPIError(t, err, "ValidationException", "")
	_, err = b.svc.ListExecutions(b.ctx, &service.ListExecutionsInput{StateMachineArn: smArn, NextToken: ptr(strings.Repeat("x", 3097))})
	requireAPIError(t, err, "ValidationException", "")
}

func TestStopAndRedriveExecution(t *testing.T) {
	t.Parallel()
	b := setup(t)
	smArn := b.create(t, "sm", passDefinition)
	arn := b.start(t, smArn, "x", `{}`)

	stop, err := b.svc.StopExecution(b.ctx, &service.StopExecutionInput{ExecutionArn: arn, Error: ptr("Err"), Cause: ptr("why")})
	require.NoError(t, err)
	d, err := b.svc.DescribeExecution(b.ctx, &service.DescribeExecutionInput{ExecutionArn: arn})
	require.NoError(t, err)
	require.Equal(t, "ABORTED", d.Status)
	require.Equal(t, stop.StopDate, *d.StopDate)
	require.Equal(t, "Err", *d.Error)
	require.Equal(t, "REDRIVABLE", d.RedriveStatus)

	// Stopping again changes nothing.
	again, err := b.svc.StopExecution(b.ctx, &service.StopExecutionInput{ExecutionArn: arn})
	require.NoError(t, err)
	require.Equal(t, stop.StopDate, again.StopDate)

	red, err := b.svc.RedriveExecution(b.ctx, &service.RedriveExecutionInput{ExecutionArn: arn, ClientToken: ptr("tok")})
	require.NoError(t, err)
	d, err = b.svc.DescribeExecution(b.ctx, &service.DescribeExecutionInput{ExecutionArn: arn})
	require.NoError(t, err)
	require.Equal(t, "RUNNING", d.Status)
	require.Equal(t, 1, d.RedriveCount)
	require.Equal(t, red.RedriveDate, *d.RedriveDate)
	// Listed with its redrive count once redriven (AWS lists none before).
	list, err := b.svc.ListExecutions(b.ctx, &service.ListExecutionsInput{StateMachineArn: d.StateMachineArn})
	require.NoError(t, err)
	require.Contains(t, toJSON(t, list.Executions[0]), `"redriveCount":1`)

	_, err = b.svc.RedriveExecution(b.ctx, &service.RedriveExecutionInput{ExecutionArn: arn})
	requireAPIError(t, err, "ExecutionNotRedrivable", "Execution '"+arn+"' cannot be redriven: Execution is RUNNING and cannot be redriven")
	_, err = b.svc.RedriveExecution(b.ctx, &service.RedriveExecutionInput{ExecutionArn: arn, ClientToken: ptr("a b")})
	requireAPIError(t, err, "ValidationException", "")
	_, err = b.svc.StopExecution(b.ctx, &service.StopExecutionInput{ExecutionArn: execPrefix + "sm:nope"})
	requireAPIError(t, err, "ExecutionDoesNotExist", "")
	_, err = b.svc.StopExecution(b.ctx, &service.StopExecutionInput{ExecutionArn: arn, Error: ptr(strings.Repeat("e", 257))})
	requireAPIError(t, err, "ValidationException", "1 validation error detected: Value '***' at 'error' failed to satisfy constraint: Member must have length less than or equal to 256")

	// The engine's API errors reach the client as they are.
	b.engine.RedriveExecutionFunc = func(context.Context, string) (*store.Execution, error) {
		return nil, sfnapi.NewError(sfnapi.CodeExecutionLimitExceeded, "too many")
	}
	failed := b.start(t, smArn, "f", `{}`)
	_, err = servicetest.Finish(b.ctx, b.drv, failed, history.StatusFailed, nil, nil, nil, time.Now())
	require.NoError(t, err)
	_, err = b.svc.RedriveExecution(b.ctx, &service.RedriveExecutionInput{ExecutionArn: failed})
	requireAPIError(t, err, "ExecutionLimitExceeded", "too many")
}

func TestGetExecutionHistory(t *testing.T) {
	t.Parallel()
	b := setup(t)
	smArn := b.create(t, "sm", passDefinition)
	arn := b.start(t, smArn, "x", `{"in": 1}`)
	now := time.Now()
	require.NoError(t, servicetest.AppendEvents(b.ctx, b.drv, arn,
		history.Event{Timestamp: now, Type: history.StateEnteredType("Pass"),
			StateEnteredEventDetails: &history.StateEnteredEventDetails{Name: "State_1", Input: `{"in": 1}`}},
		history.Event{Timestamp: now, Type: history.StateExitedType("Pass"),
			StateExitedEventDetails: &history.StateExitedEventDetails{Name: "State_1", Output: `{"Arg1":"argument1"}`}},
	))
	_, err := servicetest.Finish(b.ctx, b.drv, arn, history.StatusSucceeded, ptr(`{"Arg1":"argument1"}`), nil, nil, now)
	require.NoError(t, err)

	ids := func(events []json.RawMessage) []int64 {
		var out []int64
		for _, e := range events {
			var ev struct {
				ID int64 `json:"id"`
			}
			require.NoError(t, json.Unmarshal(e, &ev))
			out = append(out, ev.ID)
		}
		return out
	}
	page := func(reverse bool) []int64 {
		var all []int64
		var token *string
		for {
			out, err := b.svc.GetExecutionHistory(b.ctx, &service.GetExecutionHistoryInput{ExecutionArn: arn, MaxResults: ptr(3), ReverseOrder: reverse, NextToken: token})
			require.NoError(t, err)
			all = append(all, ids(out.Events)...)
			if out.NextToken == "" {
				return all
			}
			token = &out.NextToken
		}
	}
	require.Equal(t, []int64{1, 2, 3, 4}, page(false))
	require.Equal(t, []int64{4, 3, 2, 1}, page(true))

	full, err := b.svc.GetExecutionHistory(b.ctx, &service.GetExecutionHistoryInput{ExecutionArn: arn})
	require.NoError(t, err)
	require.Len(t, full.Events, 4)
	require.Contains(t, string(full.Events[1]), `"input":"{\"in\": 1}"`)
	require.Contains(t, string(full.Events[0]), `"type":"ExecutionStarted"`)

	bare, err := b.svc.GetExecutionHistory(b.ctx, &service.GetExecutionHistoryInput{ExecutionArn: arn, IncludeExecutionData: ptr(false)})
	require.NoError(t, err)
	for _, e := range bare.Events {
		require.NotContains(t, string(e), `"input"`)
		require.NotContains(t, string(e), `"output"`)
	}
	require.Contains(t, string(bare.Events[1]), `"inputDetails"`)

	// A forward token does not page a reversed history.
	fwd, err := b.svc.GetExecutionHistory(b.ctx, &service.GetExecutionHistoryInput{ExecutionArn: arn, MaxResults: ptr(1)})
	require.NoError(t, err)
	_, err = b.svc.GetExecutionHistory(b.ctx, &service.GetExecutionHistoryInput{ExecutionArn: arn, ReverseOrder: true, NextToken: &fwd.NextToken})
	requireAPIError(t, err, "InvalidToken", "")
	_, err = b.svc.GetExecutionHistory(b.ctx, &service.GetExecutionHistoryInput{ExecutionArn: execPrefix + "sm:invalid_execution_arn"})
	requireAPIError(t, err, "ExecutionDoesNotExist", "Execution Does Not Exist: '"+execPrefix+"sm:invalid_execution_arn'")
	_, err = b.svc.GetExecutionHistory(b.ctx, &service.GetExecutionHistoryInput{ExecutionArn: "invalid_state_machine_arn"})
	requireAPIError(t, err, "InvalidArn", "Invalid Arn: 'Invalid ARN prefix: invalid_state_machine_arn'")
}

func TestTags(t *testing.T) {
	t.Parallel()
	b := setup(t)
	arn := b.create(t, "sm", passDefinition)

	_, err := b.svc.TagResource(b.ctx, &service.TagResourceInput{ResourceArn: arn, Tags: []service.Tag{{Key: ptr("key2"), Value: ptr("value2")}, {Key: ptr("key1"), Value: ptr("")}}})
	require.NoError(t, err)
	_, err = b.svc.TagResource(b.ctx, &service.TagResourceInput{ResourceArn: arn, Tags: []service.Tag{{Key: ptr("key1"), Value: ptr("value1")}}})
	require.NoError(t, err)
	out, err := b.svc.ListTagsForResource(b.ctx, &service.ListTagsForResourceInput{ResourceArn: arn})
	require.NoError(t, err)
	require.JSONEq(t, `{"tags": [{"key": "key1", "value": "value1"}, {"key": "key2", "value": "value2"}]}`, toJSON(t, out))

	_, err = b.svc.UntagResource(b.ctx, &service.UntagResourceInput{ResourceArn: arn, TagKeys: []string{"key2", "nope"}})
	require.NoError(t, err)
	out, err = b.svc.ListTagsForResource(b.ctx, &service.ListTagsForResourceInput{ResourceArn: arn})
	require.NoError(t, err)
	require.JSONEq(t, `{"tags": [{"key": "key1", "value": "value1"}]}`, toJSON(t, out))

	_, err = b.svc.TagResource(b.ctx, &service.TagResourceInput{ResourceArn: arn, Tags: manyTags(50)})
	requireAPIError(t, err, "TooManyTags", "")
	_, err = b.svc.TagResource(b.ctx, &service.TagResourceInput{ResourceArn: arn, Tags: manyTags(49)})
	require.NoError(t, err)

	_, err = b.svc.TagResource(b.ctx, &service.TagResourceInput{ResourceArn: arn + ":1", Tags: manyTags(1)})
	requireAPIError(t, err, "ResourceNotFound", "Resource not found: '"+arn+":1'")
	_, err = b.svc.ListTagsForResource(b.ctx, &service.ListTagsForResourceInput{ResourceArn: smPrefix + "missing"})
	requireAPIError(t, err, "ResourceNotFound", "")
	_, err = b.svc.ListTagsForResource(b.ctx, &service.ListTagsForResourceInput{ResourceArn: execPrefix + "sm:x"})
	requireAPIError(t, err, "InvalidArn", "")
	_, err = b.svc.TagResource(b.ctx, &service.TagResourceInput{ResourceArn: arn})
	requireAPIError(t, err, "ValidationException", "1 validation error detected: Value null at 'tags' failed to satisfy constraint: Member must not be null")
	_, err = b.svc.UntagResource(b.ctx, &service.UntagResourceInput{ResourceArn: arn, TagKeys: []string{strings.Repeat("k", 129)}})
	requireAPIError(t, err, "ValidationException", "")
}

func TestTestStateHook(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, err := b.svc.RunTestState(b.ctx, &service.TestStateInput{Definition: `{}`})
	requireAPIError(t, err, "UnsupportedOperation", "")

	b.svc.TestState = func(_ context.Context, in *service.TestStateInput) (*service.TestStateOutput, error) {
		return &service.TestStateOutput{Status: "SUCCEEDED", Output: in.Input}, nil
	}
	out, err := b.svc.RunTestState(b.ctx, &service.TestStateInput{Definition: `{"Type": "Pass", "End": true}`, Input: ptr(`{"a":1}`)})
	require.NoError(t, err)
	require.Equal(t, `{"a":1}`, *out.Output)
	_, err = b.svc.RunTestState(b.ctx, &service.TestStateInput{Definition: `{}`, InspectionLevel: "ALL"})
	requireAPIError(t, err, "ValidationException", "")
}

// Every list operation echoes a pagination token that is too long in
// full, with its own limit (ListExecutions' tokens are longer).
func TestListTokenTooLong(t *testing.T) {
	t.Parallel()
	b := setup(t)
	sm := b.create(t, "lists", passDefinition)
	x := execPrefix + "lists:x"
	for _, tt := range []struct {
		name string
		max  int
		call func(token *string) error
	}{
		{"ListExecutions", 3096, func(tok *string) error {
			_, err := b.svc.ListExecutions(b.ctx, &service.ListExecutionsInput{StateMachineArn: sm, NextToken: tok})
			return err
		}},
		{"ListStateMachines", 1024, func(tok *string) error {
			_, err := b.svc.ListStateMachines(b.ctx, &service.ListStateMachinesInput{NextToken: tok})
			return err
		}},
		{"ListActivities", 1024, func(tok *string) error {
			_, err := b.svc.ListActivities(b.ctx, &service.ListActivitiesInput{NextToken: tok})
			return err
		}},
		{"ListMapRuns", 1024, func(tok *string) error {
			_, err := b.svc.ListMapRuns(b.ctx, &service.ListMapRunsInput{ExecutionArn: x, NextToken: tok})
			return err
		}},
		{"ListStateMachineVersions", 1024, func(tok *string) error {
			_, err := b.svc.ListStateMachineVersions(b.ctx, &service.ListStateMachineVersionsInput{StateMachineArn: sm, NextToken: tok})
			return err
		}},
		{"ListStateMachineAliases", 1024, func(tok *string) error {
			_, err := b.svc.ListStateMachineAliases(b.ctx, &service.ListStateMachineAliasesInput{StateMachineArn: sm, NextToken: tok})
			return err
		}},
		{"GetExecutionHistory", 1024, func(tok *string) error {
			_, err := b.svc.GetExecutionHistory(b.ctx, &service.GetExecutionHistoryInput{ExecutionArn: x, NextToken: tok})
			return err
		}},
	} {
		long := strings.Repeat("t", tt.max+1)
		requireAPIError(t, tt.call(&long), "ValidationException", fmt.Sprintf(
			"1 validation error detected: Value '%s' at 'nextToken' failed to satisfy constraint: Member must have length less than or equal to %d", long, tt.max))
		empty := ""
		requireAPIError(t, tt.call(&empty), "ValidationException",
			"1 validation error detected: Value '' at 'nextToken' failed to satisfy constraint: Member must have length greater than or equal to 1")
	}
}
