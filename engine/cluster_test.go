package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/asl"
	"stepwise/engine/activity"
	"stepwise/engine/task"
	"stepwise/history"
	"stepwise/internal/testkit/pgtest"
	"stepwise/internal/testkit/testwait"
	"stepwise/store"
	"stepwise/store/pgstore"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// clusterLease is the nodes' lease in these tests: a dead node's
// executions are taken over within about a second.
const clusterLease = time.Second

// cluster is a few engines sharing one PostgreSQL database, each with a
// pool of its own as separate servers would have.
type cluster struct {
	url   string
	nodes []*Engine
	drvs  []*pgstore.Driver
	tasks *fakeTasks
}

func newCluster(t *testing.T, n int) *cluster {
	t.Helper()
	c := &cluster{url: pgtest.NewDatabase(t), tasks: newFakeTasks()}
	for i := range n {
		c.add(t, fmt.Sprintf("node-%d", i))
	}
	createActivity(t, c.drvs[0])
	return c
}

func (c *cluster) add(t *testing.T, id string) *Engine {
	t.Helper()
	return c.addWith(t, ClusterConfig{Node: id, Lease: clusterLease})
}

// addWith adds a node with its own cluster configuration.
func (c *cluster) addWith(t *testing.T, cc ClusterConfig) *Engine {
	t.Helper()
	ctx := context.Background()
	drv, err := pgstore.Open(ctx, c.url, pgstore.Options{})
	require.NoError(t, err)
	e, err := New(drv, Config{Region: region, Account: account, WaitTimeScale: 1, Tasks: c.tasks,
		TokenKey: []byte("test key, the same across restarts"), Cluster: &cc})
	require.NoError(t, err)
	require.NoError(t, e.Start(ctx))
	<-e.Resumed()
	c.nodes, c.drvs = append(c.nodes, e), append(c.drvs, drv)
	t.Cleanup(func() {
		e.Stop()
		drv.Close()
	})
	return e
}

// crash ends a node as if its process died: nothing is released, its
// lease runs out.
func (c *cluster) crash(i int) {
	e := c.nodes[i]
	e.cl.Lose(errors.New("crashed by the test"))
	e.Stop()
}

func (c *cluster) machine(t *testing.T, name, def string) (*store.StateMachine, *asl.StateMachine) {
	t.Helper()
	b := &testBundle{drv: c.drvs[0]}
	return b.machine(t, name, def)
}

func (c *cluster) start(t *testing.T, node int, sm *store.StateMachine, m *asl.StateMachine, name, input string) *store.Execution {
	t.Helper()
	b := &testBundle{drv: c.drvs[node], engine: c.nodes[node]}
	return b.start(t, sm, m, name, input)
}

func (c *cluster) bundle() *testBundle { return &testBundle{drv: c.drvs[len(c.drvs)-1]} }

func (c *cluster) owner(t *testing.T, arn string) string {
	t.Helper()
	o, err := c.drvs[0].ExecutionOwner(context.Background(), arn)
	require.NoError(t, err)
	return o.Owner.Node
}

func TestClusterNeedsASharedStore(t *testing.T) {
	b := setup(t, 0)
	_, err := New(b.drv, Config{Region: region, Account: account, WaitTimeScale: 1, Cluster: &ClusterConfig{Node: "a"}})
	require.ErrorContains(t, err, "cannot be shared by several nodes")
	_, err = New(b.drv, Config{Region: region, Account: account, Cluster: &ClusterConfig{}})
	require.ErrorContains(t, err, "Cluster.Node is required")
	// A clock that jumps is one node's.
	_, err = New(b.drv, Config{Region: region, Account: account, Cluster: &ClusterConfig{Node: "a"}})
	require.ErrorContains(t, err, "a WaitTimeScale of 0 jumps the clock")
}

