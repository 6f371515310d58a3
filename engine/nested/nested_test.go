package nested

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/engine/start"
	"stepwise/engine/task"
	"stepwise/history"
	"stepwise/internal/testkit/testwait"
	"stepwise/interp"
	"stepwise/jsonvalue"
	"stepwise/store"
	"stepwise/store/sqlitestore"
)

const (
	region  = "us-east-1"
	account = "123456789012"
	smArn   = "arn:aws:states:us-east-1:123456789012:stateMachine:child"
)

// fakeHost is a Host over a store whose children start through a real
// Starter (resolved and checked there) onto fakeRuns, which records each
// child as a running execution.
type fakeHost struct {
	ex      store.Executor
	starter *start.Starter
	mu      sync.Mutex
	started []*start.Params
	stopped []string
}

func (h *fakeHost) Executor() store.Executor { return h.ex }

func (h *fakeHost) Start(ctx context.Context, r *start.Request) (*store.Execution, error) {
	return h.starter.Start(ctx, r)
}

func (h *fakeHost) Redrive(context.Context, string) (*store.Execution, error) {
	panic("no child is redriven")
}

func (h *fakeHost) Submitted(context.Context, *task.Task, any) {}
func (h *fakeHost) WaitOn(string, string, string) bool         { return true }
func (h *fakeHost) Ended(string)                               {}
func (h *fakeHost) Go(fn func(context.Context))                { fn(context.Background()) }
func (h *fakeHost) Stop(_ context.Context, childArn, _ string) error {
	h.mu.Lock()
	h.stopped = append(h.stopped, childArn)
	h.mu.Unlock()
	return nil
}

// fakeRuns is the engine under the Starter: a start records the child.
type fakeRuns struct{ h *fakeHost }

func (r fakeRuns) StartExecution(_ context.Context, p *start.Params) (*store.Execution, error) {
	r.h.mu.Lock()
	r.h.started = append(r.h.started, p)
	r.h.mu.Unlock()
	return &store.Execution{Arn: p.ExecutionArn, Name: p.Name, StateMachineArn: p.StateMachine.Arn, Input: p.Input,
		Status: history.StatusRunning, StartDate: time.UnixMilli(1_700_000_000_000)}, nil
}

func (fakeRuns) StartSyncExecution(context.Context, *start.Params) (*start.SyncResult, error) {
	panic("no child runs synchronously")
}

func (fakeRuns) RedriveExecution(context.Context, string) (*store.Execution, error) {
	panic("no child is redriven")
}

func setup(t *testing.T) (*Runner, *fakeHost) {
	t.Helper()
	ctx := context.Background()
	drv, err := sqlitestore.Open(ctx, filepath.Join(t.TempDir(), "db"), sqlitestore.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { drv.Close() })
	now := time.Now().UTC().Truncate(time.Millisecond)
	_, err = drv.Executor().StateMachineInsert(ctx, &store.StateMachineInsertParams{StateMachine: &store.StateMachine{
		Arn: smArn, Name: "child", Type: "STANDARD", Status: "ACTIVE", RevisionID: "r1",
		Definition: `{"StartAt": "P", "States": {"P": {"Type": "Pass", "End": true}}}`,
		RoleArn:    "arn:aws:iam::123456789012:role/r", CreatedAt: now, UpdatedAt: now,
	}})
	require.NoError(t, err)
	h := &fakeHost{ex: drv.Executor()}
	h.starter = start.New(start.Config{Store: drv.Executor(), Runs: fakeRuns{h}, Region: region, Account: account})
	return New(h, Config{}), h
}

func run(t *testing.T, r *Runner, resource, params string) task.Result {
	t.Helper()
	p, err := jsonvalue.ParseString(params)
	require.NoError(t, err)
	tk := &task.Task{ExecutionArn: "arn:aws:states:us-east-1:123456789012:execution:parent:p1", ID: "t1",
		Request: &interp.TaskRequest{Resource: resource, Parameters: p}}
	require.True(t, r.Takes(tk))
	ch := make(chan task.Result, 1)
	r.Run(context.Background(), tk, func(res task.Result) { ch <- res })
	select {
	case res := <-ch:
		return res
	case <-time.After(30 * time.Second):
		t.Fatal("no result")
		return task.Result{}
	}
}

