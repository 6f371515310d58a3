package engine

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/engine/activity"
	"stepwise/history"
	"stepwise/internal/testkit/testwait"
	"stepwise/interp"
)

const twoActivities = `{"StartAt": "A", "States": {
	"A": {"Type": "Task", "Resource": "` + activityArn + `", "Next": "B"},
	"B": {"Type": "Task", "Resource": "` + activityArn + `", "End": true}}}`

// pollWaiting starts a poll of the activity and returns its answer once
// the poller waits for a task.
func (b *testBundle) pollWaiting(t *testing.T, ctx context.Context, worker string) <-chan *activity.Handout {
	t.Helper()
	got := make(chan *activity.Handout, 1)
	go func() {
		h, err := b.engine.PollActivity(ctx, activityArn, worker, 30*time.Second)
		if err != nil {
			h = nil
		}
		got <- h
	}()
	testwait.Until(t, func() bool { return b.engine.activities.Pollers(activityArn) == 1 }, 30*time.Second, time.Millisecond)
	return got
}

// A task scheduled while a worker polls for it is handed out in the step
// that schedules it: one step writes ActivityScheduled and ActivityStarted
// (no hand-out step of its own in the replay log), the worker gets the
// task once that step is committed, and after a restart the task is the
// worker's still (not queued again), whose result ends it.
func TestActivityHandedOutInItsSchedulingStep(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, 1)
	sm, m := b.machine(t, "two", twoActivities)
	row := b.start(t, sm, m, "e1", `{}`)

	first, err := b.engine.PollActivity(ctx, activityArn, "w1", 10*time.Second)
	require.NoError(t, err)
	require.NotNil(t, first)
	got := b.pollWaiting(t, ctx, "w2")
	require.NoError(t, b.engine.SendTaskSuccess(ctx, first.Token, `{"a": 1}`))
	second := <-got
	require.NotNil(t, second)
	require.JSONEq(t, `{"a": 1}`, second.Input)

	require.Equal(t, []interp.EventKind{interp.TaskStarted, interp.TaskSucceeded}, b.replayKinds(t, row.Arn),
		"the second task's hand-out is the step of the first one's result")
	types := b.history(t, row.Arn)
	require.Equal(t, []string{"ExecutionStarted", "TaskStateEntered", "ActivityScheduled", "ActivityStarted", "ActivitySucceeded",
		"TaskStateExited", "TaskStateEntered", "ActivityScheduled", "ActivityStarted"}, types)
	require.Zero(t, b.queued(activityArn))

	b.close()
	b.open(t, 1)
	require.Zero(t, b.queued(activityArn), "a worker holds the task: it is not queued again")
	require.NoError(t, b.engine.SendTaskSuccess(ctx, second.Token, `{"b": 2}`))
	b.waitStatus(t, row.Arn, history.StatusSucceeded)
	require.Equal(t, 2, b.countEvents(t, row.Arn, "ActivityStarted"))
}

// A worker that leaves after a step handed it its task gets nothing: the
// hand-out is undone (TaskReleased) and the next worker gets the task
// with the same token.
func TestActivityHandedOutToAWorkerThatLeft(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, 1)
	sm, m := b.machine(t, "two", twoActivities)
	row := b.start(t, sm, m, "e1", `{}`)
	first, err := b.engine.PollActivity(ctx, activityArn, "w1", 10*time.Second)
	require.NoError(t, err)

	// The worker leaves while the step that hands it the task commits.
	mu := b.liveLock(t, row.Arn)
	pollCtx, cancel := context.WithCancel(ctx)
	got := b.pollWaiting(t, pollCtx, "w2")
	mu.Lock()
	done := make(chan error, 1)
	go func() { done <- b.engine.SendTaskSuccess(ctx, first.Token, `{}`) }()
	cancel()
	// The poller waits for the claim of the step (which waits for the
	// lock), or left before it: either way it gets nothing.
	mu.Unlock()
	require.NoError(t, <-done)
	require.Nil(t, <-got)

	testwait.Until(t, func() bool { return b.queued(activityArn) == 1 }, 30*time.Second, time.Millisecond)
	again, err := b.engine.PollActivity(ctx, activityArn, "w3", 10*time.Second)
	require.NoError(t, err)
	require.NotNil(t, again)
	require.NoError(t, b.engine.SendTaskSuccess(ctx, again.Token, `{}`))
	b.waitStatus(t, row.Arn, history.StatusSucceeded)
	require.Equal(t, 2, b.countEvents(t, row.Arn, "ActivityStarted"), "the released hand-out writes no second ActivityStarted")
}

// leavingCtx is a poller's context that says the poller left from its
// third Err on: its poll loop's first look and a step's claim see it
// there, the answer after the step's commit sees it gone.
type leavingCtx struct {
	context.Context
	calls atomic.Int64
}

func (c *leavingCtx) Err() error {
	if c.calls.Add(1) > 2 {
		return context.Canceled
	}
	return nil
}

// A worker that leaves after a step claimed it for the task it schedules
// (before the step's commit answers it) gets nothing: the hand-out
// written with the scheduling is undone (TaskReleased) and the task is
// queued for the next worker, with the same token.
func TestActivityClaimedByAStepThenLeft(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, 1)
	sm, m := b.machine(t, "two", twoActivities)
	row := b.start(t, sm, m, "e1", `{}`)
	first, err := b.engine.PollActivity(ctx, activityArn, "w1", 10*time.Second)
	require.NoError(t, err)

	got := b.pollWaiting(t, &leavingCtx{Context: ctx}, "w2")
	require.NoError(t, b.engine.SendTaskSuccess(ctx, first.Token, `{}`))
	require.Nil(t, <-got)
	require.Equal(t, []interp.EventKind{interp.TaskStarted, interp.TaskSucceeded, interp.TaskReleased}, b.replayKinds(t, row.Arn))
	require.Equal(t, 1, b.queued(activityArn))

	again, err := b.engine.PollActivity(ctx, activityArn, "w3", 10*time.Second)
	require.NoError(t, err)
	require.NotNil(t, again)
	require.NoError(t, b.engine.SendTaskSuccess(ctx, again.Token, `{}`))
	b.waitStatus(t, row.Arn, history.StatusSucceeded)
	require.Equal(t, 2, b.countEvents(t, row.Arn, "ActivityStarted"))
}
