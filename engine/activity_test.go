package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/engine/activity"
	"stepwise/failure"
	"stepwise/history"
	"stepwise/internal/testkit/testwait"
	"stepwise/store"
)

const activityArn = "arn:aws:states:us-east-1:123456789012:activity:work"

func TestActivitiesEachTaskToOneWorker(t *testing.T) {
	t.Parallel()
	b := setup(t, 0)
	sm, m := b.machine(t, "act", `{"StartAt": "A", "States": {"A": {"Type": "Task", "Resource": "`+activityArn+`", "End": true}}}`)
	const n = 60
	var arns []string
	for i := range n {
		arns = append(arns, b.start(t, sm, m, fmt.Sprintf("e%d", i), fmt.Sprintf(`{"i": %d}`, i)).Arn)
	}
	ctx := context.Background()
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				task, err := b.engine.PollActivity(ctx, activityArn, fmt.Sprintf("worker-%d", w), 200*time.Millisecond)
				require.NoError(t, err)
				if task == nil {
					return
				}
				mu.Lock()
				seen[task.Input]++
				mu.Unlock()
				require.NoError(t, b.engine.SendTaskSuccess(ctx, task.Token, task.Input))
			}
		}()
	}
	wg.Wait()
	require.Len(t, seen, n)
	for input, count := range seen {
		require.Equal(t, 1, count, "task %s handed out more than once", input)
	}
	for i, arn := range arns {
		row := b.waitStatus(t, arn, history.StatusSucceeded)
		require.JSONEq(t, fmt.Sprintf(`{"i": %d}`, i), *row.Output)
		require.Equal(t, []string{"ExecutionStarted", "TaskStateEntered", "ActivityScheduled", "ActivityStarted",
			"ActivitySucceeded", "TaskStateExited", "ExecutionSucceeded"}, b.history(t, arn))
	}
}

func TestTaskTokens(t *testing.T) {
	t.Parallel()
	b := setup(t, 1)
	sm, m := b.machine(t, "tok", `{"StartAt": "A", "States": {"A": {"Type": "Task", "Resource": "`+activityArn+`", "HeartbeatSeconds": 3600,
		"Catch": [{"ErrorEquals": ["Bad"], "ResultPath": "$.err", "Next": "Caught"}], "End": true},
		"Caught": {"Type": "Pass", "End": true}}}`)
	ctx := context.Background()
	row := b.start(t, sm, m, "e1", `{}`)

	require.Nil(t, pollNone(t, b, "arn:aws:states:us-east-1:123456789012:activity:other"), "another activity's queue is empty")
	task := mustPoll(t, b, activityArn)
	require.NotNil(t, task)

	require.ErrorIs(t, b.engine.SendTaskSuccess(ctx, "not-a-token", "{}"), ErrInvalidToken)
	require.ErrorIs(t, b.engine.SendTaskSuccess(ctx, "not-a-token", "{not json"), ErrInvalidToken, "the token is refused before the output is read")
	forged := []byte(task.Token)
	forged[len(forged)-2] ^= 1
	require.ErrorIs(t, b.engine.SendTaskSuccess(ctx, string(forged), "{}"), ErrInvalidToken)
	var bad *InvalidOutputError
	require.ErrorAs(t, b.engine.SendTaskSuccess(ctx, task.Token, "{not json"), &bad)

	require.NoError(t, b.engine.SendTaskHeartbeat(ctx, task.Token))
	// A token handed out before a restart still works after it.
	b.close()
	b.open(t, 1)
	require.NoError(t, b.engine.SendTaskFailure(ctx, task.Token, "Bad", "it broke"))
	done := b.waitStatus(t, row.Arn, history.StatusSucceeded)
	require.JSONEq(t, `{"err": {"Error": "Bad", "Cause": "it broke"}}`, *done.Output)
	// A second completion, or a heartbeat, of a task that ended is refused.
	require.ErrorIs(t, b.engine.SendTaskSuccess(ctx, task.Token, "{}"), ErrTaskOver)
	require.ErrorIs(t, b.engine.SendTaskHeartbeat(ctx, task.Token), ErrTaskOver)
}

func TestStoppedActivityIsNotHandedOut(t *testing.T) {
	t.Parallel()
	b := setup(t, 1)
	sm, m := b.machine(t, "stop", `{"StartAt": "A", "States": {"A": {"Type": "Task", "Resource": "`+activityArn+`", "End": true}}}`)
	row := b.start(t, sm, m, "e1", `{}`)
	_, err := b.engine.StopExecution(context.Background(), row.Arn, "", "")
	require.NoError(t, err)
	require.Nil(t, pollNone(t, b, activityArn), "the stopped execution's task is gone")
}

// mustPoll polls for a task that is there or on its way: a poll answers as
// soon as one is, so the long wait costs only a loaded machine's time.
func mustPoll(t *testing.T, b *testBundle, arn string) *activity.Handout {
	t.Helper()
	task, err := b.engine.PollActivity(context.Background(), arn, "w", 30*time.Second)
	require.NoError(t, err)
	return task
}