// A start the StartExecution API would refuse fails the task with the
// API's code and message, worded as the AWS SDK words a service error.
func TestRefusedStarts(t *testing.T) {
	r, h := setup(t)
	for params, want := range map[string][2]string{
		`{"StateMachineArn": "` + smArn + `x"}`:                                   {"StepFunctions.StateMachineDoesNotExistException", "State Machine Does Not Exist: '" + smArn + "x'"},
		`{"StateMachineArn": "` + smArn + `", "Name": "a b"}`:                     {"StepFunctions.InvalidNameException", "Invalid Name: 'a b'"},
		`{"StateMachineArn": "` + smArn + `", "Input": "{no"}`:                    {"StepFunctions.InvalidExecutionInputException", "Invalid State Machine Execution Input: "},
		`{"StateMachineArn": "nope"}`:                                             {"StepFunctions.InvalidArnException", "Invalid Arn: 'Invalid ARN prefix: nope'"},
		`{"StateMachineArn": "arn:aws:states:us-east-1:123456789012:activity:a"}`: {"StepFunctions.InvalidArnException", "Invalid Arn: 'Resource type not valid in this context: activity'"},
		`{"StateMachineArn": "` + smArn + `:7"}`:                                  {"StepFunctions.StateMachineDoesNotExistException", "State Machine Does Not Exist: '" + smArn + ":7'"},
	} {
		res := run(t, r, Resource, params)
		require.NotNil(t, res.Failure, params)
		require.Equal(t, want[0], res.Failure.Name, params)
		require.True(t, strings.HasPrefix(res.Failure.Cause, want[1]), "%s: %s", params, res.Failure.Cause)
		require.Contains(t, res.Failure.Cause, "(Service: AWSStepFunctions; Status Code: 400;")
	}
	require.Empty(t, h.started)
}

// A child without a name is named after its parent's task, so the task
// dispatched again names the same child.
func TestChildNamedAfterTask(t *testing.T) {
	r, h := setup(t)
	first := run(t, r, Resource, `{"StateMachineArn": "`+smArn+`"}`)
	second := run(t, r, Resource, `{"StateMachineArn": "`+smArn+`"}`)
	require.Nil(t, first.Failure)
	arn, _ := first.Output.(*jsonvalue.Object).Get("ExecutionArn")
	again, _ := second.Output.(*jsonvalue.Object).Get("ExecutionArn")
	require.Equal(t, arn, again)
	require.Len(t, h.started, 2)
	require.Equal(t, h.started[0].Name, h.started[1].Name)
	require.True(t, strings.HasPrefix(arn.(string), "arn:aws:states:us-east-1:123456789012:execution:child:"))
}

// A .sync task ends with its child; a cancelled one stops its child.
func TestSyncWaitsForTheChild(t *testing.T) {
	r, h := setup(t)
	p, _ := jsonvalue.ParseString(`{"StateMachineArn": "` + smArn + `", "Name": "c1"}`)
	tk := &task.Task{ExecutionArn: "arn:parent", ID: "t1", Request: &interp.TaskRequest{Resource: Resource + ".sync:2", Parameters: p}}
	ch := make(chan task.Result, 1)
	r.Run(context.Background(), tk, func(res task.Result) { ch <- res })
	childArn := "arn:aws:states:us-east-1:123456789012:execution:child:c1"
	testwait.Until(t, func() bool { return len(r.Waited()) > 0 }, 10*time.Second, time.Millisecond, "the task waits for its child")
	require.Equal(t, []string{childArn}, r.Waited())
	out := `{"done": true}`
	r.ChildEnded(&store.Execution{Arn: childArn, Name: "c1", StateMachineArn: smArn, Input: "{}", Output: &out,
		Status: history.StatusSucceeded, StartDate: time.UnixMilli(1)})
	res := <-ch
	require.Nil(t, res.Failure)
	got, _ := res.Output.(*jsonvalue.Object).Get("Output")
	require.Equal(t, `{"done":true}`, jsonvalue.String(got), ".sync:2 gives the output as JSON")

	r.Run(context.Background(), &task.Task{ExecutionArn: "arn:parent", ID: "t2", Request: &interp.TaskRequest{Resource: Resource + ".sync", Parameters: p}},
		func(task.Result) {})
	testwait.Until(t, func() bool { return len(r.Waited()) > 0 }, 10*time.Second, time.Millisecond, "the task waits for its child")
	r.Cancel("arn:parent", "t2")
	require.Equal(t, []string{childArn}, h.stopped)
}
