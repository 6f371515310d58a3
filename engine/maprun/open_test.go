package maprun

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/engine/task"
	"stepwise/history"
	"stepwise/internal/testkit/testwait"
	"stepwise/interp/maprun"
	"stepwise/store"
)

// Past the open-run limit a map run waits in the backlog, starting no
// child, until an open one ends; the gauges count both.
func TestOpenLimitBacklogsRuns(t *testing.T) {
	h := newFakeHost(t)
	rn := New(h, Config{Now: h.Now, Region: "us-east-1", Account: "123456789012", OpenLimit: 1})
	require.Equal(t, Gauges{Limit: 1}, rn.Gauges())
	require.Equal(t, DefaultOpenLimit, New(h, Config{Now: h.Now}).Gauges().Limit, "AWS's quota by default")

	const secondArn = "arn:aws:states:us-east-1:123456789012:mapRun:fan/M:1d6f1b7e-7d1c-3b5a-9c1e-2f4a5b6c7d8e"
	first := mapRunTask([]any{"a"}, 1)
	second := mapRunTask([]any{"b"}, 1)
	second.Request.MapRun.Arn = secondArn
	answered := make(chan task.Result, 2)
	rn.Run(context.Background(), first, func(r task.Result) { answered <- r })
	names := maprun.NewNames(mapRunArn, "us-east-1", "123456789012", "fan", "M", false)
	testwait.Until(t, func() bool { return slices.Contains(h.running(), names.Arn(0)) }, 10*time.Second, time.Millisecond)

	rn.Run(context.Background(), second, func(r task.Result) { answered <- r })
	testwait.Until(t, func() bool { return rn.Gauges().Backlog == 1 }, 10*time.Second, time.Millisecond)
	require.Equal(t, Gauges{Open: 1, Limit: 1, Backlog: 1}, rn.Gauges())
	require.Len(t, h.running(), 1, "the run in the backlog starts no child")

	h.end(rn, names.Arn(0), history.StatusSucceeded, `"a"`)
	secondNames := maprun.NewNames(secondArn, "us-east-1", "123456789012", "fan", "M", false)
	testwait.Until(t, func() bool { return slices.Contains(h.running(), secondNames.Arn(0)) }, 10*time.Second, time.Millisecond,
		"the first run's end admits the second")
	require.Equal(t, Gauges{Open: 1, Limit: 1}, rn.Gauges())
	h.end(rn, secondNames.Arn(0), history.StatusSucceeded, `"b"`)
	for range 2 {
		select {
		case r := <-answered:
			require.Nil(t, r.Failure)
		case <-time.After(10 * time.Second):
			t.Fatal("a run did not answer")
		}
	}
	require.Equal(t, Gauges{Limit: 1}, rn.Gauges())
}

// A nested map run (its Map runs in a child execution of another map
// run) is opened at once, past the limit: its parent run holds a slot
// and waits on it, so queueing it would never end.
func TestNestedRunIsNotQueued(t *testing.T) {
	h := newFakeHost(t)
	rn := New(h, Config{Now: h.Now, Region: "us-east-1", Account: "123456789012", OpenLimit: 1})
	const childArn = "arn:aws:states:us-east-1:123456789012:execution:fan/M:child-0"
	h.st.mu.Lock()
	h.st.execs[childArn] = &store.Execution{Arn: childArn, Name: "child-0", Status: history.StatusRunning, MapRunArn: mapRunArn,
		StateMachineArn: "arn:aws:states:us-east-1:123456789012:stateMachine:fan/M", RevisionID: "r1"}
	h.st.mu.Unlock()
	first := mapRunTask([]any{"a"}, 1)
	rn.Run(context.Background(), first, func(task.Result) {})
	names := maprun.NewNames(mapRunArn, "us-east-1", "123456789012", "fan", "M", false)
	testwait.Until(t, func() bool { return slices.Contains(h.running(), names.Arn(0)) }, 10*time.Second, time.Millisecond)

	const innerArn = "arn:aws:states:us-east-1:123456789012:mapRun:fan/M/N:2e7f1b7e-7d1c-3b5a-9c1e-2f4a5b6c7d8e"
	inner := mapRunTask([]any{"x"}, 1)
	inner.ExecutionArn, inner.ID = childArn, "t2"
	inner.Request.MapRun.Arn = innerArn
	rn.Run(context.Background(), inner, func(task.Result) {})
	testwait.Until(t, func() bool { return rn.Gauges().Open == 2 }, 10*time.Second, time.Millisecond, "the nested run is open")
	require.Equal(t, 0, rn.Gauges().Backlog)
}

// A run whose task is cancelled while it waits in the backlog leaves it:
// it never opens, and the next run is admitted when a slot frees.
func TestCancelledWhileQueued(t *testing.T) {
	h := newFakeHost(t)
	rn := New(h, Config{Now: h.Now, Region: "us-east-1", Account: "123456789012", OpenLimit: 1})
	first := mapRunTask([]any{"a"}, 1)
	rn.Run(context.Background(), first, func(task.Result) {})
	names := maprun.NewNames(mapRunArn, "us-east-1", "123456789012", "fan", "M", false)
	testwait.Until(t, func() bool { return slices.Contains(h.running(), names.Arn(0)) }, 10*time.Second, time.Millisecond)

	const secondArn = "arn:aws:states:us-east-1:123456789012:mapRun:fan/M:3e7f1b7e-7d1c-3b5a-9c1e-2f4a5b6c7d8e"
	second := mapRunTask([]any{"b"}, 1)
	second.ID = "t2"
	second.Request.MapRun.Arn = secondArn
	rn.Run(context.Background(), second, func(task.Result) {})
	testwait.Until(t, func() bool { return rn.Gauges().Backlog == 1 }, 10*time.Second, time.Millisecond)
	rn.Cancel(parentArn, "t2")
	require.Equal(t, Gauges{Open: 1, Limit: 1}, rn.Gauges(), "the cancelled run left the backlog")

	h.end(rn, names.Arn(0), history.StatusSucceeded, `"a"`)
	testwait.Until(t, func() bool { return rn.Gauges().Open == 0 }, 10*time.Second, time.Millisecond)
	secondNames := maprun.NewNames(secondArn, "us-east-1", "123456789012", "fan", "M", false)
	require.NotContains(t, h.running(), secondNames.Arn(0), "the cancelled run never started a child")
}
