package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"stepwise/history"
	"stepwise/store"
)

func exerciseRetention(ctx context.Context, t *testing.T, setup func(t *testing.T) *testBundle) {
	t.Helper()

	// cutoff is the StoppedBefore of the tests: executions that ended
	// before it are old.
	cutoff := baseTime.Add(90 * 24 * time.Hour)

	// ended inserts an execution of smArn that ended at stop.
	ended := func(ctx context.Context, t *testing.T, b *testBundle, smArn, name string, status history.ExecutionStatus, stop time.Time) *store.Execution {
		t.Helper()
		x := executionFixture(smArn, name, baseTime, status)
		x.StopDate = &stop
		got, err := b.exec.ExecutionInsert(ctx, &store.ExecutionInsertParams{Execution: x})
		require.NoError(t, err)
		return got
	}

	deleteClosed := func(ctx context.Context, t *testing.T, b *testBundle, limit int) int {
		t.Helper()
		n, err := b.exec.ExecutionDeleteClosed(ctx, &store.ExecutionDeleteClosedParams{StoppedBefore: cutoff, Limit: limit})
		require.NoError(t, err)
		return n
	}

	exists := func(ctx context.Context, t *testing.T, b *testBundle, arn string) bool {
		t.Helper()
		_, err := b.exec.ExecutionGet(ctx, arn)
		if err != nil {
			require.ErrorIs(t, err, store.ErrNotFound)
			return false
		}
		return true
	}

	t.Run("ExecutionDeleteClosed", func(t *testing.T) {
		t.Parallel()

		t.Run("OnlyOldAndClosed", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			sm := b.insertStateMachine(ctx, t, "orders")
			old := cutoff.Add(-time.Millisecond)
			var gone []*store.Execution
			for _, st := range []history.ExecutionStatus{history.StatusSucceeded, history.StatusFailed, history.StatusTimedOut, history.StatusAborted} {
				gone = append(gone, ended(ctx, t, b, sm.Arn, "old-"+string(st), st, old))
			}
			kept := []*store.Execution{
				b.insertExecution(ctx, t, sm.Arn, "running", baseTime, history.StatusRunning),
				ended(ctx, t, b, sm.Arn, "at-cutoff", history.StatusSucceeded, cutoff),
				ended(ctx, t, b, sm.Arn, "recent", history.StatusFailed, cutoff.Add(time.Hour)),
			}
			// Redriven: it failed long ago and runs again.
			redriven := ended(ctx, t, b, sm.Arn, "redriven", history.StatusFailed, old.Add(-time.Hour))
			redriven, err := b.exec.ExecutionUpdate(ctx, &store.ExecutionUpdateParams{
				Arn: redriven.Arn, ExpectedVersion: redriven.Version, Status: history.StatusRunning,
				LastEventID: 3, RedriveCount: 1, RedriveDate: ptr(cutoff.Add(time.Minute)),
			})
			require.NoError(t, err)
			kept = append(kept, redriven)

			require.Equal(t, len(gone), deleteClosed(ctx, t, b, 100))
			for _, x := range gone {
				require.False(t, exists(ctx, t, b, x.Arn), x.Name)
			}
			for _, x := range kept {
				got, err := b.exec.ExecutionGet(ctx, x.Arn)
				require.NoError(t, err, x.Name)
				require.Equal(t, x, got)
			}
			require.Zero(t, deleteClosed(ctx, t, b, 100))

			// The name of a deleted execution can be used again.
			again := ended(ctx, t, b, sm.Arn, gone[0].Name, history.StatusSucceeded, cutoff.Add(time.Hour))
			require.Equal(t, gone[0].Arn, again.Arn)
		})

		t.Run("RemovesWhatIsTheirs", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			sm := b.insertStateMachine(ctx, t, "orders")
			old := ended(ctx, t, b, sm.Arn, "old", history.StatusAborted, cutoff.Add(-time.Hour))
			running := b.insertExecution(ctx, t, sm.Arn, "running", baseTime, history.StatusRunning)
			for _, x := range []*store.Execution{old, running} {
				require.NoError(t, b.exec.EventInsert(ctx, eventFixtures(x.Arn, 1, 5)))
				require.NoError(t, b.exec.InputInsert(ctx, []*store.Input{
					{ExecutionArn: x.Arn, Seq: 1, At: baseTime, Body: []byte(`{"seq":1}`)},
					{ExecutionArn: x.Arn, Seq: 2, At: baseTime, Body: []byte(`{"seq":2}`)},
				}))
				require.NoError(t, b.exec.TimerInsert(ctx, []*store.Timer{{ExecutionArn: x.Arn, ID: "t1", FireAt: baseTime}}))
				require.NoError(t, b.exec.TaskInsert(ctx, []*store.Task{{ExecutionArn: x.Arn, ID: "k1", Resource: "arn:aws:states:::lambda:invoke", Body: []byte(`{}`), CreatedAt: baseTime}}))
				require.NoError(t, b.exec.TagPut(ctx, x.Arn, []store.Tag{{Key: "team", Value: "a"}}))
			}
			require.NoError(t, b.exec.TagPut(ctx, sm.Arn, []store.Tag{{Key: "team", Value: "a"}}))

			require.Equal(t, 1, deleteClosed(ctx, t, b, 100))

			require.False(t, exists(ctx, t, b, old.Arn))
			evs, err := b.exec.EventList(ctx, &store.EventListParams{ExecutionArn: old.Arn})
			require.NoError(t, err)
			require.Empty(t, evs)
			ins, err := b.exec.InputList(ctx, old.Arn)
			require.NoError(t, err)
			require.Empty(t, ins)
			timers, err := b.exec.TimerListForExecution(ctx, old.Arn)
			require.NoError(t, err)
			require.Empty(t, timers)
			tasks, err := b.exec.TaskListForExecution(ctx, old.Arn)
			require.NoError(t, err)
			require.Empty(t, tasks)
			tags, err := b.exec.TagList(ctx, old.Arn)
			require.NoError(t, err)
			require.Empty(t, tags)

			// Nothing of the others.
			evs, err = b.exec.EventList(ctx, &store.EventListParams{ExecutionArn: running.Arn})
			require.NoError(t, err)
			require.Equal(t, eventFixtures(running.Arn, 1, 5), evs)
			ins, err = b.exec.InputList(ctx, running.Arn)
			require.NoError(t, err)
			require.Len(t, ins, 2)
			timers, err = b.exec.TimerListForExecution(ctx, running.Arn)
			require.NoError(t, err)
			require.Len(t, timers, 1)
			tasks, err = b.exec.TaskListForExecution(ctx, running.Arn)
			require.NoError(t, err)
			require.Len(t, tasks, 1)
			for _, arn := range []string{running.Arn, sm.Arn} {
				tags, err = b.exec.TagList(ctx, arn)
				require.NoError(t, err)
				require.Equal(t, []store.Tag{{Key: "team", Value: "a"}}, tags)
			}
			_, err = b.exec.StateMachineGet(ctx, sm.Arn)
			require.NoError(t, err)
		})

		t.Run("Limit", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			sm := b.insertStateMachine(ctx, t, "orders")
			// Inserted in another order than they ended.
			names := []string{"x3", "x1", "x5", "x2", "x4"}
			for _, name := range names {
				stop := cutoff.Add(-time.Hour + time.Duration(name[1]-'0')*time.Minute)
				x := ended(ctx, t, b, sm.Arn, name, history.StatusSucceeded, stop)
				require.NoError(t, b.exec.EventInsert(ctx, eventFixtures(x.Arn, 1, 3)))
			}

			remaining := func() []string {
				xs, err := b.exec.ExecutionList(ctx, &store.ExecutionListParams{StateMachineArn: sm.Arn})
				require.NoError(t, err)
				out := executionNames(xs)
				for _, x := range xs {
					evs, err := b.exec.EventList(ctx, &store.EventListParams{ExecutionArn: x.Arn})
					require.NoError(t, err)
					require.Len(t, evs, 3, x.Name)
				}
				return out
			}

			// Those that ended first go first.
			require.Equal(t, 2, deleteClosed(ctx, t, b, 2))
			require.ElementsMatch(t, []string{"x3", "x4", "x5"}, remaining())
			require.Equal(t, 2, deleteClosed(ctx, t, b, 2))
			require.ElementsMatch(t, []string{"x5"}, remaining())
			require.Equal(t, 1, deleteClosed(ctx, t, b, 2))
			require.Empty(t, remaining())
			require.Zero(t, deleteClosed(ctx, t, b, 2))
		})

		t.Run("LimitRequired", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			sm := b.insertStateMachine(ctx, t, "orders")
			x := ended(ctx, t, b, sm.Arn, "old", history.StatusSucceeded, cutoff.Add(-time.Hour))
			_, err := b.exec.ExecutionDeleteClosed(ctx, &store.ExecutionDeleteClosedParams{StoppedBefore: cutoff})
			require.Error(t, err)
			if !b.afterError() {
				return
			}
			require.True(t, exists(ctx, t, b, x.Arn))
		})

		t.Run("DeletedStateMachine", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			// gone: deleted, and every execution of it old.
			gone := b.insertStateMachine(ctx, t, "gone")
			for _, name := range []string{"a", "b"} {
				ended(ctx, t, b, gone.Arn, name, history.StatusSucceeded, cutoff.Add(-time.Hour))
			}
			// busy: deleted, but one execution still runs.
			busy := b.insertStateMachine(ctx, t, "busy")
			ended(ctx, t, b, busy.Arn, "a", history.StatusFailed, cutoff.Add(-time.Hour))
			running := b.insertExecution(ctx, t, busy.Arn, "b", baseTime, history.StatusRunning)
			// live: not deleted.
			live := b.insertStateMachine(ctx, t, "live")
			ended(ctx, t, b, live.Arn, "a", history.StatusSucceeded, cutoff.Add(-time.Hour))
			require.NoError(t, b.exec.StateMachineDelete(ctx, gone.Arn))
			require.NoError(t, b.exec.StateMachineDelete(ctx, busy.Arn))

			require.Equal(t, 4, deleteClosed(ctx, t, b, 100))

			_, err := b.exec.RevisionGet(ctx, gone.Arn, gone.RevisionID)
			require.ErrorIs(t, err, store.ErrNotFound)
			// The running execution still needs its definition.
			rev, err := b.exec.RevisionGet(ctx, busy.Arn, busy.RevisionID)
			require.NoError(t, err)
			require.Equal(t, busy.Definition, rev.Definition)
			require.True(t, exists(ctx, t, b, running.Arn))
			_, err = b.exec.RevisionGet(ctx, live.Arn, live.RevisionID)
			require.NoError(t, err)
			_, err = b.exec.StateMachineGet(ctx, live.Arn)
			require.NoError(t, err)

			// Once the running one has ended long ago, busy's revision goes too.
			_, err = b.exec.ExecutionUpdate(ctx, &store.ExecutionUpdateParams{
				Arn: running.Arn, ExpectedVersion: running.Version, Status: history.StatusSucceeded,
				StopDate: ptr(cutoff.Add(-time.Minute)), LastEventID: 4,
			})
			require.NoError(t, err)
			require.Equal(t, 1, deleteClosed(ctx, t, b, 100))
			_, err = b.exec.RevisionGet(ctx, busy.Arn, busy.RevisionID)
			require.ErrorIs(t, err, store.ErrNotFound)
		})
	})
}
