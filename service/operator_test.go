package service_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/engine"
	"stepwise/engine/task"
	"stepwise/internal/testkit/testwait"
	"stepwise/service"
	"stepwise/sfnapi"
	"stepwise/store/sqlitestore"
)

// heldTasks is a task runner whose tasks wait until the test answers them.
type heldTasks struct {
	mu      sync.Mutex
	pending map[string]func(task.Result)
}

func (h *heldTasks) Run(_ context.Context, t *task.Task, done func(task.Result)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.pending[t.ExecutionArn+"/"+t.ID] = done
}

func (h *heldTasks) Cancel(arn, id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.pending, arn+"/"+id)
}

func (h *heldTasks) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.pending)
}

// realEngine is a service on a real engine over a SQLite file.
func realEngine(t *testing.T) (*service.Service, *heldTasks) {
	t.Helper()
	ctx := context.Background()
	drv, err := sqlitestore.Open(ctx, filepath.Join(t.TempDir(), "s.db"), sqlitestore.Options{})
	require.NoError(t, err)
	tasks := &heldTasks{pending: map[string]func(task.Result){}}
	e, err := engine.New(drv, engine.Config{Region: "us-east-1", Account: "123456789012", Tasks: tasks, TokenKey: []byte("key"), WaitTimeScale: 1})
	require.NoError(t, err)
	require.NoError(t, e.Start(ctx))
	<-e.Resumed()
	t.Cleanup(func() { e.Stop(); drv.Close() })
	svc, err := service.New(drv, e, service.Config{})
	require.NoError(t, err)
	return svc, tasks
}

const opDefinition = `{"StartAt": "P", "States": {"P": {"Type": "Pass", "Next": "T"},
	"T": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "End": true}}}`

func TestStateMachineHoldAppliesToRunningAndNewExecutions(t *testing.T) {
	t.Parallel()
	svc, tasks := realEngine(t)
	ctx := context.Background()
	sm, err := svc.CreateStateMachine(ctx, &service.CreateStateMachineInput{Name: "net", Definition: `{"StartAt": "W", "States": {
		"W": {"Type": "Wait", "Seconds": 3, "Next": "T"},
		"T": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "End": true}}}`, RoleArn: roleArn})
	require.NoError(t, err)
	running, err := svc.StartExecution(ctx, &service.StartExecutionInput{StateMachineArn: sm.StateMachineArn})
	require.NoError(t, err)
	out, err := svc.HoldState(ctx, &service.HoldStateInput{Arn: sm.StateMachineArn, State: "T", By: "alice"})
	require.NoError(t, err)
	require.Equal(t, []string{running.ExecutionArn}, out.Executions)
	tags, err := svc.ListTagsForResource(ctx, &service.ListTagsForResourceInput{ResourceArn: sm.StateMachineArn})
	require.NoError(t, err)
	require.Equal(t, "stepwise:hold/T", *tags.Tags[0].Key)
	fresh, err := svc.StartExecution(ctx, &service.StartExecutionInput{StateMachineArn: sm.StateMachineArn})
	require.NoError(t, err)
	time.Sleep(3500 * time.Millisecond) // the Waits end
	require.Zero(t, tasks.count(), "both executions wait before T")
	d, err := svc.DescribeExecution(ctx, &service.DescribeExecutionInput{ExecutionArn: fresh.ExecutionArn})
	require.NoError(t, err)
	require.Equal(t, "RUNNING", d.Status)
	// The tag's removal releases both.
	_, err = svc.UntagResource(ctx, &service.UntagResourceInput{ResourceArn: sm.StateMachineArn, TagKeys: []string{"stepwise:hold/T"}})
	require.NoError(t, err)
	testwait.Until(t, func() bool { return tasks.count() == 2 }, 10*time.Second, 5*time.Millisecond)
	log, err := svc.ListOperatorActions(ctx, &service.ListOperatorActionsInput{ExecutionArn: running.ExecutionArn})
	require.NoError(t, err)
	require.Len(t, log.Actions, 2)
	require.Equal(t, "Hold", log.Actions[0].Action)
	require.Equal(t, "alice", log.Actions[0].By)
	require.Equal(t, "Release", log.Actions[1].Action)
	// The new execution started held: its log has the release only.
	log, err = svc.ListOperatorActions(ctx, &service.ListOperatorActionsInput{ExecutionArn: fresh.ExecutionArn})
	require.NoError(t, err)
	require.Len(t, log.Actions, 1)
}

