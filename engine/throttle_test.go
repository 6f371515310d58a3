package engine

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/engine/start"
	"stepwise/engine/task"
	"stepwise/failure"
	"stepwise/history"
	"stepwise/internal/testkit/testwait"
	"stepwise/store"
)

// fakeLimiter is a TransitionLimiter that records what it was asked and
// answers with wait.
type fakeLimiter struct {
	mu    sync.Mutex
	calls []string // "stateMachineArn n"
	wait  func(n int) time.Duration
}

func (f *fakeLimiter) ReserveTransitions(arn string, n int) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fmt.Sprintf("%s %d", arnName(arn), n))
	if f.wait == nil {
		return 0
	}
	return f.wait(n)
}

func (f *fakeLimiter) got() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func (f *fakeLimiter) reset() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = nil
}

func setupThrottled(t *testing.T, lim *fakeLimiter) *testBundle {
	t.Helper()
	b := &testBundle{tasks: newFakeTasks(), config: func(c *Config) { c.Transitions = lim }}
	b.path = t.TempDir() + "/stepwise.db"
	b.open(t, 0)
	createActivity(t, b.drv)
	return b
}

const chainDef = `{"StartAt": "A", "States": {
	"A": {"Type": "Pass", "Next": "B"},
	"B": {"Type": "Pass", "Next": "C"},
	"C": {"Type": "Succeed"}}}`

func TestThrottleCountsTransitions(t *testing.T) {
	t.Parallel()
	lim := &fakeLimiter{}
	b := setupThrottled(t, lim)

	sm, m := b.machine(t, "chain", chainDef)
	row := b.start(t, sm, m, "e1", `{}`)
	require.Equal(t, history.StatusSucceeded, row.Status)
	require.Equal(t, []string{"chain 3"}, lim.got(), "three states entered in one step")

	// A task retried twice: entered and scheduled (1), then each retry (1).
	sm, m = b.machine(t, "retry", `{"StartAt": "T", "States": {
		"T": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke",
			"Retry": [{"ErrorEquals": ["Flaky"], "IntervalSeconds": 1}], "Next": "Done"},
		"Done": {"Type": "Pass", "End": true}}}`)
	lim.reset()
	row = b.start(t, sm, m, "e2", `{}`)
	for range 2 {
		b.tasks.waitPending(t, 1)
		b.tasks.complete(task.Result{Failure: &failure.Failure{Name: "Flaky"}})
	}
	b.tasks.waitPending(t, 1)
	b.tasks.complete(task.Result{Output: "ok"})
	b.waitStatus(t, row.Arn, history.StatusSucceeded)
	// The failures' steps arm the retry timers (no transition), the
	// timers' steps schedule the task again, and the result enters Done.
	require.Equal(t, []string{"retry 1", "retry 1", "retry 1", "retry 1"}, lim.got())
}

func TestThrottleDelaysTheCommit(t *testing.T) {
	t.Parallel()
	lim := &fakeLimiter{wait: func(n int) time.Duration { return time.Duration(n) * 100 * time.Millisecond }}
	b := setupThrottled(t, lim)
	sm, m := b.machine(t, "chain", chainDef)

	began := time.Now()
	row := b.start(t, sm, m, "e1", `{}`)
	require.GreaterOrEqual(t, time.Since(began), 300*time.Millisecond)
	require.Equal(t, history.StatusSucceeded, row.Status)
	require.Equal(t, []string{"ExecutionStarted", "PassStateEntered", "PassStateExited", "PassStateEntered",
		"PassStateExited", "SucceedStateEntered", "SucceedStateExited", "ExecutionSucceeded"}, b.history(t, row.Arn))
}

func TestThrottleSkipsExpress(t *testing.T) {
	t.Parallel()
	lim := &fakeLimiter{wait: func(int) time.Duration { return time.Hour }}
	b := setupThrottled(t, lim)
	sm, m := b.machine(t, "chain", chainDef)
	row, err := b.engine.StartExecution(context.Background(), &start.Params{StateMachine: sm, Machine: m, Name: "x", Input: "{}",
		ExecutionArn: "arn:aws:states:us-east-1:123456789012:express:chain:x:1"})
	require.NoError(t, err)
	require.Equal(t, history.StatusSucceeded, row.Status)
	res, err := b.engine.StartSyncExecution(context.Background(), &start.Params{StateMachine: sm, Machine: m, Name: "s", Input: "{}",
		ExecutionArn: "arn:aws:states:us-east-1:123456789012:express:chain:s:1"})
	require.NoError(t, err)
	require.Equal(t, history.StatusSucceeded, res.Execution.Status)
	require.Empty(t, lim.got())
}

