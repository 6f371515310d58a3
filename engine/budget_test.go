package engine

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/asl"
	"stepwise/asl/budget"
	"stepwise/engine/start"
	"stepwise/engine/task"
	"stepwise/history"
	"stepwise/internal/testkit/testwait"
	"stepwise/jsonvalue"
	"stepwise/store"
	"stepwise/store/sqlitestore"
)

const runawayExpr = `($f := function($n){ $n = 0 ? 0 : $f($n-1) + $f($n-1) }; $f(60))`

// runawayDef waits for a task, then evaluates an expression that never
// ends, inside a Parallel whose Catch keeps the error as the output.
const runawayDef = `{"QueryLanguage": "JSONata", "StartAt": "T", "States": {
	"T": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "Next": "Par"},
	"Par": {"Type": "Parallel", "Next": "W",
		"Branches": [{"StartAt": "P", "States": {"P": {"Type": "Pass", "Output": "{% ` + runawayExpr + ` %}", "End": true}}}],
		"Catch": [{"ErrorEquals": ["States.ALL"], "Output": "{% $states.errorOutput %}", "Next": "W"}]},
	"W": {"Type": "Wait", "Seconds": 1, "Next": "Done"},
	"Done": {"Type": "Pass", "End": true}}}`

// unbounded lets b's evaluations run for an hour, and returns a channel
// closed when one has run long enough to read the clock.
func unbounded(b *testBundle) <-chan struct{} {
	evaluating := make(chan struct{})
	var once sync.Once
	b.config = func(c *Config) {
		c.EvalLimits = budget.Limits{Steps: -1, Bytes: -1, Time: time.Hour}
		c.EvalClock = func() time.Time {
			once.Do(func() { close(evaluating) })
			return time.Now()
		}
	}
	return evaluating
}

// StopExecution stops an execution whose step runs an expression without
// end, at once, and the execution ends ABORTED with AWS's events; after a
// restart it stays so.
func TestStopInterruptsRunaway(t *testing.T) {
	t.Parallel()
	b := &testBundle{path: t.TempDir() + "/stepwise.db", tasks: newFakeTasks()}
	evaluating := unbounded(b)
	b.open(t, 0)
	sm, m := b.machine(t, "runaway", runawayDef)
	row := b.start(t, sm, m, "e1", `{}`)
	b.tasks.waitPending(t, 1)
	go b.tasks.complete(task.Result{Output: jsonvalue.NumberFromInt(1)}) // its step runs forever

	<-evaluating
	stopped := make(chan error, 1)
	go func() {
		_, err := b.engine.StopExecution(context.Background(), row.Arn, "Halt", "stopped by the test")
		stopped <- err
	}()
	select {
	case err := <-stopped:
		require.NoError(t, err)
	case <-time.After(20 * time.Second):
		t.Fatal("StopExecution did not return while the execution's step evaluated without end")
	}
	done := b.waitStatus(t, row.Arn, history.StatusAborted)
	require.Equal(t, "Halt", *done.Error)
	h := b.history(t, row.Arn)
	require.Equal(t, "ExecutionAborted", h[len(h)-1])
	require.Contains(t, h, "PassStateEntered", "the step was stopped where it was, in the Pass")

	// A restart does not run the evaluation again: the execution ended.
	b.close()
	b.open(t, 0)
	again := b.waitStatus(t, row.Arn, history.StatusAborted)
	require.Equal(t, done.Version, again.Version)
}

// An evaluation that runs out of time fails the way the log recorded it,
// also when the execution is replayed after a restart on a machine of
// another speed (here: without a clock at all while replaying).
func TestTimeLimitAcrossRestart(t *testing.T) {
	t.Parallel()
	var tick atomic.Int64
	b := &testBundle{path: t.TempDir() + "/stepwise.db", tasks: newFakeTasks()}
	b.config = func(c *Config) {
		c.EvalLimits = budget.Limits{Steps: -1, Time: 3 * time.Second}
		c.EvalClock = func() time.Time { return time.Unix(tick.Add(1), 0) } // a second a reading
	}
	b.open(t, 1000) // the Wait takes long enough for the restart
	sm, m := b.machine(t, "slow", runawayDef)
	row := b.start(t, sm, m, "e1", `{}`)
	b.tasks.waitPending(t, 1)
	b.tasks.complete(task.Result{Output: jsonvalue.NumberFromInt(1)})
	testwait.Until(t, func() bool {
		h := b.history(t, row.Arn)
		return h[len(h)-1] == "WaitStateEntered"
	}, 30*time.Second, 5*time.Millisecond)

	// Restart with a clock that never moves: without the log's mark the
	// replay would run the expression without end.
	b.close()
	b.config = func(c *Config) {
		c.EvalLimits = budget.Limits{Steps: -1, Time: 3 * time.Second}
		c.EvalClock = func() time.Time { return time.Unix(0, 0) }
	}
	b.open(t, 0)
	done := b.waitStatus(t, row.Arn, history.StatusSucceeded)
	require.Contains(t, *done.Output, "the evaluation ran longer than its time limit of 3s")
	require.Contains(t, *done.Output, "States.QueryEvaluationError")
}

