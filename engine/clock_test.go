package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/engine/start"
	"stepwise/engine/task"
	"stepwise/failure"
	"stepwise/history"
	"stepwise/store"
	"stepwise/store/sqlitestore"
)

// fakeClock is a clock that moves only when told to.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// advance moves the clock and has the engine look at its timers again.
func (c *fakeClock) advance(e *Engine, d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
	e.timers.poke()
}

// timeMode is how a test's engine runs time.
type timeMode struct {
	name  string
	skip  bool
	scale float64
}

var (
	skipMode  = timeMode{name: "skip", skip: true}
	scale0    = timeMode{name: "scale0"}
	scaleFast = timeMode{name: "scale0.01", scale: 0.01}
)

// setupTime is setup with a time mode and, when now is set, a clock.
func setupTime(t *testing.T, mode timeMode, now func() time.Time) *testBundle {
	t.Helper()
	b := &testBundle{path: filepath.Join(t.TempDir(), "stepwise.db"), tasks: newFakeTasks()}
	ctx := context.Background()
	drv, err := sqlitestore.Open(ctx, b.path, sqlitestore.Options{})
	require.NoError(t, err)
	e, err := New(drv, Config{Region: region, Account: account, WaitTimeScale: mode.scale, TimeSkip: mode.skip,
		Tasks: b.tasks, Now: now, TokenKey: []byte("test key, the same across restarts")})
	require.NoError(t, err)
	require.NoError(t, e.Start(ctx))
	b.drv, b.engine = drv, e
	t.Cleanup(func() { b.close() })
	createActivity(t, drv)
	return b
}

// events returns the stored history of an execution.
func (b *testBundle) events(t *testing.T, arn string) []*store.Event {
	t.Helper()
	evs, err := b.drv.Executor().EventList(context.Background(), &store.EventListParams{ExecutionArn: arn, Limit: 100000})
	require.NoError(t, err)
	return evs
}

// eventTime is the timestamp of the first event of a type.
func eventTime(t *testing.T, evs []*store.Event, typ history.EventType) time.Time {
	t.Helper()
	for _, e := range evs {
		if e.Type == typ {
			return e.Timestamp
		}
	}
	require.Failf(t, "no such event", "no %s event in the history", typ)
	return time.Time{}
}

