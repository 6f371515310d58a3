package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/asl"
	"stepwise/engine/start"
	"stepwise/engine/task"
	"stepwise/failure"
	"stepwise/history"
	"stepwise/internal/testkit/testwait"
	"stepwise/jsonvalue"
	"stepwise/store"
	"stepwise/store/sqlitestore"
)

const (
	region  = "us-east-1"
	account = "123456789012"
)

type testBundle struct {
	path   string
	drv    store.Driver
	engine *Engine
	tasks  *fakeTasks
	// config, when set, changes the engine's configuration at every open.
	config func(*Config)
}

// fakeTasks is a TaskRunner whose tasks complete when the test says so.
type fakeTasks struct {
	mu      sync.Mutex
	pending map[string]func(task.Result) // "arn/id" → done
	tasks   map[string]*task.Task        // "arn/id" → the task last run
	runs    map[string]int
	cancels []string
	auto    func(t *task.Task) *task.Result // when set, answers at once
}

func newFakeTasks() *fakeTasks {
	return &fakeTasks{pending: map[string]func(task.Result){}, tasks: map[string]*task.Task{}, runs: map[string]int{}}
}

func (f *fakeTasks) Run(_ context.Context, t *task.Task, done func(task.Result)) {
	f.mu.Lock()
	key := t.ExecutionArn + "/" + t.ID
	f.runs[key]++
	f.tasks[key] = t
	auto := f.auto
	if auto == nil {
		f.pending[key] = done
	}
	f.mu.Unlock()
	if auto != nil {
		done(*auto(t))
	}
}

func (f *fakeTasks) Cancel(arn, id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.pending, arn+"/"+id)
	f.cancels = append(f.cancels, arn+"/"+id)
}

// complete answers every pending task.
func (f *fakeTasks) complete(r task.Result) int {
	f.mu.Lock()
	pending := f.pending
	f.pending = map[string]func(task.Result){}
	f.mu.Unlock()
	for _, done := range pending {
		done(r)
	}
	return len(pending)
}

func (f *fakeTasks) waitPending(t *testing.T, n int) {
	t.Helper()
	testwait.Until(t, func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return len(f.pending) >= n
	}, 30*time.Second, 5*time.Millisecond)
}

func setup(t testing.TB, scale float64) *testBundle {
	t.Helper()
	b := &testBundle{path: filepath.Join(t.TempDir(), "stepwise.db"), tasks: newFakeTasks()}
	b.open(t, scale)
	createActivity(t, b.drv)
	return b
}

// createActivity creates the activity the tests' Task states name.
func createActivity(t testing.TB, drv store.Driver) {
	t.Helper()
	_, err := drv.Executor().ActivityInsert(context.Background(), &store.Activity{Arn: activityArn, Name: "work", CreatedAt: time.Now()})
	require.NoError(t, err)
}

func (b *testBundle) open(t testing.TB, scale float64) {
	t.Helper()
	ctx := context.Background()
	drv, err := sqlitestore.Open(ctx, b.path, sqlitestore.Options{})
	require.NoError(t, err)
	cfg := Config{Region: region, Account: account, WaitTimeScale: scale, Tasks: b.tasks, TokenKey: []byte("test key, the same across restarts")}
	if b.config != nil {
		b.config(&cfg)
	}
	e, err := New(drv, cfg)
	require.NoError(t, err)
	require.NoError(t, e.Start(ctx))
	<-e.Resumed()
	b.drv, b.engine = drv, e
	t.Cleanup(func() { b.close() })
}

func (b *testBundle) close() {
	if b.engine != nil {
		b.engine.Stop()
		b.drv.Close()
		b.engine = nil
	}
}

// machine stores a state machine and returns it with its parsed form.
func (b *testBundle) machine(t testing.TB, name, def string) (*store.StateMachine, *asl.StateMachine) {
	t.Helper()
	m, diags := asl.Parse([]byte(def))
	require.NotNil(t, m, "%v", diags)
	now := time.Now().UTC().Truncate(time.Millisecond)
	sm := &store.StateMachine{
		Arn: fmt.Sprintf("arn:aws:states:%s:%s:stateMachine:%s", region, account, name), Name: name,
		Type: "STANDARD", Status: "ACTIVE", RevisionID: "r1", Definition: def,
		RoleArn: "arn:aws:iam::123456789012:role/r", CreatedAt: now, UpdatedAt: now,
	}
	_, err := b.drv.Executor().StateMachineInsert(context.Background(), &store.StateMachineInsertParams{StateMachine: sm})
	require.NoError(t, err)
	return sm, m
}