// Engine.Halt abandons a step whose evaluation runs without end: the
// request gets ServiceUnavailable and nothing of the step is committed.
func TestHaltAbandonsStart(t *testing.T) {
	t.Parallel()
	b := &testBundle{path: t.TempDir() + "/stepwise.db", tasks: newFakeTasks()}
	evaluating := unbounded(b)
	b.open(t, 0)
	sm, m := b.machine(t, "first", `{"QueryLanguage": "JSONata", "StartAt": "P", "States": {
		"P": {"Type": "Pass", "Output": "{% `+runawayExpr+` %}", "End": true}}}`)
	started := make(chan error, 1)
	go func() {
		_, err := b.engine.StartExecution(context.Background(), startParams(sm, m, "e1"))
		started <- err
	}()
	<-evaluating
	b.engine.Halt()
	select {
	case err := <-started:
		require.ErrorIs(t, err, task.ErrStopped)
	case <-time.After(20 * time.Second):
		t.Fatal("StartExecution did not return after Halt")
	}
	b.close()
	b.open(t, 0)
	_, err := b.drv.Executor().ExecutionGet(context.Background(), startParams(sm, m, "e1").ExecutionArn)
	require.Error(t, err, "the abandoned start was not committed")
}

func startParams(sm *store.StateMachine, m *asl.StateMachine, name string) *start.Params {
	return &start.Params{
		StateMachine: sm, Machine: m, Name: name, Input: `{}`,
		ExecutionArn: fmt.Sprintf("arn:aws:states:%s:%s:execution:%s:%s", region, account, sm.Name, name),
	}
}

// Executions are resumed in the background: an engine whose executions
// take long to replay serves requests at once, and resumes them meanwhile.
func TestResumeInBackground(t *testing.T) {
	t.Parallel()
	b := &testBundle{path: t.TempDir() + "/stepwise.db", tasks: newFakeTasks()}
	b.config = func(c *Config) { c.EvalLimits = budget.Limits{Steps: -1, Bytes: -1, Time: -1} }
	b.open(t, 1)
	// Its first step takes a while to evaluate, and so does its replay.
	sm, m := b.machine(t, "heavy", `{"QueryLanguage": "JSONata", "StartAt": "P", "States": {
		"P": {"Type": "Pass", "Output": "{% $count([1..500000][$ % 7 = 0]) %}", "Next": "W"},
		"W": {"Type": "Wait", "Seconds": 3600, "End": true}}}`)
	row := b.start(t, sm, m, "e1", `{}`)
	b.close()

	ctx := context.Background()
	drv, err := sqlitestore.Open(ctx, b.path, sqlitestore.Options{})
	require.NoError(t, err)
	e, err := New(drv, Config{Region: region, Account: account, WaitTimeScale: 1, Tasks: b.tasks,
		EvalLimits: budget.Limits{Steps: -1, Bytes: -1, Time: -1}, TokenKey: []byte("test key, the same across restarts")})
	require.NoError(t, err)
	require.NoError(t, e.Start(ctx))
	t.Cleanup(func() { e.Stop(); drv.Close() })
	select {
	case <-e.Resumed():
		t.Fatal("Start waited for the replay")
	default:
	}
	b.drv, b.engine = drv, e
	other := b.start(t, sm, m, "e2", `{}`) // served while e1 replays
	require.Equal(t, history.StatusRunning, other.Status)
	<-e.Resumed()
	e.mu.Lock()
	_, live := e.live[row.Arn]
	e.mu.Unlock()
	require.True(t, live, "the execution was resumed")
}
