package engine

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/engine/activity"
	"stepwise/engine/start"
	"stepwise/history"
	"stepwise/internal/testkit/testwait"
	"stepwise/interp"
)

const activityDefinition = `{"StartAt": "A", "States": {"A": {"Type": "Task", "Resource": "` + activityArn + `", "End": true}}}`

// queued is how many tasks of an activity wait in the queue.
func (b *testBundle) queued(arn string) int {
	return b.engine.activities.Status(arn).Waiting
}

// liveLock returns the lock of a live execution.
func (b *testBundle) liveLock(t *testing.T, arn string) *sync.Mutex {
	t.Helper()
	l, err := b.engine.get(context.Background(), arn)
	require.NoError(t, err)
	return &l.mu
}

// countEvents counts the events of a type in an execution's history.
func (b *testBundle) countEvents(t *testing.T, arn, typ string) int {
	t.Helper()
	n := 0
	for _, h := range b.history(t, arn) {
		if h == typ {
			n++
		}
	}
	return n
}

// replayKinds lists the kinds of an execution's replay log entries.
func (b *testBundle) replayKinds(t *testing.T, arn string) []interp.EventKind {
	t.Helper()
	inputs, err := b.drv.Executor().InputList(context.Background(), arn)
	require.NoError(t, err)
	var kinds []interp.EventKind
	for _, in := range inputs {
		ev, err := decodeEvent(in.Body)
		require.NoError(t, err)
		kinds = append(kinds, ev.Kind)
	}
	return kinds
}

// TestPollerGoneBeforeHandOutKeepsTheTask: a poller that leaves while its
// hand-out waits for the execution gets nothing and the task is not
// recorded as started: the next poller gets it, with the same token.
func TestPollerGoneBeforeHandOutKeepsTheTask(t *testing.T) {
	t.Parallel()
	b := setup(t, 1)
	sm, m := b.machine(t, "act", activityDefinition)
	row := b.start(t, sm, m, "e1", `{}`)
	testwait.Until(t, func() bool { return b.queued(activityArn) == 1 }, 30*time.Second, time.Millisecond)

	mu := b.liveLock(t, row.Arn)
	mu.Lock() // the hand-out waits for the execution
	ctx, cancel := context.WithCancel(context.Background())
	type result struct {
		task *activity.Handout
		err  error
	}
	got := make(chan result, 1)
	go func() {
		task, err := b.engine.PollActivity(ctx, activityArn, "gone", time.Minute)
		got <- result{task, err}
	}()
	testwait.Until(t, func() bool { return b.queued(activityArn) == 0 }, 30*time.Second, time.Millisecond, "the poller takes the task")
	cancel()
	mu.Unlock()
	r := <-got
	require.NoError(t, r.err, "a poller that left gets no error")
	require.Nil(t, r.task, "a poller that left gets no task")

	task := mustPoll(t, b, activityArn)
	require.NotNil(t, task, "the task is handed to the next poller")
	require.NoError(t, b.engine.SendTaskSuccess(context.Background(), task.Token, `"ok"`))
	b.waitStatus(t, row.Arn, history.StatusSucceeded)
	require.Equal(t, []string{"ExecutionStarted", "TaskStateEntered", "ActivityScheduled", "ActivityStarted",
		"ActivitySucceeded", "TaskStateExited", "ExecutionSucceeded"}, b.history(t, row.Arn))
	require.Equal(t, []interp.EventKind{interp.TaskStarted, interp.TaskSucceeded}, b.replayKinds(t, row.Arn),
		"the poller that left is not recorded")
}

