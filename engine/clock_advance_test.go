package engine

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/engine/task"
	"stepwise/history"
	"stepwise/store"
	"stepwise/store/sqlitestore"
)

// nightly is an alarm that arms itself for 02:00 every night, as the
// scheduler does for a cron(0 2 * * ? *) schedule, and records the
// clock's reading each time it fires (and, when set, what probe says).
type nightly struct {
	e     *Engine
	probe func() string

	mu     sync.Mutex
	fired  []time.Time
	probes []string
}

func (n *nightly) arm(after time.Time) {
	next := time.Date(after.Year(), after.Month(), after.Day(), 2, 0, 0, 0, time.UTC)
	if !next.After(after) {
		next = next.AddDate(0, 0, 1)
	}
	n.e.Alarm("nightly", next, func(context.Context) {
		now := n.e.Now()
		n.mu.Lock()
		n.fired = append(n.fired, now)
		if n.probe != nil {
			n.probes = append(n.probes, n.probe())
		}
		n.mu.Unlock()
		n.arm(next)
	})
}

func (n *nightly) nights() ([]time.Time, []string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]time.Time(nil), n.fired...), append([]string(nil), n.probes...)
}

// TestTimeSkipIdleAlarmStays: an idle engine whose clock skips (or runs
// at a wait-time scale of 0) does not jump to an alarm (a schedule's next
// slot): a second later its clock reads real time still, and the alarm a
// day away has not fired.
func TestTimeSkipIdleAlarmStays(t *testing.T) {
	t.Parallel()
	for _, mode := range []timeMode{skipMode, scale0} {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			b := setupTime(t, mode, nil)
			<-b.engine.Resumed()
			n := &nightly{e: b.engine}
			n.arm(b.engine.Now())
			time.Sleep(time.Second)
			drift := b.engine.Now().Sub(time.Now())
			require.Less(t, drift, time.Second, "the idle clock ran %v ahead of real time", drift)
			fired, _ := n.nights()
			require.Empty(t, fired)
		})
	}
}

// TestTimeSkipWaitPassesNights: a Wait of two days jumps the skipping
// clock through two nights: the nightly alarm fires twice, once a night,
// in order, each at its own 02:00, and no more once the execution ended.
func TestTimeSkipWaitPassesNights(t *testing.T) {
	t.Parallel()
	clk := &fakeClock{t: time.Date(2030, 1, 1, 9, 30, 0, 0, time.UTC)}
	b := setupTime(t, skipMode, clk.Now)
	<-b.engine.Resumed()
	start := clk.Now()
	n := &nightly{e: b.engine}
	n.arm(start)
	sm, m := b.machine(t, "twodays", `{"StartAt": "W", "States": {"W": {"Type": "Wait", "Seconds": 172800, "End": true}}}`)
	row := b.start(t, sm, m, "e1", `{}`)
	done := b.waitStatus(t, row.Arn, history.StatusSucceeded)
	require.Equal(t, start.Add(48*time.Hour), done.StopDate.UTC())
	time.Sleep(300 * time.Millisecond) // for a clock that runs away to do so
	fired, _ := n.nights()
	require.Equal(t, []time.Time{
		time.Date(2030, 1, 2, 2, 0, 0, 0, time.UTC),
		time.Date(2030, 1, 3, 2, 0, 0, 0, time.UTC),
	}, fired)
	require.Equal(t, start.Add(48*time.Hour), b.engine.Now(), "the clock stays where the Wait ended")
}

