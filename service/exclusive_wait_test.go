package service_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/engine"
	"stepwise/engine/task"
	"stepwise/internal/testkit/pgtest"
	"stepwise/internal/testkit/slowtest"
	"stepwise/internal/testkit/testwait"
	"stepwise/jsonvalue"
	"stepwise/service"
	"stepwise/sfnapi"
	"stepwise/store"
	"stepwise/store/pgstore"
	"stepwise/store/sqlitestore"
)

// node is a server over a store that the test can restart.
type node struct {
	t     *testing.T
	open  func() store.Driver
	drv   store.Driver
	eng   *engine.Engine
	svc   *service.Service
	tasks *heldTasks
}

func (n *node) boot() {
	t := n.t
	ctx := context.Background()
	n.drv = n.open()
	n.tasks = &heldTasks{pending: map[string]func(task.Result){}}
	e, err := engine.New(n.drv, engine.Config{Region: "us-east-1", Account: "123456789012", Tasks: n.tasks, TokenKey: []byte("key"), WaitTimeScale: 1})
	require.NoError(t, err)
	require.NoError(t, e.Start(ctx))
	<-e.Resumed()
	n.eng = e
	n.svc, err = service.New(n.drv, e, service.Config{})
	require.NoError(t, err)
}

func (n *node) stop() {
	n.eng.Stop()
	n.drv.Close()
}

// running says which executions' tasks run on the node.
func (n *node) running() []string {
	n.tasks.mu.Lock()
	defer n.tasks.mu.Unlock()
	var out []string
	for k := range n.tasks.pending {
		arn, _, _ := strings.Cut(k, "/")
		out = append(out, arn)
	}
	return out
}

// finish ends the running task of execution arn.
func (n *node) finish(arn string) {
	n.tasks.mu.Lock()
	defer n.tasks.mu.Unlock()
	for k, done := range n.tasks.pending {
		if strings.HasPrefix(k, arn+"/") {
			delete(n.tasks.pending, k)
			go done(task.Result{Output: jsonvalue.NewObject(0)})
			return
		}
	}
	n.t.Fatalf("no task of %s runs", arn)
}

// TestExclusiveWait: state machines tagged stepwise:exclusive=<group>
// run one at a time in the order they were started: a start while the
// group is held is accepted (RUNNING) but runs nothing, says what it
// waits for, and runs once the earlier ones have ended, across a
// restart; a waiting one stopped frees its place; a synchronous start is
// refused.
func TestExclusiveWait(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.db")
	n := &node{t: t, open: func() store.Driver {
		drv, err := sqlitestore.Open(context.Background(), path, sqlitestore.Options{})
		require.NoError(t, err)
		return drv
	}}
	n.boot()
	t.Cleanup(n.stop)
	exclusiveWait(t, n, n)
}

// TestExclusiveWaitPostgres: the same on PostgreSQL.
func TestExclusiveWaitPostgres(t *testing.T) {
	t.Parallel()
	slowtest.Require(t, "runs PostgreSQL")
	url := pgtest.NewDatabase(t)
	open := func() store.Driver {
		drv, err := pgstore.Open(context.Background(), url, pgstore.Options{})
		require.NoError(t, err)
		return drv
	}
	n := &node{t: t, open: open}
	n.boot()
	t.Cleanup(n.stop)
	exclusiveWait(t, n, n)
}