// TestPollerGoneDuringHandOutReleasesTheTask: a poller that leaves while
// the hand-out is being committed gets nothing; the hand-out is undone
// durably, so the task goes to the next poller, before or after a restart,
// with the same token and one ActivityStarted; once that poller holds it,
// a restart does not hand it out again.
func TestPollerGoneDuringHandOutReleasesTheTask(t *testing.T) {
	t.Parallel()
	b := setup(t, 1)
	sm, m := b.machine(t, "act", `{"StartAt": "A", "States": {"A": {"Type": "Task", "Resource": "`+activityArn+`", "HeartbeatSeconds": 3600, "End": true}}}`)
	row := b.start(t, sm, m, "e1", `{}`)
	testwait.Until(t, func() bool { return b.queued(activityArn) == 1 }, 30*time.Second, time.Millisecond)

	tx, err := b.drv.Begin(context.Background()) // commits wait for the writer
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	type result struct {
		task *activity.Handout
		err  error
	}
	got := make(chan result, 1)
	go func() {
		task, err := b.engine.PollActivity(ctx, activityArn, "gone", time.Minute)
		got <- result{task, err}
	}()
	testwait.Until(t, func() bool { return inCommit("stepwise/engine.TestPollerGoneDuringHandOutReleasesTheTask") },
		10*time.Second, time.Millisecond, "the hand-out's commit waits")
	cancel()
	require.NoError(t, tx.Rollback(context.Background()))
	r := <-got
	require.NoError(t, r.err, "a poller that left gets no error")
	require.Nil(t, r.task, "a poller that left gets no task")
	require.Equal(t, []interp.EventKind{interp.TaskStarted, interp.TaskReleased}, b.replayKinds(t, row.Arn))
	require.Empty(t, b.timers(t, row.Arn), "no heartbeat clock while the task waits again")

	b.close()
	b.open(t, 1) // the released task is queued again from the store
	task := mustPoll(t, b, activityArn)
	require.NotNil(t, task, "the released task is handed out after a restart")
	require.Equal(t, b.engine.tokens.Make(row.Arn, taskID(t, b, row.Arn)), task.Token)
	require.Nil(t, pollNone(t, b, activityArn), "once")
	require.Len(t, b.timers(t, row.Arn), 1, "the heartbeat clock runs again")

	b.close()
	b.open(t, 1)
	require.Nil(t, pollNone(t, b, activityArn), "the task its poller holds is not handed out again after a restart")
	require.NoError(t, b.engine.SendTaskSuccess(context.Background(), task.Token, `"ok"`))
	b.waitStatus(t, row.Arn, history.StatusSucceeded)
	require.Equal(t, 1, b.countEvents(t, row.Arn, "ActivityStarted"))
	require.Equal(t, []interp.EventKind{interp.TaskStarted, interp.TaskReleased, interp.TaskStarted, interp.TaskSucceeded},
		b.replayKinds(t, row.Arn))
}

// inCommit says whether a goroutine that the function creator started
// is committing a step.
func inCommit(creator string) bool {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		if bytes.Contains(g, []byte("engine.(*committer).commit(")) && bytes.Contains(g, []byte("created by "+creator+" ")) {
			return true
		}
	}
	return false
}

// timers lists the ids of an execution's stored timers.
func (b *testBundle) timers(t *testing.T, arn string) []string {
	t.Helper()
	rows, err := b.drv.Executor().TimerListForExecution(context.Background(), arn)
	require.NoError(t, err)
	var ids []string
	for _, r := range rows {
		ids = append(ids, r.ID)
	}
	return ids
}

// taskID is the id of the one task in an execution's replay log.
func taskID(t *testing.T, b *testBundle, arn string) string {
	t.Helper()
	inputs, err := b.drv.Executor().InputList(context.Background(), arn)
	require.NoError(t, err)
	require.NotEmpty(t, inputs)
	ev, err := decodeEvent(inputs[0].Body)
	require.NoError(t, err)
	return ev.ID
}