// TestTimeSkipWaitsForAnOutstandingTask: in skip mode a Task with
// TimeoutSeconds 3600 whose activity a worker holds does not time out
// while the worker works (time passes at the real rate then, even with a
// two-hour Wait beside it), and does time out an hour of real time after
// it was scheduled. Once the task is done, the clock skips the rest of the
// Wait. The clock is a fake one: the worker's hour passes at once.
func TestTimeSkipWaitsForAnOutstandingTask(t *testing.T) {
	t.Parallel()
	clk := &fakeClock{t: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
	b := setupTime(t, skipMode, clk.Now)
	sm, m := b.machine(t, "slowworker", `{"StartAt": "P", "States": {"P": {"Type": "Parallel", "End": true, "Branches": [
		{"StartAt": "Work", "States": {"Work": {"Type": "Task", "Resource": "`+activityArn+`", "TimeoutSeconds": 3600,
			"Catch": [{"ErrorEquals": ["States.ALL"], "Next": "Caught"}], "End": true},
			"Caught": {"Type": "Pass", "Result": "timed out", "End": true}}},
		{"StartAt": "Later", "States": {"Later": {"Type": "Wait", "Seconds": 7200, "End": true}}}]}}}`)
	ctx := context.Background()
	start := clk.Now()

	// The worker takes 59 minutes (and some real time): no timeout.
	row := b.start(t, sm, m, "worked", `{}`)
	task := mustPoll(t, b, activityArn)
	require.NotNil(t, task)
	clk.advance(b.engine, 59*time.Minute)
	time.Sleep(300 * time.Millisecond) // real time for a clock that skips wrongly to do so
	require.NoError(t, b.engine.SendTaskSuccess(ctx, task.Token, `"worked"`))
	done := b.waitStatus(t, row.Arn, history.StatusSucceeded)
	require.JSONEq(t, `["worked", {}]`, *done.Output)
	evs := b.events(t, row.Arn)
	require.Equal(t, start.Add(59*time.Minute), eventTime(t, evs, history.EventActivitySucceeded))
	// The rest of the Wait was skipped: it ended two hours after the start.
	ended := eventTime(t, evs, history.StateExitedType("Wait"))
	require.False(t, ended.Before(start.Add(2*time.Hour)), "the Wait ended at %v", ended)
	require.Less(t, ended.Sub(start), 2*time.Hour+time.Minute)

	// A worker that takes over an hour has its task time out.
	row = b.start(t, sm, m, "slow", `{}`)
	task = mustPoll(t, b, activityArn)
	require.NotNil(t, task)
	clk.advance(b.engine, 61*time.Minute)
	done = b.waitStatus(t, row.Arn, history.StatusSucceeded)
	require.JSONEq(t, `["timed out", {}]`, *done.Output)
	evs = b.events(t, row.Arn)
	timedOut := eventTime(t, evs, history.EventActivityTimedOut).Sub(eventTime(t, evs, history.EventActivityScheduled))
	require.Equal(t, 61*time.Minute, timedOut, "the timeout fired when the clock passed it")
	require.ErrorIs(t, b.engine.SendTaskSuccess(ctx, task.Token, `"late"`), ErrTaskOver)
}

// TestExecutionTimeoutFiresBeforeALongerWait: an execution's TimeoutSeconds
// of 5 ends it TIMED_OUT around a Wait of 10 seconds, in every time mode.
func TestExecutionTimeoutFiresBeforeALongerWait(t *testing.T) {
	t.Parallel()
	for _, mode := range []timeMode{skipMode, scale0, scaleFast} {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			b := setupTime(t, mode, nil)
			sm, m := b.machine(t, "slow", `{"StartAt": "W", "TimeoutSeconds": 5, "States": {"W": {"Type": "Wait", "Seconds": 10, "End": true}}}`)
			var arns []string
			for i := range 10 {
				arns = append(arns, b.start(t, sm, m, fmt.Sprintf("e%d", i), `{}`).Arn)
			}
			for _, arn := range arns {
				row := b.waitStatus(t, arn, history.StatusTimedOut)
				require.Equal(t, failure.Timeout, *row.Error)
				require.Equal(t, []string{"ExecutionStarted", "WaitStateEntered", "ExecutionTimedOut"}, b.history(t, arn))
				// History timestamps are execution time: five seconds (and,
				// scaled, the real time the steps took, times 100).
				require.GreaterOrEqual(t, row.StopDate.Sub(row.StartDate), 5*time.Second)
				if mode.scale == 0 {
					require.Less(t, row.StopDate.Sub(row.StartDate), 6*time.Second)
				}
			}
		})
	}
}

// TestTimeSkipDayLongWait: in skip mode a Wait of a day and a retry
// back-off of an hour pass at once, and the history shows them passing.
func TestTimeSkipDayLongWait(t *testing.T) {
	t.Parallel()
	b := setupTime(t, skipMode, nil)
	var mu sync.Mutex
	attempts := 0
	b.tasks.auto = func(*task.Task) *task.Result {
		mu.Lock()
		defer mu.Unlock()
		attempts++
		if attempts == 1 {
			return &task.Result{Failure: failure.New("Flaky", "try again")}
		}
		return &task.Result{Output: "ok"}
	}
	sm, m := b.machine(t, "day", `{"StartAt": "W", "States": {
		"W": {"Type": "Wait", "Seconds": 86400, "Next": "T"},
		"T": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "TimeoutSeconds": 60,
			"Retry": [{"ErrorEquals": ["Flaky"], "IntervalSeconds": 3600}], "End": true}}}`)
	row := b.start(t, sm, m, "e1", `{}`)
	done := b.waitStatus(t, row.Arn, history.StatusSucceeded)
	require.Equal(t, `"ok"`, *done.Output)
	evs := b.events(t, row.Arn)
	waited := eventTime(t, evs, history.StateExitedType("Wait")).Sub(eventTime(t, evs, history.StateEnteredType("Wait")))
	require.GreaterOrEqual(t, waited, 24*time.Hour)
	require.Less(t, waited, 24*time.Hour+time.Minute)
	var scheduled []time.Time
	for _, e := range evs {
		if e.Type == history.EventTaskScheduled {
			scheduled = append(scheduled, e.Timestamp)
		}
	}
	require.Len(t, scheduled, 2)
	backoff := scheduled[1].Sub(scheduled[0])
	require.GreaterOrEqual(t, backoff, time.Hour)
	require.Less(t, backoff, time.Hour+time.Minute)
	require.GreaterOrEqual(t, done.StopDate.Sub(done.StartDate), 25*time.Hour)
}

