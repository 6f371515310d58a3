package engine

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/engine/task"
	"stepwise/history"
	"stepwise/internal/testkit/pgtest"
	"stepwise/jsonvalue"
	"stepwise/store"
	"stepwise/store/pgstore"
)

// TestClockResumesAfterRestart: a scaled clock (a second of real time is
// a thousand of execution time) runs far ahead of real time; stopped and
// started again on the same store, it resumes where it stopped instead of
// starting again from real time, and the stored ceiling leads it.
func TestClockResumesAfterRestart(t *testing.T) {
	t.Parallel()
	b := &testBundle{path: filepath.Join(t.TempDir(), "stepwise.db"), tasks: newFakeTasks()}
	b.open(t, 0.001)
	time.Sleep(200 * time.Millisecond) // 200 s of execution time
	before := b.engine.Now()
	require.True(t, before.After(time.Now().Add(100*time.Second)), "the clock runs ahead: %v", before)
	c, err := b.drv.Executor().ClockStart(context.Background(), &store.ClockStartParams{Real: time.Now(), RunningSince: time.Now().Add(-time.Hour)})
	require.NoError(t, err)
	require.False(t, c.Ceiling.Before(before), "the stored ceiling %v leads the clock %v", c.Ceiling, before)
	b.close()

	b.open(t, 0.001)
	after := b.engine.Now()
	require.False(t, after.Before(before), "after a restart the clock reads %v, before it read %v", after, before)
}

// TestClockSkipResumesAfterRestart: a skipping clock advanced nine hours
// (past an alarm, with a clock that does not move by itself) is there
// still after a restart.
func TestClockSkipResumesAfterRestart(t *testing.T) {
	t.Parallel()
	clk := &fakeClock{t: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
	b := &testBundle{path: filepath.Join(t.TempDir(), "stepwise.db"), tasks: newFakeTasks()}
	b.config = func(c *Config) { c.TimeSkip, c.Now = true, clk.Now }
	b.open(t, 0)
	at := clk.Now().Add(8 * time.Hour)
	fired := make(chan time.Time, 1)
	b.engine.Alarm("nightly", at, func(context.Context) { fired <- b.engine.Now() })
	_, err := b.engine.AdvanceClock(context.Background(), at.Add(time.Hour))
	require.NoError(t, err)
	select {
	case got := <-fired:
		require.Equal(t, at, got, "the alarm fires at its time")
	case <-time.After(30 * time.Second):
		t.Fatal("the advance did not fire the alarm it passed")
	}
	b.close()

	b.open(t, 0)
	require.False(t, b.engine.Now().Before(at), "after a restart the clock reads %v, before the alarm at %v", b.engine.Now(), at)
}

// TestAlarmDisarmed: a disarmed alarm does not fire, and does not count
// among the execution timers. The alarms fire when the clock passes them.
func TestAlarmDisarmed(t *testing.T) {
	t.Parallel()
	clk := &fakeClock{t: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
	b := &testBundle{path: filepath.Join(t.TempDir(), "stepwise.db"), tasks: newFakeTasks()}
	b.config = func(c *Config) { c.TimeSkip, c.Now = true, clk.Now }
	b.open(t, 0)
	// A task outstanding holds the skipping clock while the alarms are
	// armed and disarmed.
	sm, m := b.machine(t, "busy", `{"StartAt": "T", "States": {
		"T": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "End": true}}}`)
	row := b.start(t, sm, m, "e1", `{}`)
	b.tasks.waitPending(t, 1)
	fired := make(chan string, 2)
	b.engine.Alarm("off", clk.Now().Add(time.Hour), func(context.Context) { fired <- "off" })
	require.Zero(t, b.engine.timers.len())
	b.engine.Alarm("off", time.Time{}, nil)
	b.engine.Alarm("on", clk.Now().Add(2*time.Hour), func(context.Context) { fired <- "on" })
	b.tasks.complete(task.Result{Output: jsonvalue.NumberFromInt(1)})
	b.waitStatus(t, row.Arn, history.StatusSucceeded)
	clk.advance(b.engine, 3*time.Hour)
	select {
	case got := <-fired:
		require.Equal(t, "on", got)
	case <-time.After(30 * time.Second):
		t.Fatal("the alarm did not fire")
	}
}

// TestClusterSharesTheClock: the nodes of a cluster read one scaled
// clock, whenever each started: a reading on node 1 lies between two on
// node 0 around it. When every node stopped, the next to start resumes
// from the stored ceiling.
func TestClusterSharesTheClock(t *testing.T) {
	t.Parallel()
	url := pgtest.NewDatabase(t)
	ctx := context.Background()
	const scale = 0.01 // 100 s of execution time a second
	start := func(id string) *Engine {
		drv, err := pgstore.Open(ctx, url, pgstore.Options{})
		require.NoError(t, err)
		e, err := New(drv, Config{Region: region, Account: account, WaitTimeScale: scale, Tasks: newFakeTasks(),
			TokenKey: []byte("test key"), Cluster: &ClusterConfig{Node: id, Lease: clusterLease}})
		require.NoError(t, err)
		require.NoError(t, e.Start(ctx))
		t.Cleanup(func() {
			e.Stop()
			drv.Close()
		})
		return e
	}
	a := start("node-a")
	time.Sleep(time.Second) // node b's own clock would be 99 s behind
	b := start("node-b")
	// The anchor is kept in whole milliseconds: 100 ms of execution time.
	slack := scaleDuration(time.Millisecond, 1/scale)
	for i := range 3 {
		a1 := a.Now()
		bn := b.Now()
		a2 := a.Now()
		require.False(t, bn.Before(a1.Add(-slack)) || bn.After(a2.Add(slack)), "round %d: node b reads %v, node a %v then %v", i, bn, a1, a2)
	}
	last := b.Now()
	a.Stop()
	b.Stop()
	c := start("node-c")
	require.False(t, c.Now().Before(last), "a restarted cluster's clock reads %v, it read %v", c.Now(), last)
}

// TestClockFloor: a kept clock starts no earlier than its floor (a slot
// fired before the clock was kept), though the store has no clock yet.
func TestClockFloor(t *testing.T) {
	t.Parallel()
	floor := time.Now().Add(time.Hour).UTC().Truncate(time.Millisecond)
	b := &testBundle{path: filepath.Join(t.TempDir(), "stepwise.db"), tasks: newFakeTasks()}
	b.config = func(c *Config) {
		c.ClockFloor = func(context.Context) (time.Time, error) { return floor, nil }
	}
	b.open(t, 0.5)
	require.False(t, b.engine.Now().Before(floor), "the clock reads %v, before its floor %v", b.engine.Now(), floor)
}