// TestAdvanceClock: an advance of a day fires the one night it passes,
// at its time, after the Wait that ends before it (at 01:00), and ends
// at the time asked; the stored ceiling is past it. The clock does not
// move by itself in between (a fake real clock; skipping, or at a
// wait-time scale of 2).
func TestAdvanceClock(t *testing.T) {
	t.Parallel()
	for _, mode := range []timeMode{skipMode, {name: "scale2", scale: 2}} {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			clk := &fakeClock{t: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
			b := setupTime(t, mode, clk.Now)
			<-b.engine.Resumed()
			ctx := context.Background()
			start := clk.Now()
			sm, m := b.machine(t, "hour", `{"StartAt": "W", "States": {"W": {"Type": "Wait", "Seconds": 3600, "End": true}}}`)
			row := b.start(t, sm, m, "e1", `{}`)
			n := &nightly{e: b.engine}
			n.probe = func() string {
				r, err := b.drv.Executor().ExecutionGet(ctx, row.Arn)
				if err != nil {
					return err.Error()
				}
				return string(r.Status)
			}
			n.arm(start)

			to := start.Add(24 * time.Hour)
			now, err := b.engine.AdvanceClock(ctx, to)
			require.NoError(t, err)
			require.Equal(t, to, now)
			fired, probes := n.nights()
			require.Equal(t, []time.Time{start.Add(2 * time.Hour)}, fired)
			require.Equal(t, []string{string(history.StatusSucceeded)}, probes, "the Wait ending at 01:00 fired before the 02:00 slot")
			done := b.waitStatus(t, row.Arn, history.StatusSucceeded)
			require.Equal(t, start.Add(time.Hour), done.StopDate.UTC())
			c, err := b.drv.Executor().ClockStart(ctx, &store.ClockStartParams{Real: clk.Now(), RunningSince: clk.Now().Add(-time.Hour)})
			require.NoError(t, err)
			require.True(t, c.Ceiling.After(to), "the stored ceiling %v is past the advance's %v", c.Ceiling, to)

			// Another day: the next night, once.
			now, err = b.engine.AdvanceClock(ctx, to.Add(24*time.Hour))
			require.NoError(t, err)
			require.Equal(t, to.Add(24*time.Hour), now)
			fired, _ = n.nights()
			require.Equal(t, []time.Time{start.Add(2 * time.Hour), start.Add(26 * time.Hour)}, fired)

			// Never back.
			_, err = b.engine.AdvanceClock(ctx, to)
			var back *ClockBackError
			require.ErrorAs(t, err, &back)
			require.Equal(t, "the clock never goes back: 2030-01-02T00:00:00Z is before its reading 2030-01-03T00:00:00Z", err.Error())
			require.Equal(t, to.Add(24*time.Hour), b.engine.Now())
		})
	}
}

// TestAdvanceRealClock: a clock in real time is not advanced.
func TestAdvanceRealClock(t *testing.T) {
	t.Parallel()
	b := setup(t, 1)
	before := time.Now()
	_, err := b.engine.AdvanceClock(context.Background(), before.Add(time.Hour))
	require.ErrorIs(t, err, ErrRealClock)
	require.Less(t, b.engine.Now().Sub(before), time.Minute)
}

