package engine

import (
	"context"
	"encoding/json"
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

// testNotice is the body the tests render of a status change.
type testNotice struct {
	ExecutionArn string
	Status       history.ExecutionStatus
	Input        string
	Output       *string
	Error, Cause *string
	StopDate     *time.Time
	RedriveCount int
	RedriveDate  *time.Time
	At           time.Time
}

func renderNotice(row *store.Execution, at time.Time) []byte {
	b, _ := json.Marshal(&testNotice{ExecutionArn: row.Arn, Status: row.Status, Input: row.Input, Output: row.Output, Error: row.Error,
		Cause: row.Cause, StopDate: row.StopDate, RedriveCount: row.RedriveCount, RedriveDate: row.RedriveDate, At: at})
	return b
}

// notices reads the status-change notices in the outbox.
func (b *testBundle) notices(t *testing.T) []testNotice {
	t.Helper()
	evs, err := b.drv.Executor().OutboxList(context.Background(), 0, 1000)
	require.NoError(t, err)
	var out []testNotice
	for _, ev := range evs {
		var n testNotice
		require.NoError(t, json.Unmarshal(ev.Body, &n))
		out = append(out, n)
	}
	return out
}

func statuses(ns []testNotice, arn string) []string {
	var out []string
	for _, n := range ns {
		if n.ExecutionArn == arn {
			out = append(out, string(n.Status))
		}
	}
	return out
}

// Every status change of a STANDARD execution leaves a notice in the
// outbox, written with its step: a start that ends at once tells of
// RUNNING and of its end, a redrive of RUNNING again.
func TestStatusChangeNotices(t *testing.T) {
	t.Parallel()
	b := &testBundle{path: t.TempDir() + "/stepwise.db", tasks: newFakeTasks(), config: func(c *Config) { c.StatusNotice = renderNotice }}
	b.open(t, 1)
	createActivity(t, b.drv)

	sm, m := b.machine(t, "pass", `{"StartAt": "A", "States": {"A": {"Type": "Pass", "End": true}}}`)
	quick := b.start(t, sm, m, "quick", `{"in": 1}`)
	ns := b.notices(t)
	require.Equal(t, []string{"RUNNING", "SUCCEEDED"}, statuses(ns, quick.Arn))
	require.Nil(t, ns[0].StopDate)
	require.Nil(t, ns[0].Output)
	require.NotNil(t, ns[1].StopDate)
	require.Equal(t, `{"in": 1}`, ns[1].Input)
	require.Equal(t, `{"in":1}`, *ns[1].Output)

	sm2, m2 := b.machine(t, "task", `{"StartAt": "T", "States": {"T": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "End": true}}}`)
	x := b.start(t, sm2, m2, "x", `{}`)
	b.tasks.waitPending(t, 1)
	require.Equal(t, []string{"RUNNING"}, statuses(b.notices(t), x.Arn), "a step that keeps the status tells nothing")
	b.tasks.complete(task.Result{Failure: failure.New("Broken", "fix me")})
	b.waitStatus(t, x.Arn, history.StatusFailed)
	_, err := b.engine.RedriveExecution(context.Background(), x.Arn)
	require.NoError(t, err)
	b.tasks.waitPending(t, 1)
	_, err = b.engine.StopExecution(context.Background(), x.Arn, "Manual", "stop")
	require.NoError(t, err)
	ns = b.notices(t)
	require.Equal(t, []string{"RUNNING", "FAILED", "RUNNING", "ABORTED"}, statuses(ns, x.Arn))
	var failed, redriven testNotice
	for _, n := range ns {
		if n.ExecutionArn == x.Arn && n.Status == "FAILED" {
			failed = n
		}
		if n.ExecutionArn == x.Arn && n.Status == "RUNNING" && n.RedriveCount == 1 {
			redriven = n
		}
	}
	require.Equal(t, "Broken", *failed.Error)
	require.Equal(t, "fix me", *failed.Cause)
	require.NotNil(t, redriven.RedriveDate, "the redrive's notice")

	// Synchronous EXPRESS executions are not stored and tell nothing.
	exp, expM := b.machine(t, "express", `{"StartAt": "A", "States": {"A": {"Type": "Pass", "End": true}}}`)
	exp.Type = "EXPRESS"
	_, err = b.engine.StartSyncExecution(context.Background(), &start.Params{StateMachine: exp, Machine: expM,
		ExecutionArn: "arn:aws:states:us-east-1:123456789012:express:express:s:1", Name: "s", Input: "{}"})
	require.NoError(t, err)
	require.Len(t, b.notices(t), len(ns))
}

// Without StatusNotice nothing is written to the outbox.
func TestNoNoticesByDefault(t *testing.T) {
	t.Parallel()
	b := setup(t, 0)
	sm, m := b.machine(t, "pass", `{"StartAt": "A", "States": {"A": {"Type": "Pass", "End": true}}}`)
	b.start(t, sm, m, "quick", `{}`)
	require.Empty(t, b.notices(t))
}

type recorder struct {
	mu      sync.Mutex
	steps   []CommittedStep
	batches int
	resumed []string
}

func (r *recorder) StepCommitted(s *CommittedStep) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := *s
	row := *s.Execution
	c.Execution = &row
	r.steps = append(r.steps, c)
}

func (r *recorder) BatchCommitted([]*store.Step, time.Duration, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.batches++
}

func (r *recorder) Resumed(arn string, _ time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.resumed = append(r.resumed, arn)
}

func (r *recorder) events(arn string) (types []string, ends []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.steps {
		if s.Execution.Arn != arn {
			continue
		}
		for _, ev := range s.Events {
			types = append(types, string(ev.Type))
		}
		if s.Execution.Status != s.Previous {
			ends = append(ends, string(s.Previous)+">"+string(s.Execution.Status))
		}
	}
	return types, ends
}

// The observer sees every committed step's events (the whole history,
// once), the status it changed, the task it took, and the resumptions.
func TestObserverSeesTheHistory(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	b := &testBundle{path: t.TempDir() + "/stepwise.db", tasks: newFakeTasks(), config: func(c *Config) { c.Observer = rec }}
	b.open(t, 0)
	createActivity(t, b.drv)
	sm, m := b.machine(t, "wt", `{"StartAt": "W", "States": {
		"W": {"Type": "Wait", "Seconds": 5, "Next": "T"},
		"T": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "End": true}}}`)
	row := b.start(t, sm, m, "e1", `{}`)
	b.tasks.waitPending(t, 1)
	b.close()
	b.open(t, 0)
	b.tasks.waitPending(t, 1)
	b.tasks.complete(task.Result{Output: "done"})
	b.waitStatus(t, row.Arn, history.StatusSucceeded)
	// The observer is told of a step once its commit returns: a moment
	// after a reader of the store can see it.
	testwait.Until(t, func() bool {
		_, ends := rec.events(row.Arn)
		return len(ends) == 2
	}, 30*time.Second, time.Millisecond)
	types, ends := rec.events(row.Arn)
	require.Equal(t, b.history(t, row.Arn), types)
	require.Equal(t, []string{">RUNNING", "RUNNING>SUCCEEDED"}, ends)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	require.Contains(t, rec.resumed, row.Arn)
	require.Positive(t, rec.batches)
	var sawTask bool
	for _, s := range rec.steps {
		if s.Task != nil && s.Task.Resource == "arn:aws:states:::lambda:invoke" {
			sawTask = true
		}
	}
	require.True(t, sawTask, "a task's result step names its task")
}