func TestClusterAcrossNodes(t *testing.T) {
	c := newCluster(t, 1)
	// Node 1's pollers look at the queue again only every hour: a task
	// reaches them by a wake-up or not at all.
	c.addWith(t, ClusterConfig{Node: "node-1", Lease: clusterLease, activityPoll: time.Hour})
	c.add(t, "node-2")
	ctx := context.Background()
	sm, m := c.machine(t, "act", `{"StartAt": "A", "States": {
		"A": {"Type": "Task", "Resource": "`+activityArn+`", "Next": "W"},
		"W": {"Type": "Wait", "Seconds": 1, "End": true}}}`)

	// Started on node 0: node 0 owns it. A poller on node 1 is handed
	// its task (woken by the queue, not a poll's timeout); the answer
	// arrives on node 2.
	polled := make(chan *activity.Handout, 1)
	go func() {
		task, err := c.nodes[1].PollActivity(ctx, activityArn, "w1", 30*time.Second)
		if err != nil {
			t.Error(err)
		}
		polled <- task
	}()
	time.Sleep(100 * time.Millisecond) // the poller waits
	row := c.start(t, 0, sm, m, "one", `{"n": 1}`)
	require.Equal(t, "node-0", c.owner(t, row.Arn))
	task := <-polled
	require.NotNil(t, task, "the waiting poller was woken by the task")
	require.JSONEq(t, `{"n": 1}`, task.Input)
	require.NoError(t, c.nodes[2].SendTaskHeartbeat(ctx, task.Token))
	require.NoError(t, c.nodes[2].SendTaskSuccess(ctx, task.Token, `{"done": true}`))
	require.ErrorIs(t, c.nodes[1].SendTaskSuccess(ctx, task.Token, `{}`), ErrTaskOver, "the owner's answer comes back")
	b := c.bundle()
	done := b.waitStatus(t, row.Arn, history.StatusSucceeded)
	require.JSONEq(t, `{"done": true}`, *done.Output)
	require.Equal(t, []string{"ExecutionStarted", "TaskStateEntered", "ActivityScheduled", "ActivityStarted",
		"ActivitySucceeded", "TaskStateExited", "WaitStateEntered", "WaitStateExited", "ExecutionSucceeded"}, b.history(t, row.Arn))

	// Stopped from another node.
	row = c.start(t, 0, sm, m, "two", `{}`)
	stopped, err := c.nodes[1].StopExecution(ctx, row.Arn, "Halt", "by node 1")
	require.NoError(t, err)
	require.Equal(t, history.StatusAborted, stopped.Status)
	require.NotNil(t, stopped.StopDate)
	b.waitStatus(t, row.Arn, history.StatusAborted)

	// Redriven from another node, which then runs it.
	redriven, err := c.nodes[2].RedriveExecution(ctx, row.Arn)
	require.NoError(t, err)
	require.Equal(t, history.StatusRunning, redriven.Status)
	require.Equal(t, "node-2", c.owner(t, row.Arn))
	task, err = c.nodes[0].PollActivity(ctx, activityArn, "w0", 10*time.Second)
	require.NoError(t, err)
	require.NotNil(t, task)
	require.NoError(t, c.nodes[1].SendTaskFailure(ctx, task.Token, "Bad", "it failed"))
	b.waitStatus(t, row.Arn, history.StatusFailed)

	n, err := c.drvs[0].ActivityQueued(ctx, activityArn)
	require.NoError(t, err)
	require.Zero(t, n)
}