func TestOperatorControlsRefused(t *testing.T) {
	t.Parallel()
	svc, tasks := realEngine(t)
	ctx := context.Background()
	sm, err := svc.CreateStateMachine(ctx, &service.CreateStateMachineInput{Name: "ops", Definition: opDefinition, RoleArn: roleArn})
	require.NoError(t, err)
	x, err := svc.StartExecution(ctx, &service.StartExecutionInput{StateMachineArn: sm.StateMachineArn})
	require.NoError(t, err)
	testwait.Until(t, func() bool { return tasks.count() == 1 }, 10*time.Second, 5*time.Millisecond)
	missing := "arn:aws:states:us-east-1:123456789012:execution:ops:nope"
	_, err = svc.SuspendExecution(ctx, &service.ExecutionControlInput{ExecutionArn: missing})
	requireAPIError(t, err, sfnapi.CodeExecutionDoesNotExist, "Execution Does Not Exist: '"+missing+"'")
	_, err = svc.HoldState(ctx, &service.HoldStateInput{Arn: x.ExecutionArn, State: "Nope"})
	requireAPIError(t, err, sfnapi.CodeValidation, "Invalid state name: the definition has no state 'Nope'")
	_, err = svc.SkipState(ctx, &service.SkipStateInput{ExecutionArn: x.ExecutionArn, State: "P"})
	requireAPIError(t, err, sfnapi.CodeValidation, "The state 'P' is a Pass state: only a Task state can be skipped")
	_, err = svc.HoldState(ctx, &service.HoldStateInput{Arn: sm.StateMachineArn, State: "Nope"})
	requireAPIError(t, err, sfnapi.CodeValidation, "Invalid state name: the definition has no state 'Nope'")
	// Kill the running T, then T is not running any more.
	_, err = svc.KillState(ctx, &service.KillStateInput{ExecutionArn: x.ExecutionArn, State: "T", Cause: "stuck"})
	require.NoError(t, err)
	d, err := svc.DescribeExecution(ctx, &service.DescribeExecutionInput{ExecutionArn: x.ExecutionArn})
	require.NoError(t, err)
	require.Equal(t, "FAILED", d.Status)
	require.Equal(t, service.DefaultKillError, *d.Error)
	_, err = svc.KillState(ctx, &service.KillStateInput{ExecutionArn: x.ExecutionArn, State: "T"})
	requireAPIError(t, err, sfnapi.CodeValidation, "Execution '"+x.ExecutionArn+"' is FAILED: only a RUNNING execution takes operator controls")
}

func TestSkipStateOfAHeldExecution(t *testing.T) {
	t.Parallel()
	svc, tasks := realEngine(t)
	ctx := context.Background()
	sm, err := svc.CreateStateMachine(ctx, &service.CreateStateMachineInput{Name: "skip", Definition: opDefinition, RoleArn: roleArn})
	require.NoError(t, err)
	_, err = svc.HoldState(ctx, &service.HoldStateInput{Arn: sm.StateMachineArn, State: "T", By: "ops"})
	require.NoError(t, err)
	x, err := svc.StartExecution(ctx, &service.StartExecutionInput{StateMachineArn: sm.StateMachineArn})
	require.NoError(t, err)
	_, err = svc.KillState(ctx, &service.KillStateInput{ExecutionArn: x.ExecutionArn, State: "T"})
	requireAPIError(t, err, sfnapi.CodeValidation, "the state 'T' is not a Task state whose task is running")
	_, err = svc.SkipState(ctx, &service.SkipStateInput{ExecutionArn: x.ExecutionArn, State: "T", Output: `{"done":1}`, By: "ops"})
	require.NoError(t, err)
	d, err := svc.DescribeExecution(ctx, &service.DescribeExecutionInput{ExecutionArn: x.ExecutionArn})
	require.NoError(t, err)
	require.Equal(t, "SUCCEEDED", d.Status)
	require.JSONEq(t, `{"done":1}`, *d.Output)
	require.Zero(t, tasks.count())
}
