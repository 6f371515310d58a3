package engine

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/engine/task"
	"stepwise/history"
	"stepwise/jsonvalue"
)

// A .sync task's job start (a Submitted result) is recorded before the
// runner is told to follow the job, and a restart dispatches the task
// again with the answer recorded (Task.Submitted), so the runner follows
// the job it started instead of starting another.
func TestSyncJobFollowedAfterRestart(t *testing.T) {
	t.Parallel()
	b := setup(t, 0)
	sm, m := b.machine(t, "job", `{"StartAt": "Run", "States": {
		"Run": {"Type": "Task", "Resource": "arn:aws:states:::batch:submitJob.sync",
			"Parameters": {"JobName": "n", "JobQueue": "q", "JobDefinition": "d"}, "End": true}}}`)
	row := b.start(t, sm, m, "e1", `{}`)
	b.tasks.waitPending(t, 1)
	b.tasks.mu.Lock()
	var key string
	for k := range b.tasks.pending {
		key = k
	}
	first, done := b.tasks.tasks[key], b.tasks.pending[key]
	b.tasks.mu.Unlock()
	require.Nil(t, first.Submitted, "a first dispatch has no job")

	started, err := jsonvalue.ParseString(`{"JobId": "job-1", "JobName": "n"}`)
	require.NoError(t, err)
	recorded := make(chan error, 1)
	done(task.Result{Output: started, Submitted: true, Recorded: func(err error) { recorded <- err }})
	select {
	case err := <-recorded:
		require.NoError(t, err)
	case <-time.After(time.Minute):
		t.Fatal("the job's start was never recorded")
	}
	// Recorded is called once the step committed: TaskSubmitted is in
	// the store when the runner goes on.
	types := b.history(t, row.Arn)
	require.Equal(t, "TaskSubmitted", types[len(types)-1])

	b.close() // the server dies while the job runs
	b.open(t, 0)
	b.tasks.waitPending(t, 1)
	b.tasks.mu.Lock()
	again := b.tasks.tasks[key]
	runs := b.tasks.runs[key]
	b.tasks.mu.Unlock()
	require.Equal(t, 2, runs, "dispatched again after the restart")
	require.Equal(t, jsonvalue.String(started), jsonvalue.String(again.Submitted), "with the job it started")

	b.tasks.complete(task.Result{Output: jsonvalue.NewObject(0)})
	b.waitStatus(t, row.Arn, history.StatusSucceeded)
	types = b.history(t, row.Arn)
	submitted := 0
	for _, ty := range types {
		if ty == "TaskSubmitted" {
			submitted++
		}
	}
	require.Equal(t, 1, submitted, "%v", types)
}

// A task whose start was not recorded is dispatched again after a restart
// as a resumption (Task.Resumed), with the same id and execution start,
// so that the runner can look for a job its first dispatch started; a
// first dispatch is not one.
func TestTaskResumedAfterRestart(t *testing.T) {
	t.Parallel()
	b := setup(t, 0)
	sm, m := b.machine(t, "job", `{"StartAt": "Run", "States": {
		"Run": {"Type": "Task", "Resource": "arn:aws:states:::glue:startJobRun.sync",
			"Parameters": {"JobName": "n"}, "End": true}}}`)
	row := b.start(t, sm, m, "e1", `{}`)
	b.tasks.waitPending(t, 1)
	b.tasks.mu.Lock()
	var key string
	for k := range b.tasks.pending {
		key = k
	}
	first := b.tasks.tasks[key]
	b.tasks.mu.Unlock()
	require.False(t, first.Resumed, "a first dispatch")
	require.False(t, first.ExecutionStart.IsZero())

	b.close() // the server dies before the start is recorded
	b.open(t, 0)
	b.tasks.waitPending(t, 1)
	b.tasks.mu.Lock()
	again := b.tasks.tasks[key]
	b.tasks.mu.Unlock()
	require.True(t, again.Resumed, "dispatched again after the restart")
	require.Nil(t, again.Submitted)
	require.Equal(t, first.ID, again.ID)
	require.Equal(t, first.ExecutionStart.UnixMilli(), again.ExecutionStart.UnixMilli())
	require.Equal(t, row.Arn, again.ExecutionArn)
}