func (b *testBundle) start(t *testing.T, sm *store.StateMachine, m *asl.StateMachine, name, input string) *store.Execution {
	t.Helper()
	row, err := b.engine.StartExecution(context.Background(), &start.Params{
		StateMachine: sm, Machine: m, Name: name, Input: input,
		ExecutionArn: fmt.Sprintf("arn:aws:states:%s:%s:execution:%s:%s", region, account, sm.Name, name),
	})
	require.NoError(t, err)
	return row
}

func (b *testBundle) waitStatus(t *testing.T, arn string, want history.ExecutionStatus) *store.Execution {
	t.Helper()
	var row *store.Execution
	testwait.Until(t, func() bool {
		var err error
		row, err = b.drv.Executor().ExecutionGet(context.Background(), arn)
		if errors.Is(err, store.ErrNotFound) {
			return false // not started yet
		}
		require.NoError(t, err)
		return row.Status == want
	}, 30*time.Second, 5*time.Millisecond, "execution %s never reached %s", arn, want)
	return row
}

// history returns the stored event types, checking ids are 1..n with no gap.
func (b *testBundle) history(t *testing.T, arn string) []string {
	t.Helper()
	evs, err := b.drv.Executor().EventList(context.Background(), &store.EventListParams{ExecutionArn: arn, Limit: 100000})
	require.NoError(t, err)
	var types []string
	for i, e := range evs {
		require.Equal(t, int64(i+1), e.ID, "event ids have no gap")
		var body struct {
			ID   int64  `json:"id"`
			Type string `json:"type"`
		}
		require.NoError(t, json.Unmarshal(e.Body, &body))
		require.Equal(t, e.ID, body.ID)
		types = append(types, body.Type)
	}
	return types
}

func TestStartRunsToTheEndInOneStep(t *testing.T) {
	t.Parallel()
	b := setup(t, 0)
	sm, m := b.machine(t, "pass", `{"StartAt": "A", "States": {"A": {"Type": "Pass", "Result": {"ok": true}, "End": true}}}`)
	row := b.start(t, sm, m, "e1", `{"in": 1}`)
	require.Equal(t, history.StatusSucceeded, row.Status)
	require.Equal(t, `{"ok":true}`, *row.Output)
	stored := b.waitStatus(t, row.Arn, history.StatusSucceeded)
	require.NotNil(t, stored.StopDate)
	require.Equal(t, []string{"ExecutionStarted", "PassStateEntered", "PassStateExited", "ExecutionSucceeded"}, b.history(t, row.Arn))

	_, err := b.engine.StartExecution(context.Background(), &start.Params{StateMachine: sm, Machine: m, Name: "e1", Input: "{}", ExecutionArn: row.Arn})
	require.ErrorIs(t, err, store.ErrAlreadyExists)
}

func TestTimersAndTasks(t *testing.T) {
	t.Parallel()
	b := setup(t, 0)
	sm, m := b.machine(t, "wt", `{"StartAt": "W", "States": {
		"W": {"Type": "Wait", "Seconds": 5, "Next": "T"},
		"T": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "End": true}}}`)
	row := b.start(t, sm, m, "e1", `{}`)
	require.Equal(t, history.StatusRunning, row.Status)
	b.tasks.waitPending(t, 1)
	require.Equal(t, 1, b.tasks.complete(task.Result{Output: "done"}))
	done := b.waitStatus(t, row.Arn, history.StatusSucceeded)
	require.Equal(t, `"done"`, *done.Output)
	require.Equal(t, []string{"ExecutionStarted", "WaitStateEntered", "WaitStateExited", "TaskStateEntered",
		"TaskScheduled", "TaskStarted", "TaskSucceeded", "TaskStateExited", "ExecutionSucceeded"}, b.history(t, row.Arn))
	timers, err := b.drv.Executor().TimerListForExecution(context.Background(), row.Arn)
	require.NoError(t, err)
	require.Empty(t, timers)
	tasks, err := b.drv.Executor().TaskListForExecution(context.Background(), row.Arn)
	require.NoError(t, err)
	require.Empty(t, tasks)
}