// TestPollersThatLeaveLoseNoTask polls with contexts cancelled at random
// points, many during the hand-out's commit, while other executions keep
// the committer busy. Every task goes to exactly one poller that got it
// (PollActivity returned it), no poll fails, and every execution ends.
func TestPollersThatLeaveLoseNoTask(t *testing.T) {
	t.Parallel()
	b := setup(t, 0)
	sm, m := b.machine(t, "act", activityDefinition)
	busySM, busyM := b.machine(t, "busy", `{"StartAt": "W", "States": {
		"W": {"Type": "Wait", "Seconds": 1, "Next": "P"}, "P": {"Type": "Pass", "End": true}}}`)
	const n = 200
	bg := context.Background()

	var (
		mu       sync.Mutex
		errs     []error
		received = map[string]int{} // token → polls that returned it
		done     atomic.Int64       // tasks completed
		late     atomic.Int64       // tasks returned to a poll whose context had ended
	)
	fail := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	// work completes a task a poll returned.
	work := func(task *activity.Handout) {
		mu.Lock()
		received[task.Token]++
		mu.Unlock()
		if err := b.engine.SendTaskSuccess(bg, task.Token, task.Input); err != nil {
			fail(fmt.Errorf("send task success: %w", err))
			return
		}
		done.Add(1)
	}

	stopBusy := make(chan struct{})
	var busy sync.WaitGroup
	for w := range 2 {
		busy.Add(1)
		go func() {
			defer busy.Done()
			for i := 0; ; i++ {
				select {
				case <-stopBusy:
					return
				default:
				}
				_, err := b.engine.StartExecution(bg, &start.Params{StateMachine: busySM, Machine: busyM,
					Name: fmt.Sprintf("b%d-%d", w, i), Input: `{}`,
					ExecutionArn: fmt.Sprintf("arn:aws:states:%s:%s:execution:busy:b%d-%d", region, account, w, i)})
				if err != nil {
					fail(fmt.Errorf("start busy execution: %w", err))
					return
				}
			}
		}()
	}

	// The goroutines end before the engine closes, also when the test
	// fails half-way.
	stopBusyOnce := sync.OnceFunc(func() { close(stopBusy); busy.Wait() })
	t.Cleanup(stopBusyOnce)
	stopLeaving := make(chan struct{})
	var leaving sync.WaitGroup
	stopLeavingOnce := sync.OnceFunc(func() { close(stopLeaving); leaving.Wait() })
	t.Cleanup(stopLeavingOnce)
	for w := range 8 {
		leaving.Add(1)
		go func() {
			defer leaving.Done()
			for {
				select {
				case <-stopLeaving:
					return
				default:
				}
				ctx, cancel := context.WithCancel(bg)
				timer := time.AfterFunc(time.Duration(rand.IntN(3000))*time.Microsecond, cancel)
				task, err := b.engine.PollActivity(ctx, activityArn, fmt.Sprintf("leaving-%d", w), time.Second)
				timer.Stop()
				if task != nil && ctx.Err() != nil {
					late.Add(1) // the poller left as the hand-out ended: it is counted as having the task
				}
				cancel()
				if err != nil {
					fail(fmt.Errorf("poll: %w", err))
					continue
				}
				if task != nil {
					work(task)
				}
			}
		}()
	}

	var arns []string
	for i := range n {
		arns = append(arns, b.start(t, sm, m, fmt.Sprintf("e%d", i), fmt.Sprintf(`{"i": %d}`, i)).Arn)
	}
	// The leaving pollers take tasks for a while (on a loaded machine most
	// of them leave before any hand-out: they need not take half).
	for deadline := time.Now().Add(10 * time.Second); done.Load() < n/2 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	stopLeavingOnce()

	// Pollers that stay drain the rest.
	var staying sync.WaitGroup
	for w := range 4 {
		staying.Add(1)
		go func() {
			defer staying.Done()
			deadline := time.Now().Add(15 * time.Second)
			for done.Load() < n && time.Now().Before(deadline) {
				task, err := b.engine.PollActivity(bg, activityArn, fmt.Sprintf("staying-%d", w), 100*time.Millisecond)
				if err != nil {
					fail(fmt.Errorf("poll: %w", err))
					continue
				}
				if task != nil {
					work(task)
				}
			}
		}()
	}
	staying.Wait()
	stopBusyOnce()

	var stuck, released int
	for _, arn := range arns {
		row, err := b.drv.Executor().ExecutionGet(bg, arn)
		require.NoError(t, err)
		if row.Status == history.StatusRunning {
			stuck++
		}
		for _, k := range b.replayKinds(t, arn) {
			if k == interp.TaskReleased {
				released++
			}
		}
	}
	t.Logf("%d of %d tasks handed out, %d executions not finished, %d polls failed, %d hand-outs undone, %d returned to polls already cancelled",
		done.Load(), n, stuck, len(errs), released, late.Load())
	require.Empty(t, errs)
	require.Equal(t, int64(n), done.Load(), "every task is handed out")
	require.Len(t, received, n)
	for token, count := range received {
		require.Equal(t, 1, count, "task %s handed out more than once", token)
	}
	for i, arn := range arns {
		row := b.waitStatus(t, arn, history.StatusSucceeded)
		require.JSONEq(t, fmt.Sprintf(`{"i": %d}`, i), *row.Output)
		require.Equal(t, 1, b.countEvents(t, arn, "ActivityStarted"), arn)
	}
}