// TestAdvanceGivesUp: an advance held by a task waiting on a worker
// (time skipping) ends with its context, the clock where it got to, and
// the next advance goes on from there.
func TestAdvanceGivesUp(t *testing.T) {
	t.Parallel()
	clk := &fakeClock{t: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
	b := setupTime(t, skipMode, clk.Now)
	<-b.engine.Resumed()
	sm, m := b.machine(t, "held", `{"StartAt": "T", "States": {"T": {"Type": "Task", "Resource": "`+activityArn+`", "End": true}}}`)
	row := b.start(t, sm, m, "e1", `{}`)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	now, err := b.engine.AdvanceClock(ctx, clk.Now().Add(time.Hour))
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Equal(t, clk.Now(), now, "the task waiting on a worker holds the clock")

	_, err = b.engine.StopExecution(context.Background(), row.Arn, "", "")
	require.NoError(t, err)
	to := clk.Now().Add(time.Hour)
	now, err = b.engine.AdvanceClock(context.Background(), to)
	require.NoError(t, err)
	require.Equal(t, to, now)
}

// storedCeiling reads the clock's ceiling from the store, without
// touching it (the engine renewed it at real time r).
func storedCeiling(t *testing.T, b *testBundle, r time.Time) time.Time {
	t.Helper()
	c, err := b.drv.Executor().ClockStart(context.Background(), &store.ClockStartParams{Real: r, RunningSince: r.Add(-time.Hour)})
	require.NoError(t, err)
	return c.Ceiling
}

// TestAdvancePastOutsideTask: under time skipping, an advance held by a
// task waiting on a worker ends once the clock reached the goal at its
// own rate (a real clock: a second later).
func TestAdvancePastOutsideTask(t *testing.T) {
	t.Parallel()
	b := setupTime(t, skipMode, nil)
	<-b.engine.Resumed()
	sm, m := b.machine(t, "held", `{"StartAt": "T", "States": {"T": {"Type": "Task", "Resource": "`+activityArn+`", "End": true}}}`)
	b.start(t, sm, m, "e1", `{}`)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	to := b.engine.Now().Add(time.Second)
	began := time.Now()
	now, err := b.engine.AdvanceClock(ctx, to)
	require.NoError(t, err)
	require.False(t, now.Before(to))
	require.Less(t, time.Since(began), 3*time.Second)
}

// TestAdvanceEndsOnHalt: an advance held by a task waiting on a worker
// ends when the engine halts (a server shutting down), and one queued
// behind it ends when its context does.
func TestAdvanceEndsOnHalt(t *testing.T) {
	t.Parallel()
	clk := &fakeClock{t: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
	b := setupTime(t, skipMode, clk.Now)
	<-b.engine.Resumed()
	sm, m := b.machine(t, "held", `{"StartAt": "T", "States": {"T": {"Type": "Task", "Resource": "`+activityArn+`", "End": true}}}`)
	b.start(t, sm, m, "e1", `{}`)
	held := make(chan error, 1)
	go func() {
		_, err := b.engine.AdvanceClock(context.Background(), clk.Now().Add(time.Hour))
		held <- err
	}()
	time.Sleep(200 * time.Millisecond) // for the first to hold the clock
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	began := time.Now()
	_, err := b.engine.AdvanceClock(ctx, clk.Now().Add(2*time.Hour))
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Less(t, time.Since(began), 2*time.Second, "the queued advance ends with its context")

	b.engine.Halt()
	select {
	case err := <-held:
		require.ErrorIs(t, err, task.ErrStopped)
	case <-time.After(5 * time.Second):
		require.Fail(t, "the advance held the halted engine")
	}
	_, err = b.engine.AdvanceClock(context.Background(), clk.Now().Add(time.Hour))
	require.ErrorIs(t, err, task.ErrStopped)
	require.Equal(t, clk.Now(), b.engine.Now())
}

// TestAdvanceCeilingStepByStep: an advance stores the ceiling step by
// step, never further than the lead past the deadline it goes to next:
// at the night's slot (02:00) on the way to a day later, the stored
// ceiling is at most the lead past it. An advance given up leaves the
// ceiling where the clock got to.
func TestAdvanceCeilingStepByStep(t *testing.T) {
	t.Parallel()
	for _, mode := range []timeMode{skipMode, {name: "scale2", scale: 2}} {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			clk := &fakeClock{t: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
			b := setupTime(t, mode, clk.Now)
			<-b.engine.Resumed()
			start, lead := clk.Now(), b.engine.clock.ahead()
			sm, m := b.machine(t, "hour", `{"StartAt": "W", "States": {"W": {"Type": "Wait", "Seconds": 3600, "End": true}}}`)
			b.start(t, sm, m, "e1", `{}`)
			n := &nightly{e: b.engine, probe: func() string {
				return storedCeiling(t, b, clk.Now()).Format(time.RFC3339Nano)
			}}
			n.arm(start)
			_, err := b.engine.AdvanceClock(context.Background(), start.Add(24*time.Hour))
			require.NoError(t, err)
			_, probes := n.nights()
			require.Len(t, probes, 1)
			ceiling, err := time.Parse(time.RFC3339Nano, probes[0])
			require.NoError(t, err)
			slot := start.Add(2 * time.Hour)
			require.False(t, ceiling.After(slot.Add(lead)), "at the slot %v the stored ceiling was %v", slot, ceiling)
			require.False(t, ceiling.Before(slot))

			// Given up, held by a task waiting on a worker.
			sm, m = b.machine(t, "held", `{"StartAt": "T", "States": {"T": {"Type": "Task", "Resource": "`+activityArn+`", "End": true}}}`)
			b.start(t, sm, m, "e2", `{}`)
			from := b.engine.Now()
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			_, err = b.engine.AdvanceClock(ctx, from.Add(24*time.Hour))
			require.ErrorIs(t, err, context.DeadlineExceeded)
			require.Equal(t, from, b.engine.Now())
			ceiling = storedCeiling(t, b, clk.Now())
			require.False(t, ceiling.After(from.Add(lead)), "the advance given up at %v left the ceiling at %v", from, ceiling)
		})
	}
}

// TestRaiseCeilingAfterStop: once the engine stopped and stored where
// its clock stopped, an advance that was waiting stores nothing more.
func TestRaiseCeilingAfterStop(t *testing.T) {
	t.Parallel()
	clk := &fakeClock{t: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
	b := setupTime(t, skipMode, clk.Now)
	<-b.engine.Resumed()
	b.engine.Stop()
	require.ErrorIs(t, b.engine.raiseCeiling(context.Background(), clk.Now().Add(time.Hour)), task.ErrStopped)
	c, err := b.drv.Executor().ClockStart(context.Background(), &store.ClockStartParams{Real: clk.Now()})
	require.NoError(t, err)
	require.Equal(t, clk.Now(), c.Ceiling, "the clock stopped where it was")
}

// TestAdvanceScaledWaitsForTask: at a wait-time scale, an advance waits
// for a task waiting on the outside, as under time skipping: it does not
// jump over the task's timeout, which fires at its own time.
func TestAdvanceScaledWaitsForTask(t *testing.T) {
	t.Parallel()
	clk := &fakeClock{t: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
	b := setupTime(t, timeMode{name: "scale2", scale: 2}, clk.Now)
	<-b.engine.Resumed()
	start := clk.Now()
	sm, m := b.machine(t, "timed", `{"StartAt": "T", "States": {"T": {"Type": "Task", "Resource": "`+activityArn+`", "TimeoutSeconds": 60, "End": true}}}`)
	row := b.start(t, sm, m, "e1", `{}`)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := b.engine.AdvanceClock(ctx, start.Add(time.Hour))
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Equal(t, start, b.engine.Now(), "the task waiting on a worker holds the clock")
	got, err := b.drv.Executor().ExecutionGet(context.Background(), row.Arn)
	require.NoError(t, err)
	require.Equal(t, history.StatusRunning, got.Status)

	// Its timeout (States.Timeout) comes by the clock's own run (two
	// minutes of real time at a scale of 2); the advance goes on from
	// there.
	clk.advance(b.engine, 2*time.Minute)
	done := b.waitStatus(t, row.Arn, history.StatusFailed)
	require.Equal(t, start.Add(time.Minute), done.StopDate.UTC())
	now, err := b.engine.AdvanceClock(context.Background(), start.Add(time.Hour))
	require.NoError(t, err)
	require.Equal(t, start.Add(time.Hour), now)
}

// TestScaledIdleWakesOnlyAdvance: at a wait-time scale the timer loop is
// woken when the engine goes idle only while an advance is under way.
func TestScaledIdleWakesOnlyAdvance(t *testing.T) {
	t.Parallel()
	b := &testBundle{path: t.TempDir() + "/stepwise.db"}
	drv, err := sqlitestore.Open(context.Background(), b.path, sqlitestore.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { drv.Close() })
	e, err := New(drv, Config{Region: region, Account: account, WaitTimeScale: 2})
	require.NoError(t, err)
	e.work.stepBegan()
	e.work.stepEnded()
	require.Empty(t, e.timers.wake, "no advance: the idle engine does not wake the timer loop")
	e.timers.advanceTo(e.Now().Add(time.Hour))
	<-e.timers.wake
	e.work.stepBegan()
	e.work.stepEnded()
	require.Len(t, e.timers.wake, 1, "an advance under way is woken")
}
