package engine

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/engine/start"
	"stepwise/engine/task"
	"stepwise/failure"
	"stepwise/history"
	"stepwise/interp"
	"stepwise/jsonvalue"
)

var failureE = failure.Failure{Name: "E"}

const opTask = `"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke"`

// pendingCount is the number of tasks waiting for a result.
func (f *fakeTasks) pendingCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.pending)
}

func TestHoldInMapIterationsAndReleaseAfterRestart(t *testing.T) {
	t.Parallel()
	b := setup(t, 1000) // the Waits do not end before the hold
	ctx := context.Background()
	sm, m := b.machine(t, "held", `{"StartAt": "M", "States": {"M": {"Type": "Map", "End": true, "ItemProcessor": {
		"StartAt": "W", "States": {"W": {"Type": "Wait", "Seconds": 1, "Next": "T"}, "T": {`+opTask+`, "End": true}}}}}}`)
	arn := b.start(t, sm, m, "e", `[1, 2]`).Arn
	require.NoError(t, b.engine.Hold(ctx, arn, "T", "alice"))
	// Restart: the hold is rebuilt from the replay log; the Waits end.
	b.close()
	b.open(t, 0)
	testwaitHistory(t, b, arn, "WaitStateExited")
	time.Sleep(300 * time.Millisecond)
	require.Zero(t, b.tasks.pendingCount(), "no task runs before the held state")
	require.NotContains(t, b.history(t, arn), "TaskStateEntered")
	// Restart with both iterations parked: they are parked again.
	b.close()
	b.open(t, 0)
	time.Sleep(100 * time.Millisecond)
	require.Zero(t, b.tasks.pendingCount())
	require.NoError(t, b.engine.Release(ctx, arn, "T", "bob"))
	b.tasks.waitPending(t, 2)
	b.tasks.complete(task.Result{Output: jsonvalue.NewObject(0)})
	b.waitStatus(t, arn, history.StatusSucceeded)
	acts, err := b.engine.Actions(ctx, arn)
	require.NoError(t, err)
	require.Len(t, acts, 2)
	require.Equal(t, "Hold", acts[0].Kind)
	require.Equal(t, "alice", acts[0].By)
	require.Equal(t, "T", acts[0].State)
	require.Equal(t, "Release", acts[1].Kind)
	require.Equal(t, "bob", acts[1].By)
	require.False(t, acts[1].At.Before(acts[0].At))
}

func TestHeldAtStartByPolicy(t *testing.T) {
	t.Parallel()
	b := setup(t, 0)
	ctx := context.Background()
	sm, m := b.machine(t, "smhold", `{"StartAt": "P", "States": {"P": {"Type": "Pass", "Next": "T"}, "T": {`+opTask+`, "End": true}}}`)
	row, err := b.engine.StartExecution(ctx, &start.Params{StateMachine: sm, Machine: m, Name: "e", Input: `{}`,
		ExecutionArn: "arn:aws:states:" + region + ":" + account + ":execution:smhold:e",
		Policies:     interp.Policies{"T": {interp.PolicyHeld}}})
	require.NoError(t, err)
	b.close()
	b.open(t, 0)
	time.Sleep(100 * time.Millisecond)
	require.Zero(t, b.tasks.pendingCount())
	require.Equal(t, []string{"ExecutionStarted", "PassStateEntered", "PassStateExited"}, b.history(t, row.Arn))
	require.NoError(t, b.engine.Release(ctx, row.Arn, "T", "ops"))
	b.tasks.waitPending(t, 1)
}

func TestSuspendTaskFinishesThenParksAndResumeAfterRestart(t *testing.T) {
	t.Parallel()
	b := setup(t, 0)
	ctx := context.Background()
	sm, m := b.machine(t, "susp", `{"StartAt": "T", "States": {"T": {`+opTask+`, "Next": "U"}, "U": {`+opTask+`, "End": true}}}`)
	arn := b.start(t, sm, m, "e", `{}`).Arn
	b.tasks.waitPending(t, 1)
	require.NoError(t, b.engine.Suspend(ctx, arn, "ops"))
	b.tasks.complete(task.Result{Output: jsonvalue.NewObject(0)})
	testwaitHistory(t, b, arn, "TaskStateExited")
	b.close()
	b.open(t, 0)
	time.Sleep(100 * time.Millisecond)
	require.Zero(t, b.tasks.pendingCount(), "suspended: U is not entered")
	row, err := b.drv.Executor().ExecutionGet(ctx, arn)
	require.NoError(t, err)
	require.Equal(t, history.StatusRunning, row.Status)
	require.NoError(t, b.engine.Resume(ctx, arn, "ops"))
	b.tasks.waitPending(t, 1)
	b.tasks.complete(task.Result{Output: jsonvalue.NewObject(0)})
	b.waitStatus(t, arn, history.StatusSucceeded)
}

func testwaitHistory(t *testing.T, b *testBundle, arn, typ string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !slices.Contains(b.history(t, arn), typ) {
		require.True(t, time.Now().Before(deadline), "no %s in %v", typ, b.history(t, arn))
		time.Sleep(5 * time.Millisecond)
	}
}