// A runner that says it sent the request has the task started then, not
// with its result, in the order AWS writes them; a restart that sends the
// request again writes no second TaskStarted.
func TestTaskStartedWhenSent(t *testing.T) {
	t.Parallel()
	b := setup(t, 0)
	sm, m := b.machine(t, "sent", `{"StartAt": "T", "States": {"T": {"Type": "Task", "Resource": "arn:aws:states:::aws-sdk:s3:listBuckets", "Next": "L"},
		"L": {"Type": "Task", "Resource": "arn:aws:lambda:us-east-1:123456789012:function:f", "End": true}}}`)
	row := b.start(t, sm, m, "e1", `{}`)
	b.tasks.waitPending(t, 1)
	b.tasks.mu.Lock()
	tk := b.tasks.tasks[row.Arn+"/"+firstKey(b.tasks.pending)]
	b.tasks.mu.Unlock()
	require.NotNil(t, tk.Started)
	tk.Started()
	tk.Started() // once only
	testwait.Until(t, func() bool { return len(b.history(t, row.Arn)) == 4 }, 30*time.Second, 5*time.Millisecond)
	require.Equal(t, []string{"ExecutionStarted", "TaskStateEntered", "TaskScheduled", "TaskStarted"}, b.history(t, row.Arn))

	b.close()
	b.open(t, 0)
	b.tasks.waitPending(t, 1)
	b.tasks.mu.Lock()
	tk = b.tasks.tasks[row.Arn+"/"+firstKey(b.tasks.pending)]
	b.tasks.mu.Unlock()
	tk.Started() // sent again after the restart: already started
	require.Equal(t, 1, b.tasks.complete(task.Result{Output: "one"}))
	b.tasks.waitPending(t, 1)
	b.tasks.mu.Lock()
	tk = b.tasks.tasks[row.Arn+"/"+firstKey(b.tasks.pending)]
	b.tasks.mu.Unlock()
	tk.Started()
	require.Equal(t, 1, b.tasks.complete(task.Result{Output: "two"}))
	b.waitStatus(t, row.Arn, history.StatusSucceeded)
	require.Equal(t, []string{"ExecutionStarted", "TaskStateEntered", "TaskScheduled", "TaskStarted", "TaskSucceeded", "TaskStateExited",
		"TaskStateEntered", "LambdaFunctionScheduled", "LambdaFunctionStarted", "LambdaFunctionSucceeded", "TaskStateExited", "ExecutionSucceeded"},
		b.history(t, row.Arn))
}

// firstKey is the task id of the one pending task ("arn/id").
func firstKey(m map[string]func(task.Result)) string {
	for k := range m {
		return k[strings.LastIndex(k, "/")+1:]
	}
	return ""
}

func TestStop(t *testing.T) {
	t.Parallel()
	b := setup(t, 1)
	sm, m := b.machine(t, "long", `{"StartAt": "W", "States": {"W": {"Type": "Wait", "Seconds": 3600, "End": true}}}`)
	row := b.start(t, sm, m, "e1", `{}`)
	stopped, err := b.engine.StopExecution(context.Background(), row.Arn, "Manual", "operator said so")
	require.NoError(t, err)
	require.Equal(t, history.StatusAborted, stopped.Status)
	require.Equal(t, "operator said so", *stopped.Cause)
	require.Equal(t, []string{"ExecutionStarted", "WaitStateEntered", "ExecutionAborted"}, b.history(t, row.Arn))
	timers, err := b.drv.Executor().TimerListForExecution(context.Background(), row.Arn)
	require.NoError(t, err)
	require.Empty(t, timers, "the stopped execution's timers are gone")
	require.Zero(t, b.engine.timers.len())
	// Stopping again returns the row as it is.
	again, err := b.engine.StopExecution(context.Background(), row.Arn, "", "")
	require.NoError(t, err)
	require.Equal(t, history.StatusAborted, again.Status)
}

