package service_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/engine/task"
	"stepwise/failure"
	"stepwise/history"
	"stepwise/internal/testkit/testwait"
	"stepwise/service"
)

func TestRerunExecutionPreviewsThenRunsOnACorrectedDefinition(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc, tasks := realEngine(t)
	def := `{"StartAt": "A", "States": {"A": {"Type": "Pass", "Next": "T"},
		"T": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "End": true}}}`
	fixed := `{"StartAt": "A", "States": {"A": {"Type": "Pass", "Next": "T"},
		"T": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "Parameters": {"fixed": true}, "Next": "N"},
		"N": {"Type": "Pass", "End": true}}}`
	sm, err := svc.CreateStateMachine(ctx, &service.CreateStateMachineInput{Name: "night", Definition: def, RoleArn: roleArn})
	require.NoError(t, err)
	x, err := svc.StartExecution(ctx, &service.StartExecutionInput{StateMachineArn: sm.StateMachineArn})
	require.NoError(t, err)
	testwait.Until(t, func() bool { return tasks.count() == 1 }, 10*time.Second, 5*time.Millisecond)
	tasks.mu.Lock()
	for _, done := range tasks.pending {
		go done(task.Result{Failure: failure.New("Broken", "fix")})
	}
	clear(tasks.pending)
	tasks.mu.Unlock()
	testwait.Until(t, func() bool {
		d, err := svc.DescribeExecution(ctx, &service.DescribeExecutionInput{ExecutionArn: x.ExecutionArn})
		return err == nil && d.Status == "FAILED"
	}, 10*time.Second, 5*time.Millisecond)

	_, err = svc.RerunExecution(ctx, &service.RerunExecutionInput{ExecutionArn: x.ExecutionArn, From: "STATE:Nope", DryRun: true})
	require.ErrorContains(t, err, "The rerun is refused: the state 'Nope' does not exist in the definition")
	_, err = svc.RerunExecution(ctx, &service.RerunExecutionInput{ExecutionArn: x.ExecutionArn, From: "SIDEWAYS"})
	require.ErrorContains(t, err, "want FAILED, NEXT, TOP, WARNINGS or STATE:NAME")

	p, err := svc.RerunExecution(ctx, &service.RerunExecutionInput{ExecutionArn: x.ExecutionArn, From: "FAILED", Definition: fixed, DryRun: true})
	require.NoError(t, err)
	require.Equal(t, []string{"N"}, p.Added)
	require.Equal(t, []string{"T"}, p.Changed)
	require.Equal(t, []string{"A"}, p.Keep)
	require.Equal(t, []string{"T"}, p.Rerun)
	require.Nil(t, p.RedriveDate)

	done, err := svc.RerunExecution(ctx, &service.RerunExecutionInput{ExecutionArn: x.ExecutionArn, From: "FAILED", Definition: fixed})
	require.NoError(t, err)
	require.NotNil(t, done.RedriveDate)
	d, err := svc.DescribeExecution(ctx, &service.DescribeExecutionInput{ExecutionArn: x.ExecutionArn})
	require.NoError(t, err)
	require.Equal(t, "RUNNING", string(d.Status))
	require.Equal(t, 1, d.RedriveCount)
	testwait.Until(t, func() bool { return tasks.count() == 1 }, 10*time.Second, 5*time.Millisecond)
}

func TestRerunAndRedriveAreInTheOperatorLog(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc, tasks := realEngine(t)
	def := `{"StartAt": "T", "States": {"T": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "End": true}}}`
	sm, err := svc.CreateStateMachine(ctx, &service.CreateStateMachineInput{Name: "night", Definition: def, RoleArn: roleArn})
	require.NoError(t, err)
	x, err := svc.StartExecution(ctx, &service.StartExecutionInput{StateMachineArn: sm.StateMachineArn})
	require.NoError(t, err)
	fail := func() {
		t.Helper()
		testwait.Until(t, func() bool { return tasks.count() == 1 }, 10*time.Second, 5*time.Millisecond)
		tasks.mu.Lock()
		for _, done := range tasks.pending {
			go done(task.Result{Failure: failure.New("Broken", "fix")})
		}
		clear(tasks.pending)
		tasks.mu.Unlock()
		testwait.Until(t, func() bool {
			d, err := svc.DescribeExecution(ctx, &service.DescribeExecutionInput{ExecutionArn: x.ExecutionArn})
			return err == nil && d.Status == "FAILED"
		}, 10*time.Second, 5*time.Millisecond)
	}
	fail()
	_, err = svc.RerunExecution(ctx, &service.RerunExecutionInput{ExecutionArn: x.ExecutionArn, From: "TOP", By: "ops", DryRun: true})
	require.NoError(t, err)
	_, err = svc.RerunExecution(ctx, &service.RerunExecutionInput{ExecutionArn: x.ExecutionArn, From: "NEXT", Output: `{"rows":0}`, Definition: def, By: "ops"})
	require.NoError(t, err)
	// NEXT of the last state ends the execution.
	testwait.Until(t, func() bool {
		d, err := svc.DescribeExecution(ctx, &service.DescribeExecutionInput{ExecutionArn: x.ExecutionArn})
		return err == nil && d.Status == "SUCCEEDED"
	}, 10*time.Second, 5*time.Millisecond)
	log, err := svc.ListOperatorActions(ctx, &service.ListOperatorActionsInput{ExecutionArn: x.ExecutionArn})
	require.NoError(t, err)
	require.Len(t, log.Actions, 1, "a dry run is not logged")
	a := log.Actions[0]
	require.NotZero(t, a.Date)
	a.Date = history.EpochTime{}
	require.Equal(t, service.OperatorAction{By: "ops", Action: "Rerun", Mode: "NEXT", Output: `{"rows":0}`, Definition: def}, a)

	x, err = svc.StartExecution(ctx, &service.StartExecutionInput{StateMachineArn: sm.StateMachineArn, Name: ptr("second")})
	require.NoError(t, err)
	fail()
	_, err = svc.RedriveExecution(ctx, &service.RedriveExecutionInput{ExecutionArn: x.ExecutionArn, By: "night-shift"})
	require.NoError(t, err)
	fail()
	_, err = svc.RedriveExecution(ctx, &service.RedriveExecutionInput{ExecutionArn: x.ExecutionArn})
	require.NoError(t, err)

	log, err = svc.ListOperatorActions(ctx, &service.ListOperatorActionsInput{ExecutionArn: x.ExecutionArn})
	require.NoError(t, err)
	require.Len(t, log.Actions, 1, "a redrive with no caller is not an operator's")
	require.Equal(t, "night-shift", log.Actions[0].By)
	require.Equal(t, "Redrive", log.Actions[0].Action)
}