// TestTimersOfManyExecutionsFireInDeadlineOrder: the Waits of several
// executions end in the order of their virtual deadlines. In skip mode the
// executions start while an activity is outstanding, so none skips ahead;
// once it is done, the clock skips from one deadline to the next.
func TestTimersOfManyExecutionsFireInDeadlineOrder(t *testing.T) {
	t.Parallel()
	for _, mode := range []timeMode{skipMode, scale0} {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			b := setupTime(t, mode, nil)
			var mu sync.Mutex
			var fired []string // executions in the order their Wait ended
			b.tasks.auto = func(tk *task.Task) *task.Result {
				mu.Lock()
				fired = append(fired, tk.ExecutionArn)
				mu.Unlock()
				return &task.Result{Output: "ok"}
			}
			blocker, bm := b.machine(t, "blocker", `{"StartAt": "A", "States": {"A": {"Type": "Task", "Resource": "`+activityArn+`", "End": true}}}`)
			sm, m := b.machine(t, "waits", `{"StartAt": "W", "States": {
				"W": {"Type": "Wait", "SecondsPath": "$.s", "Next": "T"},
				"T": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "End": true}}}`)
			held := b.start(t, blocker, bm, "held", `{}`)
			seconds := []int{80, 10, 50, 30, 70, 20, 60, 40}
			deadline := map[string]time.Time{}
			bySeconds := map[int]string{}
			for i, s := range seconds {
				row := b.start(t, sm, m, fmt.Sprintf("e%d", i), fmt.Sprintf(`{"s": %d}`, s))
				deadline[row.Arn] = eventTime(t, b.events(t, row.Arn), history.StateEnteredType("Wait")).Add(time.Duration(s) * time.Second)
				bySeconds[s] = row.Arn
			}
			task := mustPoll(t, b, activityArn)
			require.NotNil(t, task)
			require.NoError(t, b.engine.SendTaskSuccess(context.Background(), task.Token, `{}`))
			b.waitStatus(t, held.Arn, history.StatusSucceeded)
			for arn := range deadline {
				b.waitStatus(t, arn, history.StatusSucceeded)
			}
			mu.Lock()
			defer mu.Unlock()
			require.Len(t, fired, len(seconds))
			// Each Wait ends at its deadline in execution time.
			for arn, at := range deadline {
				require.False(t, eventTime(t, b.events(t, arn), history.StateExitedType("Wait")).Before(at), "%s ended its Wait early", arn)
			}
			if mode.skip {
				// The clock skips from one deadline to the next, so the
				// Waits also end in that order in real time (at scale 0
				// every timer is due at once, and the executions' steps
				// run side by side).
				require.True(t, sort.SliceIsSorted(fired, func(i, j int) bool { return deadline[fired[i]].Before(deadline[fired[j]]) }),
					"fired out of deadline order: %v", fired)
				// All started before any time was skipped: the shortest
				// Wait ends first, and each ends after its own seconds.
				sorted := slices.Clone(seconds)
				slices.Sort(sorted)
				for i, s := range sorted {
					require.Equal(t, bySeconds[s], fired[i])
					evs := b.events(t, bySeconds[s])
					waited := eventTime(t, evs, history.StateExitedType("Wait")).Sub(eventTime(t, evs, history.StateEnteredType("Wait")))
					require.GreaterOrEqual(t, waited, time.Duration(s)*time.Second)
					require.Less(t, waited, time.Duration(s)*time.Second+time.Second)
				}
			}
		})
	}
}

