package service_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/service"
)

// An execution's operator status: the holds it started with (its state
// machine's hold tags) and those placed since, less those released, and
// whether it is suspended.
func TestExecutionOperatorStatus(t *testing.T) {
	t.Parallel()
	svc, _ := realEngine(t)
	ctx := context.Background()
	sm, err := svc.CreateStateMachine(ctx, &service.CreateStateMachineInput{Name: "net", Definition: `{"StartAt": "W", "States": {
		"W": {"Type": "Wait", "Seconds": 30, "Next": "T"},
		"T": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "Next": "U"},
		"U": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "End": true}}}`, RoleArn: roleArn})
	require.NoError(t, err)
	_, err = svc.HoldState(ctx, &service.HoldStateInput{Arn: sm.StateMachineArn, State: "T", By: "alice"})
	require.NoError(t, err)
	x, err := svc.StartExecution(ctx, &service.StartExecutionInput{StateMachineArn: sm.StateMachineArn})
	require.NoError(t, err)

	st, err := svc.ExecutionOperatorStatus(ctx, x.ExecutionArn)
	require.NoError(t, err)
	require.Equal(t, []string{"T"}, st.Held)
	require.False(t, st.Suspended)
	require.Empty(t, st.Actions)

	_, err = svc.HoldState(ctx, &service.HoldStateInput{Arn: x.ExecutionArn, State: "U", By: "bob"})
	require.NoError(t, err)
	_, err = svc.SuspendExecution(ctx, &service.ExecutionControlInput{ExecutionArn: x.ExecutionArn, By: "bob"})
	require.NoError(t, err)
	st, err = svc.ExecutionOperatorStatus(ctx, x.ExecutionArn)
	require.NoError(t, err)
	require.Equal(t, []string{"T", "U"}, st.Held)
	require.True(t, st.Suspended)
	require.Len(t, st.Actions, 2)

	_, err = svc.ReleaseState(ctx, &service.HoldStateInput{Arn: x.ExecutionArn, State: "T", By: "bob"})
	require.NoError(t, err)
	_, err = svc.ResumeExecution(ctx, &service.ExecutionControlInput{ExecutionArn: x.ExecutionArn, By: "bob"})
	require.NoError(t, err)
	st, err = svc.ExecutionOperatorStatus(ctx, x.ExecutionArn)
	require.NoError(t, err)
	require.Equal(t, []string{"U"}, st.Held)
	require.False(t, st.Suspended)
	require.Len(t, st.Actions, 4)

	_, err = svc.ExecutionOperatorStatus(ctx, x.ExecutionArn+"x")
	require.ErrorContains(t, err, "ExecutionDoesNotExist")
}