// pollNone polls briefly where no task may be handed out: one that is
// queued is handed out at once.
func pollNone(t *testing.T, b *testBundle, arn string) *activity.Handout {
	t.Helper()
	task, err := b.engine.PollActivity(context.Background(), arn, "w", 100*time.Millisecond)
	require.NoError(t, err)
	return task
}

func TestRequeuedTaskKeepsItsToken(t *testing.T) {
	t.Parallel()
	b := setup(t, 1)
	sm, m := b.machine(t, "requeue", `{"StartAt": "A", "States": {"A": {"Type": "Task", "Resource": "`+activityArn+`", "End": true}}}`)
	row := b.start(t, sm, m, "e1", `{}`)
	b.close()
	b.open(t, 1) // the task is queued again from the store
	task := mustPoll(t, b, activityArn)
	require.NotNil(t, task)
	require.NotEmpty(t, task.Token)
	require.NoError(t, b.engine.SendTaskSuccess(context.Background(), task.Token, `"ok"`))
	b.waitStatus(t, row.Arn, history.StatusSucceeded)
}

func TestStartedActivityIsNotHandedOutAgainAfterRestart(t *testing.T) {
	t.Parallel()
	b := setup(t, 1)
	sm, m := b.machine(t, "once", `{"StartAt": "A", "States": {"A": {"Type": "Task", "Resource": "`+activityArn+`", "End": true}}}`)
	row := b.start(t, sm, m, "e1", `{}`)
	task := mustPoll(t, b, activityArn)
	require.NotNil(t, task)
	b.close()
	b.open(t, 1)
	require.Nil(t, pollNone(t, b, activityArn), "the task a worker holds is not handed to another")
	require.NoError(t, b.engine.SendTaskSuccess(context.Background(), task.Token, `"done"`))
	b.waitStatus(t, row.Arn, history.StatusSucceeded)
}

// A Task of an activity that does not exist fails its state before
// anything is scheduled, as AWS fails it; a replay after a restart, and a
// redrive once the activity exists, keep that history as it was.
func TestTaskOfMissingActivity(t *testing.T) {
	t.Parallel()
	b := setup(t, 1)
	const gone = "arn:aws:states:us-east-1:123456789012:activity:gone"
	sm, m := b.machine(t, "gone", `{"StartAt": "A", "States": {"A": {"Type": "Task", "Resource": "`+gone+`", "End": true}}}`)
	row := b.start(t, sm, m, "e1", `{}`)
	failed := b.waitStatus(t, row.Arn, history.StatusFailed)
	require.Equal(t, failure.Runtime, *failed.Error)
	require.Equal(t, "An error occurred while executing the state 'A' (entered at the event id #2). The activity "+gone+" does not exist.", *failed.Cause)
	require.Equal(t, []string{"ExecutionStarted", "TaskStateEntered", "ExecutionFailed"}, b.history(t, row.Arn))

	_, err := b.drv.Executor().ActivityInsert(context.Background(), &store.Activity{Arn: gone, Name: "gone", CreatedAt: time.Now()})
	require.NoError(t, err)
	b.close()
	b.open(t, 1)
	_, err = b.engine.RedriveExecution(context.Background(), row.Arn)
	require.NoError(t, err)
	task := mustPoll(t, b, gone)
	require.NotNil(t, task, "the redriven task is scheduled now that the activity exists")
	b.close()
	b.open(t, 1) // the replay fails the first run as it failed, then redrives it
	require.NoError(t, b.engine.SendTaskSuccess(context.Background(), task.Token, `"done"`))
	b.waitStatus(t, row.Arn, history.StatusSucceeded)
	require.Equal(t, []string{"ExecutionStarted", "TaskStateEntered", "ExecutionFailed", "ExecutionRedriven",
		"TaskStateEntered", "ActivityScheduled", "ActivityStarted", "ActivitySucceeded", "TaskStateExited", "ExecutionSucceeded"}, b.history(t, row.Arn))
}