func TestResumeAfterRestart(t *testing.T) {
	t.Parallel()
	b := setup(t, 1000) // timers will not fire before the restart
	sm, m := b.machine(t, "loop", `{"StartAt": "Init", "States": {
		"Init": {"Type": "Pass", "Result": 0, "ResultPath": "$.i", "Next": "W"},
		"W": {"Type": "Wait", "Seconds": 1, "Next": "T"},
		"T": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "ResultPath": "$.r", "Next": "Inc"},
		"Inc": {"Type": "Pass", "Parameters": {"i.$": "States.MathAdd($.i, 1)", "id.$": "States.UUID()"}, "Next": "More"},
		"More": {"Type": "Choice", "Choices": [{"Variable": "$.i", "NumericLessThan": 3, "Next": "W"}], "Default": "Done"},
		"Done": {"Type": "Succeed"}}}`)
	var arns []string
	for i := range 20 {
		arns = append(arns, b.start(t, sm, m, fmt.Sprintf("e%d", i), `{}`).Arn)
	}
	// Restart with instant timers: every execution is rebuilt from the store.
	b.close()
	b.open(t, 0)
	for round := 0; round < 3; round++ {
		b.tasks.waitPending(t, len(arns))
		require.Equal(t, len(arns), b.tasks.complete(task.Result{Output: jsonvalue.NewObject(0)}))
		if round == 1 {
			// Restart again with tasks outstanding: they are dispatched again.
			b.tasks.waitPending(t, len(arns))
			b.close()
			b.tasks.complete(task.Result{}) // results that arrive after the stop are lost...
			b.open(t, 0)                    // ...and the tasks are dispatched again.
			b.tasks.waitPending(t, len(arns))
			require.Equal(t, len(arns), b.tasks.complete(task.Result{Output: jsonvalue.NewObject(0)}))
			round++
		}
	}
	for _, arn := range arns {
		row := b.waitStatus(t, arn, history.StatusSucceeded)
		require.Contains(t, *row.Output, `"i":3`)
		types := b.history(t, arn)
		require.Equal(t, "ExecutionSucceeded", types[len(types)-1])
		entered := 0
		for _, ty := range types {
			if ty == "WaitStateEntered" {
				entered++
			}
		}
		require.Equal(t, 3, entered, "each Wait entered once per round, none twice")
	}
}

func TestManyConcurrentStarts(t *testing.T) {
	t.Parallel()
	b := setup(t, 0)
	sm, m := b.machine(t, "many", `{"StartAt": "A", "States": {"A": {"Type": "Wait", "Seconds": 1, "Next": "B"}, "B": {"Type": "Pass", "End": true}}}`)
	var wg sync.WaitGroup
	arns := make([]string, 200)
	for i := range arns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			arns[i] = b.start(t, sm, m, fmt.Sprintf("e%d", i), `{}`).Arn
		}()
	}
	wg.Wait()
	for _, arn := range arns {
		b.waitStatus(t, arn, history.StatusSucceeded)
		require.Len(t, b.history(t, arn), 6)
	}
}

func TestStartSync(t *testing.T) {
	t.Parallel()
	b := setup(t, 0)
	b.tasks.auto = func(t *task.Task) *task.Result { return &task.Result{Output: t.Request.Parameters} }
	sm, m := b.machine(t, "sync", `{"StartAt": "W", "States": {
		"W": {"Type": "Wait", "Seconds": 30, "Next": "T"},
		"T": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "Parameters": {"x.$": "$.x"}, "End": true}}}`)
	res, err := b.engine.StartSyncExecution(context.Background(), &start.Params{
		StateMachine: sm, Machine: m, Name: "s1", Input: `{"x": 42}`,
		ExecutionArn: "arn:aws:states:us-east-1:123456789012:express:sync:s1:x",
	})
	require.NoError(t, err)
	require.Equal(t, history.StatusSucceeded, res.Execution.Status)
	require.Equal(t, `{"x":42}`, *res.Execution.Output)
	require.GreaterOrEqual(t, res.BilledDurationMillis, int64(100))
	_, err = b.drv.Executor().ExecutionGet(context.Background(), res.Execution.Arn)
	require.ErrorIs(t, err, store.ErrNotFound, "sync executions are not stored")
}