func exclusiveWait(t *testing.T, first, other *node) {
	ctx := context.Background()
	def := `{"StartAt": "T", "States": {"T": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "End": true}}}`
	tag := []service.Tag{{Key: ptr("stepwise:exclusive"), Value: ptr("nightly")}}
	for _, name := range []string{"a", "b"} {
		_, err := first.svc.CreateStateMachine(ctx, &service.CreateStateMachineInput{Name: name, Definition: def, RoleArn: roleArn, Tags: tag})
		require.NoError(t, err)
	}
	express := "EXPRESS"
	_, err := first.svc.CreateStateMachine(ctx, &service.CreateStateMachineInput{Name: "x", Definition: def, RoleArn: roleArn, Tags: tag, Type: express})
	require.NoError(t, err)
	startOn := func(n *node, sm, name string) string {
		t.Helper()
		out, err := n.svc.StartExecution(ctx, &service.StartExecutionInput{StateMachineArn: "arn:aws:states:us-east-1:123456789012:stateMachine:" + sm, Name: &name})
		require.NoError(t, err)
		return out.ExecutionArn
	}
	status := func(n *node, arn string) string {
		t.Helper()
		d, err := n.svc.DescribeExecution(ctx, &service.DescribeExecutionInput{ExecutionArn: arn})
		require.NoError(t, err)
		return d.Status
	}
	waitingFor := func(n *node, arn string) string {
		t.Helper()
		st, err := n.svc.ExecutionOperatorStatus(ctx, arn)
		require.NoError(t, err)
		require.Empty(t, st.Held, "the group's hold is not an operator's")
		return st.WaitingFor
	}
	runs := func(arn string) func() bool {
		return func() bool {
			for _, n := range []*node{first, other} {
				for _, a := range n.running() {
					if a == arn {
						return true
					}
				}
			}
			return false
		}
	}
	a1 := startOn(first, "a", "a1")
	testwait.Until(t, runs(a1), 10*time.Second, 5*time.Millisecond)
	b1 := startOn(other, "b", "b1")
	a2 := startOn(first, "a", "a2")
	a3 := startOn(other, "a", "a3")
	for _, arn := range []string{b1, a2, a3} {
		require.Equal(t, "RUNNING", status(first, arn))
	}
	require.Equal(t, a1, waitingFor(first, b1))
	require.Equal(t, a1, waitingFor(other, a2), "the first earlier claim that holds the group")
	require.Empty(t, waitingFor(first, a1))

	_, err = first.svc.StartSyncExecution(ctx, &service.StartSyncExecutionInput{StateMachineArn: "arn:aws:states:us-east-1:123456789012:stateMachine:x"})
	var se *sfnapi.Error
	require.True(t, errors.As(err, &se), "%v", err)
	require.Equal(t, sfnapi.CodeExecutionLimitExceeded, se.Code)

	// A restart: the queue and its order are kept.
	first.stop()
	first.boot()
	testwait.Until(t, runs(a1), 20*time.Second, 5*time.Millisecond)
	time.Sleep(1500 * time.Millisecond) // a release loop's round or more
	require.False(t, runs(b1)(), "b1 waits for a1")
	require.Equal(t, a1, waitingFor(first, b1))

	// A waiting execution stopped frees its place.
	_, err = first.svc.StopExecution(ctx, &service.StopExecutionInput{ExecutionArn: a2})
	require.NoError(t, err)
	require.Equal(t, "ABORTED", status(first, a2))

	for _, n := range []*node{first, other} {
		for _, arn := range n.running() {
			if arn == a1 {
				n.finish(a1)
			}
		}
	}
	testwait.Until(t, func() bool { return status(first, a1) == "SUCCEEDED" }, 10*time.Second, 5*time.Millisecond)
	testwait.Until(t, runs(b1), 10*time.Second, 5*time.Millisecond)
	require.Equal(t, b1, waitingFor(first, a3))
	time.Sleep(1500 * time.Millisecond)
	require.False(t, runs(a3)(), "a3 waits for b1")
	for _, n := range []*node{first, other} {
		for _, arn := range n.running() {
			if arn == b1 {
				n.finish(b1)
			}
		}
	}
	testwait.Until(t, runs(a3), 10*time.Second, 5*time.Millisecond)
	require.Empty(t, waitingFor(first, a3))
	acts, err := first.svc.ListOperatorActions(ctx, &service.ListOperatorActionsInput{ExecutionArn: a3})
	require.NoError(t, err)
	require.Equal(t, "stepwise:exclusive", acts.Actions[0].By)
}