func TestFailingBranchKillsTheOtherBranchesTasks(t *testing.T) {
	t.Parallel()
	// Time skips, but not while the activity task waits for a worker: the
	// Wait ends a second after the task is handed out, not before.
	b := &testBundle{path: filepath.Join(t.TempDir(), "stepwise.db"), tasks: newFakeTasks()}
	b.config = func(c *Config) { c.TimeSkip = true }
	b.open(t, 1)
	createActivity(t, b.drv)
	sm, m := b.machine(t, "par", `{"StartAt": "P", "States": {"P": {"Type": "Parallel", "End": true, "Branches": [
		{"StartAt": "Work", "States": {"Work": {"Type": "Task", "Resource": "`+activityArn+`", "End": true}}},
		{"StartAt": "Later", "States": {"Later": {"Type": "Wait", "Seconds": 1, "Next": "Boom"}, "Boom": {"Type": "Fail", "Error": "Boom"}}}]}}}`)
	row := b.start(t, sm, m, "e1", `{}`)
	task := mustPoll(t, b, activityArn)
	require.NotNil(t, task, "the activity task is handed out before the other branch fails")
	failed := b.waitStatus(t, row.Arn, history.StatusFailed)
	require.Equal(t, "Boom", *failed.Error)
	require.ErrorIs(t, b.engine.SendTaskSuccess(context.Background(), task.Token, "{}"), ErrTaskOver)
	require.ErrorIs(t, b.engine.SendTaskHeartbeat(context.Background(), task.Token), ErrTaskOver)
}

// TestPollersThatGaveUpDoNotTakeWakeUps: polls that ran out of time leave
// the queue, so the next task wakes a poller that is still waiting.
func TestPollersThatGaveUpDoNotTakeWakeUps(t *testing.T) {
	t.Parallel()
	b := setup(t, 1)
	sm, m := b.machine(t, "act", `{"StartAt": "A", "States": {"A": {"Type": "Task", "Resource": "`+activityArn+`", "End": true}}}`)
	for range 3 {
		task, err := b.engine.PollActivity(context.Background(), activityArn, "gone", time.Millisecond)
		require.NoError(t, err)
		require.Nil(t, task)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	task, err := b.engine.PollActivity(ctx, activityArn, "cancelled", time.Minute)
	require.NoError(t, err)
	require.Nil(t, task)

	type result struct {
		task *activity.Handout
		err  error
	}
	got := make(chan result, 1)
	go func() {
		task, err := b.engine.PollActivity(context.Background(), activityArn, "live", 20*time.Second)
		got <- result{task, err}
	}()
	time.Sleep(50 * time.Millisecond) // let the live poll wait
	b.start(t, sm, m, "e1", `{}`)
	r := <-got
	require.NoError(t, r.err)
	require.NotNil(t, r.task, "the live poller is woken for the task")
}

func TestReleasePollsEndsWaitingAndLaterPolls(t *testing.T) {
	t.Parallel()
	b := setup(t, 1)
	sm, m := b.machine(t, "act", `{"StartAt": "A", "States": {"A": {"Type": "Task", "Resource": "`+activityArn+`", "End": true}}}`)
	got := make(chan error, 1)
	go func() {
		task, err := b.engine.PollActivity(context.Background(), activityArn, "w", time.Minute)
		if err == nil && task != nil {
			err = fmt.Errorf("a task %v, not none", task)
		}
		got <- err
	}()
	time.Sleep(50 * time.Millisecond) // let the poll wait
	b.engine.ReleasePolls()
	select {
	case err := <-got:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting poll was not released")
	}
	begin := time.Now()
	task, err := b.engine.PollActivity(context.Background(), activityArn, "w", time.Minute)
	require.NoError(t, err)
	require.Nil(t, task)
	require.Less(t, time.Since(begin), 40*time.Second, "a later poll with no task does not wait (a minute)")

	// A task that is there is still handed out.
	b.start(t, sm, m, "e1", `{}`)
	testwait.Until(t, func() bool {
		task, err := b.engine.PollActivity(context.Background(), activityArn, "w", time.Minute)
		require.NoError(t, err)
		return task != nil
	}, 30*time.Second, 10*time.Millisecond)
}

// An activity a Task state found is trusted for a moment, but its delete
// on this node (ForgetActivity, which DeleteActivity calls) counts at
// once: the next Task state of it fails as one of a missing activity.
func TestTaskOfActivityDeletedHere(t *testing.T) {
	t.Parallel()
	b := setup(t, 1)
	const arn = "arn:aws:states:us-east-1:123456789012:activity:brief"
	_, err := b.drv.Executor().ActivityInsert(context.Background(), &store.Activity{Arn: arn, Name: "brief", CreatedAt: time.Now()})
	require.NoError(t, err)
	sm, m := b.machine(t, "brief", `{"StartAt": "A", "States": {"A": {"Type": "Task", "Resource": "`+arn+`", "End": true}}}`)
	first := b.start(t, sm, m, "e1", `{}`)
	task := mustPoll(t, b, arn)
	require.NotNil(t, task, "the activity exists: its task is scheduled")
	require.NoError(t, b.engine.SendTaskSuccess(context.Background(), task.Token, `"done"`))
	b.waitStatus(t, first.Arn, history.StatusSucceeded)

	b.engine.ForgetActivity(arn)
	require.NoError(t, b.drv.Executor().ActivityDelete(context.Background(), arn))
	second := b.start(t, sm, m, "e2", `{}`)
	failed := b.waitStatus(t, second.Arn, history.StatusFailed)
	require.Contains(t, *failed.Cause, "The activity "+arn+" does not exist.")
}