// TestTimeSkipThroughChildExecutions: a parent waiting on a .sync child
// does not hold the clock; the child's own timers do. A child's day-long
// Wait is skipped when the parent's task allows two days, and the
// parent's one-hour task timeout fires first when it allows an hour.
func TestTimeSkipThroughChildExecutions(t *testing.T) {
	t.Parallel()
	b := setupTime(t, skipMode, nil)
	b.machine(t, "child", `{"StartAt": "W", "States": {"W": {"Type": "Wait", "Seconds": 86400, "End": true}}}`)
	childArn := "arn:aws:states:us-east-1:123456789012:stateMachine:child"
	parent := func(name string, timeout int) string {
		sm, m := b.machine(t, name, fmt.Sprintf(`{"StartAt": "Run", "States": {
			"Run": {"Type": "Task", "Resource": "arn:aws:states:::states:startExecution.sync:2", "TimeoutSeconds": %d,
				"Parameters": {"StateMachineArn": %q, "Input": {}}, "ResultSelector": {"status.$": "$.Status"}, "End": true}}}`, timeout, childArn))
		return b.start(t, sm, m, "p", `{}`).Arn
	}

	patient := parent("patient", 2*86400)
	row := b.waitStatus(t, patient, history.StatusSucceeded)
	require.JSONEq(t, `{"status": "SUCCEEDED"}`, *row.Output)
	took := row.StopDate.Sub(row.StartDate)
	require.GreaterOrEqual(t, took, 24*time.Hour)
	require.Less(t, took, 24*time.Hour+time.Minute)

	hasty := parent("hasty", 3600)
	row = b.waitStatus(t, hasty, history.StatusFailed)
	require.Equal(t, failure.Timeout, *row.Error)
	took = row.StopDate.Sub(row.StartDate)
	require.GreaterOrEqual(t, took, time.Hour)
	require.Less(t, took, time.Hour+time.Minute)
	children, err := b.drv.Executor().ExecutionList(context.Background(), &store.ExecutionListParams{StateMachineArn: childArn})
	require.NoError(t, err)
	require.Len(t, children, 2)
	var statuses []history.ExecutionStatus
	for _, c := range children {
		if c.Status == history.StatusRunning {
			c = b.waitStatus(t, c.Arn, history.StatusAborted) // stopped with the parent's task
		}
		statuses = append(statuses, c.Status)
	}
	require.ElementsMatch(t, []history.ExecutionStatus{history.StatusSucceeded, history.StatusAborted}, statuses)
}

// TestTimeSkipSyncExecution: an in-memory (StartSyncExecution) run skips
// its own timers too, and its dates show the skipped time.
func TestTimeSkipSyncExecution(t *testing.T) {
	t.Parallel()
	b := setupTime(t, skipMode, nil)
	b.tasks.auto = func(t *task.Task) *task.Result { return &task.Result{Output: t.Request.Parameters} }
	sm, m := b.machine(t, "sync", `{"StartAt": "W", "States": {
		"W": {"Type": "Wait", "Seconds": 86400, "Next": "T"},
		"T": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "TimeoutSeconds": 60, "Parameters": {"x.$": "$.x"}, "End": true}}}`)
	res, err := b.engine.StartSyncExecution(context.Background(), &start.Params{
		StateMachine: sm, Machine: m, Name: "s1", Input: `{"x": 42}`,
		ExecutionArn: "arn:aws:states:us-east-1:123456789012:express:sync:s1:x",
	})
	require.NoError(t, err)
	require.Equal(t, history.StatusSucceeded, res.Execution.Status)
	require.Equal(t, `{"x":42}`, *res.Execution.Output)
	took := res.Execution.StopDate.Sub(res.Execution.StartDate)
	require.GreaterOrEqual(t, took, 24*time.Hour)
	require.Less(t, took, 24*time.Hour+time.Minute)
}