func TestThrottleWaitEndsOnHalt(t *testing.T) {
	t.Parallel()
	lim := &fakeLimiter{wait: func(int) time.Duration { return time.Hour }}
	b := setupThrottled(t, lim)
	sm, m := b.machine(t, "chain", chainDef)

	type result struct {
		row *store.Execution
		err error
	}
	done := make(chan result, 1)
	go func() {
		row, err := b.engine.StartExecution(context.Background(), &start.Params{StateMachine: sm, Machine: m, Name: "e1", Input: "{}",
			ExecutionArn: fmt.Sprintf("arn:aws:states:%s:%s:execution:chain:e1", region, account)})
		done <- result{row, err}
	}()
	testwait.Until(t, func() bool { return len(lim.got()) == 1 }, 30*time.Second, time.Millisecond)
	select {
	case <-done:
		t.Fatal("the step did not wait for its transitions")
	case <-time.After(50 * time.Millisecond):
	}

	stopped := make(chan struct{})
	go func() { b.engine.Stop(); close(stopped) }()
	select {
	case r := <-done:
		// A step in flight is committed when the engine stops.
		require.NoError(t, r.err)
		require.Equal(t, history.StatusSucceeded, r.row.Status)
	case <-time.After(5 * time.Second):
		t.Fatal("the wait did not end when the engine stopped")
	}
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("the engine did not stop")
	}
	stored, err := b.drv.Executor().ExecutionGet(context.Background(), fmt.Sprintf("arn:aws:states:%s:%s:execution:chain:e1", region, account))
	require.NoError(t, err)
	require.Equal(t, history.StatusSucceeded, stored.Status)
}

func TestThrottleWaitEndsWithTheCaller(t *testing.T) {
	t.Parallel()
	lim := &fakeLimiter{wait: func(int) time.Duration { return time.Hour }}
	b := setupThrottled(t, lim)
	sm, m := b.machine(t, "chain", chainDef)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	arn := fmt.Sprintf("arn:aws:states:%s:%s:execution:chain:e1", region, account)
	_, err := b.engine.StartExecution(ctx, &start.Params{StateMachine: sm, Machine: m, Name: "e1", Input: "{}", ExecutionArn: arn})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	_, err = b.drv.Executor().ExecutionGet(context.Background(), arn)
	require.ErrorIs(t, err, store.ErrNotFound, "a start whose caller left is not committed")
}

func TestTransitions(t *testing.T) {
	t.Parallel()
	ev := func(id, prev int64, typ history.EventType) *history.Event {
		return &history.Event{ID: id, PreviousEventID: prev, Type: typ}
	}
	for _, tt := range []struct {
		name   string
		events []*history.Event
		want   int
	}{
		{"none", nil, 0},
		{"task entered and scheduled", []*history.Event{
			ev(5, 4, "TaskStateEntered"), ev(6, 5, history.EventTaskScheduled)}, 1},
		{"a retry after a timer", []*history.Event{ev(9, 8, history.EventLambdaFunctionScheduled)}, 1},
		{"a retry in the step of the failure", []*history.Event{
			ev(9, 8, history.EventActivityFailed), ev(10, 9, history.EventActivityScheduled)}, 1},
		// Parallel branches interleave: each branch's task follows its
		// own state.
		{"parallel branches", []*history.Event{
			ev(2, 1, "ParallelStateEntered"), ev(3, 2, history.EventParallelStateStarted),
			ev(4, 3, "TaskStateEntered"), ev(5, 3, "TaskStateEntered"),
			ev(6, 4, history.EventTaskScheduled), ev(7, 5, history.EventTaskScheduled)}, 3},
		{"a result that moves on", []*history.Event{
			ev(7, 6, history.EventTaskSucceeded), ev(8, 7, "TaskStateExited"),
			ev(9, 8, "PassStateEntered"), ev(10, 9, "PassStateExited"), ev(11, 10, history.EventExecutionSucceeded)}, 1},
		{"a hand-out", []*history.Event{ev(7, 6, history.EventActivityStarted)}, 0},
	} {
		require.Equal(t, tt.want, transitions(tt.events), tt.name)
	}
}