func TestSkipRunningTaskDropsTheLateResult(t *testing.T) {
	t.Parallel()
	b := setup(t, 0)
	ctx := context.Background()
	sm, m := b.machine(t, "skip", `{"StartAt": "T", "States": {"T": {`+opTask+`, "ResultPath": "$.r", "End": true}}}`)
	arn := b.start(t, sm, m, "e", `{"a":1}`).Arn
	b.tasks.waitPending(t, 1)
	b.tasks.mu.Lock()
	var late func(task.Result)
	for _, d := range b.tasks.pending {
		late = d
	}
	b.tasks.mu.Unlock()
	require.NoError(t, b.engine.Skip(ctx, arn, "T", `{"skipped":true}`, "ops"))
	row := b.waitStatus(t, arn, history.StatusSucceeded)
	require.JSONEq(t, `{"skipped":true}`, *row.Output, "the operator's output, no ResultPath")
	late(task.Result{Output: jsonvalue.NewObject(0)})
	time.Sleep(50 * time.Millisecond)
	require.Equal(t, []string{"ExecutionStarted", "TaskStateEntered", "TaskScheduled", "TaskSucceeded", "TaskStateExited", "ExecutionSucceeded"}, b.history(t, arn))
	require.Len(t, b.tasks.cancels, 1)
}

func TestSkipTaskWaitingToRetryAndParked(t *testing.T) {
	t.Parallel()
	b := setup(t, 1000) // the retry's wait does not end
	ctx := context.Background()
	sm, m := b.machine(t, "skipretry", `{"StartAt": "T", "States": {
		"T": {`+opTask+`, "Retry": [{"ErrorEquals": ["E"], "IntervalSeconds": 5}], "Next": "U"},
		"U": {`+opTask+`, "End": true}}}`)
	arn := b.start(t, sm, m, "e", `{}`).Arn
	b.tasks.waitPending(t, 1)
	require.NoError(t, b.engine.Hold(ctx, arn, "U", "ops"))
	b.tasks.complete(task.Result{Failure: &failureE})
	testwaitHistory(t, b, arn, "TaskFailed")
	require.NoError(t, b.engine.Skip(ctx, arn, "T", `{"t":1}`, "ops"))
	// U is held: the skip of the parked U enters and ends it.
	var ce *ControlRefusedError
	require.ErrorAs(t, b.engine.Kill(ctx, arn, "U", "K", "", "ops"), &ce, "a parked state has no running task")
	require.NoError(t, b.engine.Skip(ctx, arn, "U", `{"u":1}`, "ops"))
	row := b.waitStatus(t, arn, history.StatusSucceeded)
	require.JSONEq(t, `{"u":1}`, *row.Output)
	types := b.history(t, arn)
	require.Equal(t, []string{"TaskFailed", "TaskSucceeded", "TaskStateExited", "TaskStateEntered", "TaskSucceeded", "TaskStateExited", "ExecutionSucceeded"}, types[len(types)-7:])
	require.Zero(t, b.tasks.pendingCount())
}

func TestKillRunningTaskRetriedAndCaught(t *testing.T) {
	t.Parallel()
	b := setup(t, 0)
	ctx := context.Background()
	sm, m := b.machine(t, "kill", `{"StartAt": "T", "States": {
		"T": {`+opTask+`, "Retry": [{"ErrorEquals": ["Op.Killed"], "IntervalSeconds": 1, "MaxAttempts": 1}],
			"Catch": [{"ErrorEquals": ["Op.Killed"], "Next": "C"}], "End": true},
		"C": {"Type": "Pass", "End": true}}}`)
	arn := b.start(t, sm, m, "e", `{}`).Arn
	b.tasks.waitPending(t, 1)
	require.NoError(t, b.engine.Kill(ctx, arn, "T", "Op.Killed", "by hand", "ops"))
	b.tasks.waitPending(t, 1) // retried
	require.Len(t, b.tasks.cancels, 1, "the killed task's runner is told")
	require.NoError(t, b.engine.Kill(ctx, arn, "T", "Op.Killed", "again", "ops"))
	row := b.waitStatus(t, arn, history.StatusSucceeded)
	require.JSONEq(t, `{"Error":"Op.Killed","Cause":"again"}`, *row.Output)
	acts, err := b.engine.Actions(ctx, arn)
	require.NoError(t, err)
	require.Len(t, acts, 2)
	require.Equal(t, "Kill", acts[1].Kind)
	require.Equal(t, "again", acts[1].Cause)
}

func TestControlOfEndedExecution(t *testing.T) {
	t.Parallel()
	b := setup(t, 0)
	sm, m := b.machine(t, "ended", `{"StartAt": "P", "States": {"P": {"Type": "Pass", "End": true}}}`)
	arn := b.start(t, sm, m, "e", `{}`).Arn
	var nr *NotRunningError
	require.ErrorAs(t, b.engine.Hold(context.Background(), arn, "P", "ops"), &nr)
}