func TestClusterActivitiesEachTaskToOneWorker(t *testing.T) {
	c := newCluster(t, 3)
	ctx := context.Background()
	sm, m := c.machine(t, "act", `{"StartAt": "A", "States": {"A": {"Type": "Task", "Resource": "`+activityArn+`", "End": true}}}`)
	const n = 60
	var arns []string
	for i := range n {
		arns = append(arns, c.start(t, i%3, sm, m, fmt.Sprintf("e%d", i), fmt.Sprintf(`{"i": %d}`, i)).Arn)
	}
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	for w := range 9 {
		wg.Go(func() {
			node := c.nodes[w%3]
			for {
				task, err := node.PollActivity(ctx, activityArn, fmt.Sprintf("worker-%d", w), 500*time.Millisecond)
				if err != nil {
					t.Error(err)
					return
				}
				if task == nil {
					return
				}
				mu.Lock()
				seen[task.Input]++
				mu.Unlock()
				if err := c.nodes[(w+1)%3].SendTaskSuccess(ctx, task.Token, task.Input); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	require.Len(t, seen, n)
	for input, count := range seen {
		require.Equal(t, 1, count, "task %s handed out more than once", input)
	}
	b := c.bundle()
	for _, arn := range arns {
		b.waitStatus(t, arn, history.StatusSucceeded)
		require.Equal(t, []string{"ExecutionStarted", "TaskStateEntered", "ActivityScheduled", "ActivityStarted",
			"ActivitySucceeded", "TaskStateExited", "ExecutionSucceeded"}, b.history(t, arn))
	}
}

func TestClusterFailover(t *testing.T) {
	c := newCluster(t, 1)
	// Node 1's lease lasts a minute: its executions move within the
	// test's waits only if it releases them.
	c.addWith(t, ClusterConfig{Node: "node-1", Lease: time.Minute})
	ctx := context.Background()
	sm, m := c.machine(t, "wait", `{"StartAt": "W", "States": {
		"W": {"Type": "Wait", "Seconds": 2, "Next": "A"},
		"A": {"Type": "Task", "Resource": "`+activityArn+`", "End": true}}}`)
	var arns []string
	for i := range 10 {
		arns = append(arns, c.start(t, 0, sm, m, fmt.Sprintf("e%d", i), `{}`).Arn)
	}
	// A worker holds a task of node 0's before it dies, and answers it after.
	held := c.start(t, 0, sm, m, "held", `{}`)
	time.Sleep(2100 * time.Millisecond)
	task, err := c.nodes[1].PollActivity(ctx, activityArn, "w", 10*time.Second)
	require.NoError(t, err)
	require.NotNil(t, task)

	require.True(t, c.nodes[0].Leads(ctx), "the live node with the smallest id leads")
	require.False(t, c.nodes[1].Leads(ctx))
	c.crash(0)
	b := c.bundle()
	testwait.Until(t, func() bool { return c.owner(t, arns[0]) == "node-1" }, 30*time.Second, 10*time.Millisecond,
		"taken over once the lease ran out")
	testwait.Until(t, func() bool { return c.nodes[1].Leads(ctx) }, 30*time.Second, 50*time.Millisecond, "the survivor leads once the dead node's lease ran out")
	require.NoError(t, c.nodes[1].SendTaskSuccess(ctx, task.Token, `{"late": true}`))
	for range len(arns) {
		task, err := c.nodes[1].PollActivity(ctx, activityArn, "w", 10*time.Second)
		require.NoError(t, err)
		require.NotNil(t, task, "every task is queued again by the new owner")
		require.NoError(t, c.nodes[1].SendTaskSuccess(ctx, task.Token, `{}`))
	}
	for _, arn := range append(arns, held.Arn) {
		b.waitStatus(t, arn, history.StatusSucceeded)
		require.Equal(t, []string{"ExecutionStarted", "WaitStateEntered", "WaitStateExited", "TaskStateEntered", "ActivityScheduled",
			"ActivityStarted", "ActivitySucceeded", "TaskStateExited", "ExecutionSucceeded"}, b.history(t, arn))
	}

	// A node that stops releases its executions: they move at once.
	x := c.start(t, 1, sm, m, "moved", `{}`)
	c.add(t, "node-2")
	c.nodes[1].Stop()
	testwait.Until(t, func() bool { return c.owner(t, x.Arn) == "node-2" }, 30*time.Second, 5*time.Millisecond,
		"released, not left to its lease of a minute")
	task, err = c.nodes[2].PollActivity(ctx, activityArn, "w", 10*time.Second)
	require.NoError(t, err)
	require.NotNil(t, task)
	require.NoError(t, c.nodes[2].SendTaskSuccess(ctx, task.Token, `{}`))
	b.waitStatus(t, x.Arn, history.StatusSucceeded)
}

// A node whose lease ran out (as if it was paused past it) writes nothing
// more once another node took its executions over, and learns it lost its
// lease.
func TestClusterFencing(t *testing.T) {
	c := newCluster(t, 2)
	ctx := context.Background()
	sm, m := c.machine(t, "act", `{"StartAt": "A", "States": {"A": {"Type": "Task", "Resource": "`+activityArn+`", "End": true}}}`)
	x := c.start(t, 0, sm, m, "x", `{}`)
	tk, err := c.nodes[0].PollActivity(ctx, activityArn, "w", 10*time.Second)
	require.NoError(t, err)
	require.NotNil(t, tk)

	_, err = c.drvs[1].Pool().Exec(ctx, `UPDATE stepwise_node SET expires_at = 0 WHERE id = 'node-0'`)
	require.NoError(t, err)
	testwait.Until(t, func() bool { return c.owner(t, x.Arn) == "node-1" }, 30*time.Second, 10*time.Millisecond)

	err = c.nodes[0].SendTaskSuccess(ctx, tk.Token, `{"from": "node-0"}`)
	require.Error(t, err, "the former owner's step is not written")
	require.True(t, errors.Is(err, store.ErrFenced) || errors.Is(err, task.ErrStopped), "got %v", err)
	select {
	case <-c.nodes[0].Lost():
		require.ErrorIs(t, c.nodes[0].LostErr(), store.ErrFenced)
	case <-time.After(5 * time.Second):
		t.Fatal("the node did not find out it lost its lease")
	}
	b := c.bundle()
	require.Equal(t, []string{"ExecutionStarted", "TaskStateEntered", "ActivityScheduled", "ActivityStarted"}, b.history(t, x.Arn))
	require.NoError(t, c.nodes[1].SendTaskSuccess(ctx, tk.Token, `{"from": "node-1"}`))
	row := b.waitStatus(t, x.Arn, history.StatusSucceeded)
	require.JSONEq(t, `{"from": "node-1"}`, *row.Output)
}

// A task whose queue row a poller took and never handed out (its node
// died in between) is queued again by its owner's sweep; one a worker
// holds is not.
func TestClusterSweepQueuesLostTasks(t *testing.T) {
	c := newCluster(t, 1)
	ctx := context.Background()
	sm, m := c.machine(t, "act", `{"StartAt": "A", "States": {"A": {"Type": "Task", "Resource": "`+activityArn+`", "End": true}}}`)
	held := c.start(t, 0, sm, m, "held", `{}`)
	task, err := c.nodes[0].PollActivity(ctx, activityArn, "w", 5*time.Second)
	require.NoError(t, err)
	require.NotNil(t, task)
	lost := c.start(t, 0, sm, m, "lost", `{}`)
	testwait.Until(t, func() bool {
		arn, _, ok, err := c.drvs[0].ActivityTake(ctx, activityArn, "elsewhere")
		require.NoError(t, err)
		return ok && arn == lost.Arn
	}, 30*time.Second, 5*time.Millisecond, "a poller that died took the row")

	c.nodes[0].sweepQueue()
	testwait.Until(t, func() bool {
		n, err := c.drvs[0].ActivityQueued(ctx, activityArn)
		require.NoError(t, err)
		return n == 1
	}, 30*time.Second, 5*time.Millisecond, "the lost task only: the held one stays with its worker")
	again, err := c.nodes[0].PollActivity(ctx, activityArn, "w", 5*time.Second)
	require.NoError(t, err)
	require.NotNil(t, again)
	require.NoError(t, c.nodes[0].SendTaskSuccess(ctx, again.Token, `{}`))
	require.NoError(t, c.nodes[0].SendTaskSuccess(ctx, task.Token, `{}`))
	b := c.bundle()
	b.waitStatus(t, lost.Arn, history.StatusSucceeded)
	b.waitStatus(t, held.Arn, history.StatusSucceeded)
}