func TestRedrive(t *testing.T) {
	t.Parallel()
	b := setup(t, 0)
	sm, m := b.machine(t, "redrive", `{"StartAt": "First", "States": {
		"First": {"Type": "Pass", "Result": 1, "ResultPath": "$.first", "Next": "T"},
		"T": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "ResultPath": "$.t", "End": true}}}`)
	row := b.start(t, sm, m, "e1", `{}`)
	_, err := b.engine.RedriveExecution(context.Background(), row.Arn)
	var notRedrivable *NotRedrivableError
	require.ErrorAs(t, err, &notRedrivable)
	require.Equal(t, history.StatusRunning, notRedrivable.Status)

	b.tasks.waitPending(t, 1)
	b.tasks.complete(task.Result{Failure: failure.New("Broken", "fix me")})
	failed := b.waitStatus(t, row.Arn, history.StatusFailed)
	require.Equal(t, "Broken", *failed.Error)

	redriven, err := b.engine.RedriveExecution(context.Background(), row.Arn)
	require.NoError(t, err)
	require.Equal(t, history.StatusRunning, redriven.Status)
	require.Equal(t, 1, redriven.RedriveCount)
	require.NotNil(t, redriven.RedriveDate)
	require.Nil(t, redriven.StopDate)
	require.Nil(t, redriven.Error)

	// A restart in between replays the redrive too.
	b.tasks.waitPending(t, 1)
	b.close()
	b.open(t, 0)
	b.tasks.waitPending(t, 1)
	b.tasks.complete(task.Result{Output: jsonvalue.NumberFromInt(2)})
	done := b.waitStatus(t, row.Arn, history.StatusSucceeded)
	require.Equal(t, `{"first":1,"t":2}`, *done.Output)
	require.Equal(t, 1, done.RedriveCount)
	require.Equal(t, []string{"ExecutionStarted", "PassStateEntered", "PassStateExited", "TaskStateEntered",
		"TaskScheduled", "TaskStarted", "TaskFailed", "ExecutionFailed", "ExecutionRedriven",
		"TaskStateEntered", "TaskScheduled", "TaskStarted", "TaskSucceeded", "TaskStateExited", "ExecutionSucceeded"}, b.history(t, row.Arn))
}

func TestExecutionTimesOut(t *testing.T) {
	t.Parallel()
	b := setup(t, 0.01) // 100 s of Wait would take 1 s; the 1 s timeout takes 10 ms
	sm, m := b.machine(t, "slow", `{"StartAt": "W", "TimeoutSeconds": 1, "States": {"W": {"Type": "Wait", "Seconds": 100, "End": true}}}`)
	row := b.start(t, sm, m, "e1", `{}`)
	done := b.waitStatus(t, row.Arn, history.StatusTimedOut)
	require.Equal(t, failure.Timeout, *done.Error)
	require.Equal(t, []string{"ExecutionStarted", "WaitStateEntered", "ExecutionTimedOut"}, b.history(t, row.Arn))
	timers, err := b.drv.Executor().TimerListForExecution(context.Background(), row.Arn)
	require.NoError(t, err)
	require.Empty(t, timers, "the Wait's timer is gone with the execution")
}

// TestTaskInvocationSurvivesRestart: the interpreter numbers a state's
// tasks through the execution (what mocked responses are chosen by), and
// an execution rebuilt from the store after a restart dispatches its
// outstanding task again with the same number, then goes on counting.
func TestTaskInvocationSurvivesRestart(t *testing.T) {
	t.Parallel()
	b := setup(t, 0)
	sm, m := b.machine(t, "poll", `{"StartAt": "Init", "States": {
		"Init": {"Type": "Pass", "Result": 0, "ResultPath": "$.i", "Next": "T"},
		"T": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "ResultPath": "$.r", "Next": "Inc"},
		"Inc": {"Type": "Pass", "Parameters": {"i.$": "States.MathAdd($.i, 1)"}, "Next": "More"},
		"More": {"Type": "Choice", "Choices": [{"Variable": "$.i", "NumericLessThan": 3, "Next": "T"}], "Default": "Done"},
		"Done": {"Type": "Succeed"}}}`)
	arn := b.start(t, sm, m, "e", `{}`).Arn
	pending := func() int {
		t.Helper()
		b.tasks.waitPending(t, 1)
		b.tasks.mu.Lock()
		defer b.tasks.mu.Unlock()
		for key := range b.tasks.pending {
			return b.tasks.tasks[key].Request.Invocation
		}
		return -1
	}
	require.Equal(t, 0, pending())
	b.tasks.complete(task.Result{Output: jsonvalue.NewObject(0)})
	require.Equal(t, 1, pending())
	b.close()
	b.tasks.complete(task.Result{}) // lost with the stop
	b.open(t, 0)
	require.Equal(t, 1, pending(), "the task dispatched again keeps its number")
	b.tasks.complete(task.Result{Output: jsonvalue.NewObject(0)})
	require.Equal(t, 2, pending())
	b.tasks.complete(task.Result{Output: jsonvalue.NewObject(0)})
	b.waitStatus(t, arn, history.StatusSucceeded)
}
