package engine

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/engine/activity"
	"stepwise/history"
	"stepwise/internal/testkit/testwait"
	"stepwise/store"
)

// The takes asked for while one is in flight wait for it, then are made
// together: one take of as many tasks as they are, each task going to one
// of them, the others getting none.
func TestTakeGroupsTakeTogether(t *testing.T) {
	t.Parallel()
	var g takeGroups
	var mu sync.Mutex
	var asked []int
	release := make(chan struct{})
	seq := 0
	takeMany := func(n int) []store.QueuedTask {
		mu.Lock()
		asked = append(asked, n)
		first := len(asked) == 1
		mu.Unlock()
		if first {
			<-release
		}
		k := min(n, 3)
		tasks := make([]store.QueuedTask, k)
		for i := range tasks {
			seq++
			tasks[i] = store.QueuedTask{ExecutionArn: "x", TaskID: strconv.Itoa(seq)}
		}
		return tasks
	}
	type got struct {
		id string
		ok bool
	}
	results := make(chan got, 6)
	take := func() {
		_, id, ok := g.take("act", takeMany)
		results <- got{id, ok}
	}
	go take()
	testwait.Until(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(asked) == 1 }, 10*time.Second, time.Millisecond)
	for range 5 {
		go take()
	}
	waiting := func() int {
		g.mu.Lock()
		defer g.mu.Unlock()
		if grp := g.by["act"]; grp != nil {
			return len(grp.waiting)
		}
		return 0
	}
	testwait.Until(t, func() bool { return waiting() == 5 }, 10*time.Second, time.Millisecond)
	close(release)
	ids := map[string]bool{}
	none := 0
	for range 6 {
		r := <-results
		if !r.ok {
			none++
			continue
		}
		require.False(t, ids[r.id], "task %s taken twice", r.id)
		ids[r.id] = true
	}
	require.Equal(t, []int{1, 5}, asked, "the five that waited are taken together")
	require.Len(t, ids, 4)
	require.Equal(t, 2, none)
	require.Empty(t, g.by, "no take left in flight")
}

// A task of this node's execution goes straight to a poller of this node
// waiting for its activity: it never enters the store's queue, and the
// hand-out is recorded as any other.
func TestClusterTaskGivenToWaitingPoller(t *testing.T) {
	c := newCluster(t, 1)
	ctx := context.Background()
	sm, m := c.machine(t, "act", `{"StartAt": "A", "States": {"A": {"Type": "Task", "Resource": "`+activityArn+`", "End": true}}}`)
	got := make(chan *activity.Handout, 1)
	go func() {
		task, err := c.nodes[0].PollActivity(ctx, activityArn, "worker", 30*time.Second)
		if err != nil {
			t.Error(err)
		}
		got <- task
	}()
	testwait.Until(t, func() bool { return c.nodes[0].activities.Waiting(activityArn) == 1 }, 10*time.Second, time.Millisecond, "the poller waits")
	x := c.start(t, 0, sm, m, "e", `{"i": 1}`)
	task := <-got
	require.NotNil(t, task)
	require.JSONEq(t, `{"i": 1}`, task.Input)
	var used bool
	require.NoError(t, c.drvs[0].Pool().QueryRow(ctx, `SELECT is_called FROM stepwise_activity_queue_seq`).Scan(&used))
	require.False(t, used, "the task never entered the store's queue")
	require.NoError(t, c.nodes[0].SendTaskSuccess(ctx, task.Token, `{}`))
	b := c.bundle()
	b.waitStatus(t, x.Arn, history.StatusSucceeded)
	require.Equal(t, []string{"ExecutionStarted", "TaskStateEntered", "ActivityScheduled", "ActivityStarted",
		"ActivitySucceeded", "TaskStateExited", "ExecutionSucceeded"}, b.history(t, x.Arn))
}
