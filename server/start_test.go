package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/history"
	_ "stepwise/integration/sfn"
	"stepwise/internal/testkit/testwait"
	"stepwise/scheduler"
	"stepwise/service"
	"stepwise/sfnapi"
	"stepwise/store"
)

// startBundle is a server's store and service, with the scheduler's
// Starter and the aws-sdk:sfn integration as New wires them.
type startBundle struct {
	drv     store.Driver
	svc     *service.Service
	starter scheduler.Starter
}

func setupStarts(t *testing.T) *startBundle {
	t.Helper()
	s := newAPIParts(t).api(t, false, nil)
	return &startBundle{drv: s.Store(), svc: s.Service(), starter: s.starts}
}

func (b *startBundle) create(t *testing.T, name, def string) *service.CreateStateMachineOutput {
	t.Helper()
	out, err := b.svc.CreateStateMachine(context.Background(), &service.CreateStateMachineInput{
		Name: name, Definition: def, RoleArn: "arn:aws:iam::123456789012:role/r", Publish: true,
	})
	require.NoError(t, err)
	return out
}

func (b *startBundle) wait(t *testing.T, arn string) *store.Execution {
	t.Helper()
	var row *store.Execution
	testwait.Until(t, func() bool {
		var err error
		row, err = b.drv.Executor().ExecutionGet(context.Background(), arn)
		if errors.Is(err, store.ErrNotFound) {
			return false
		}
		require.NoError(t, err)
		return row.Status != history.StatusRunning
	}, 30*time.Second, 5*time.Millisecond, "execution %s never ended", arn)
	return row
}

// A slot's start (the scheduler's Starter) and a Task's aws-sdk:sfn
// startExecution go the same way in: on an alias, both executions record
// the alias and the version it picked; on a state machine that does not
// exist, both are refused with the typed StateMachineDoesNotExist.
func TestSchedulerAndSdkStartsResolveAlike(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupStarts(t)
	target := b.create(t, "target", `{"StartAt": "P", "States": {"P": {"Type": "Pass", "End": true}}}`)
	weight := 100
	alias, err := b.svc.CreateStateMachineAlias(ctx, &service.CreateStateMachineAliasInput{Name: "live",
		RoutingConfiguration: []service.RoutingConfigurationListItem{{StateMachineVersionArn: target.StateMachineVersionArn, Weight: &weight}}})
	require.NoError(t, err)
	missing := target.StateMachineArn + "-gone"

	// The scheduler.
	name := "slot-1"
	require.NoError(t, b.starter.StartExecution(ctx, &scheduler.StartExecution{StateMachineArn: alias.StateMachineAliasArn, Name: &name}))
	row := b.wait(t, "arn:aws:states:us-east-1:123456789012:execution:target:slot-1")
	require.Equal(t, alias.StateMachineAliasArn, row.AliasArn)
	require.Equal(t, target.StateMachineVersionArn, row.VersionArn)
	err = b.starter.StartExecution(ctx, &scheduler.StartExecution{StateMachineArn: missing, Name: &name})
	var refused *sfnapi.Error
	require.ErrorAs(t, err, &refused)
	require.Equal(t, sfnapi.CodeStateMachineDoesNotExist, refused.Code)
	require.Equal(t, "State Machine Does Not Exist: '"+missing+"'", refused.Message)

	// aws-sdk:sfn.
	caller := b.create(t, "caller", `{"StartAt": "Start", "States": {"Start": {"Type": "Task",
		"Resource": "arn:aws:states:::aws-sdk:sfn:startExecution", "Parameters": {"StateMachineArn.$": "$.arn", "Name": "sdk-1"}, "End": true}}}`)
	start := func(arn string) *store.Execution {
		body, err := json.Marshal(map[string]string{"arn": arn})
		require.NoError(t, err)
		input := string(body)
		out, err := b.svc.StartExecution(ctx, &service.StartExecutionInput{StateMachineArn: caller.StateMachineArn, Input: &input})
		require.NoError(t, err)
		return b.wait(t, out.ExecutionArn)
	}
	ok := start(alias.StateMachineAliasArn)
	require.Equal(t, history.StatusSucceeded, ok.Status, ok.Cause)
	row = b.wait(t, "arn:aws:states:us-east-1:123456789012:execution:target:sdk-1")
	require.Equal(t, alias.StateMachineAliasArn, row.AliasArn)
	require.Equal(t, target.StateMachineVersionArn, row.VersionArn)
	failed := start(missing)
	require.Equal(t, history.StatusFailed, failed.Status)
	require.Equal(t, "Sfn.StateMachineDoesNotExistException", *failed.Error)
	require.Regexp(t, `^State Machine Does Not Exist: '`+missing+`' \(Service: Sfn, Status Code: 400, Request ID: [0-9a-f-]{36}\)$`, *failed.Cause)
}

// The server's own calls count in /metrics as a client's do: an
// aws-sdk:sfn Task's call, and a schedule's start, refused or not.
func TestOwnCallsCounted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newAPIParts(t).api(t, true, nil)
	b := &startBundle{drv: s.Store(), svc: s.Service(), starter: s.starts}
	target := b.create(t, "target", `{"StartAt": "P", "States": {"P": {"Type": "Pass", "End": true}}}`)
	caller := b.create(t, "caller", `{"StartAt": "L", "States": {"L": {"Type": "Task",
		"Resource": "arn:aws:states:::aws-sdk:sfn:listActivities", "End": true}}}`)
	out, err := b.svc.StartExecution(ctx, &service.StartExecutionInput{StateMachineArn: caller.StateMachineArn})
	require.NoError(t, err)
	require.Equal(t, history.StatusSucceeded, b.wait(t, out.ExecutionArn).Status)

	name := "slot-1"
	require.NoError(t, b.starter.StartExecution(ctx, &scheduler.StartExecution{StateMachineArn: target.StateMachineArn, Name: &name}))
	missing := target.StateMachineArn + "-gone"
	require.Error(t, b.starter.StartExecution(ctx, &scheduler.StartExecution{StateMachineArn: missing, Name: &name}))

	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://localhost/metrics", nil))
	require.Equal(t, http.StatusOK, rec.Code)
	body := rec.Body.String()
	require.Contains(t, body, `stepwise_api_requests_total{code="200",operation="ListActivities"} 1`)
	require.Contains(t, body, `stepwise_api_requests_total{code="200",operation="StartExecution"} 1`)
	require.Contains(t, body, `stepwise_api_requests_total{code="400",operation="StartExecution"} 1`)
}
