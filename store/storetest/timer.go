package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"stepwise/history"
	"stepwise/store"
)

func exerciseTimers(ctx context.Context, t *testing.T, setup func(t *testing.T) *testBundle) {
	t.Helper()

	timer := func(arn, id string, after time.Duration) *store.Timer {
		return &store.Timer{ExecutionArn: arn, ID: id, FireAt: baseTime.Add(after)}
	}

	t.Run("TimerInsert", func(t *testing.T) {
		t.Parallel()

		t.Run("InsertsAndLists", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			x := b.newExecution(ctx, t, "x1")
			require.NoError(t, b.exec.TimerInsert(ctx, []*store.Timer{timer(x.Arn, "t2", time.Minute), timer(x.Arn, "t1", time.Second)}))
			require.NoError(t, b.exec.TimerInsert(ctx, nil))
			got, err := b.exec.TimerListForExecution(ctx, x.Arn)
			require.NoError(t, err)
			require.Equal(t, []*store.Timer{timer(x.Arn, "t1", time.Second), timer(x.Arn, "t2", time.Minute)}, got)
		})

		t.Run("IDTaken", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			x := b.newExecution(ctx, t, "x1")
			require.NoError(t, b.exec.TimerInsert(ctx, []*store.Timer{timer(x.Arn, "t1", time.Second)}))
			err := b.exec.TimerInsert(ctx, []*store.Timer{timer(x.Arn, "t2", time.Second), timer(x.Arn, "t1", time.Hour)})
			require.ErrorIs(t, err, store.ErrAlreadyExists)
			if !b.afterError() {
				return
			}
			got, err := b.exec.TimerListForExecution(ctx, x.Arn)
			require.NoError(t, err)
			require.Equal(t, []*store.Timer{timer(x.Arn, "t1", time.Second)}, got)
		})
	})

	t.Run("TimerDelete", func(t *testing.T) {
		t.Parallel()

		t.Run("DeletesOnlyTheExecutions", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			x := b.newExecution(ctx, t, "x1")
			y := b.insertExecution(ctx, t, x.StateMachineArn, "x2", baseTime, history.StatusRunning)
			require.NoError(t, b.exec.TimerInsert(ctx, []*store.Timer{
				timer(x.Arn, "t1", time.Second), timer(x.Arn, "t2", 2*time.Second), timer(x.Arn, "t3", 3*time.Second),
				timer(y.Arn, "t1", time.Second),
			}))
			require.NoError(t, b.exec.TimerDelete(ctx, x.Arn, []string{"t1", "t3", "never"}))
			require.NoError(t, b.exec.TimerDelete(ctx, x.Arn, nil))

			got, err := b.exec.TimerListForExecution(ctx, x.Arn)
			require.NoError(t, err)
			require.Equal(t, []*store.Timer{timer(x.Arn, "t2", 2*time.Second)}, got)
			got, err = b.exec.TimerListForExecution(ctx, y.Arn)
			require.NoError(t, err)
			require.Equal(t, []*store.Timer{timer(y.Arn, "t1", time.Second)}, got)

			// Many ids at once, and re-arming a deleted id.
			ids := make([]string, 500)
			for i := range ids {
				ids[i] = fmt.Sprintf("many-%d", i)
				require.NoError(t, b.exec.TimerInsert(ctx, []*store.Timer{timer(x.Arn, ids[i], time.Hour)}))
			}
			require.NoError(t, b.exec.TimerDelete(ctx, x.Arn, append(ids, "t2")))
			require.NoError(t, b.exec.TimerInsert(ctx, []*store.Timer{timer(x.Arn, "t2", 5*time.Second)}))
			got, err = b.exec.TimerListForExecution(ctx, x.Arn)
			require.NoError(t, err)
			require.Equal(t, []*store.Timer{timer(x.Arn, "t2", 5*time.Second)}, got)
		})
	})

	t.Run("TimerListDue", func(t *testing.T) {
		t.Parallel()

		t.Run("EarliestFirst", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			x := b.newExecution(ctx, t, "x1")
			y := b.insertExecution(ctx, t, x.StateMachineArn, "x2", baseTime, history.StatusRunning)
			require.NoError(t, b.exec.TimerInsert(ctx, []*store.Timer{
				timer(x.Arn, "late", time.Hour), timer(y.Arn, "b", 2*time.Second), timer(x.Arn, "a", time.Second),
				timer(y.Arn, "a", 2*time.Second), timer(x.Arn, "c", 3*time.Second),
			}))

			due, err := b.exec.TimerListDue(ctx, baseTime.Add(3*time.Second), 0)
			require.NoError(t, err)
			// Ties on FireAt come by execution, then id; FireAt == before is due.
			require.Equal(t, []string{"x1/a", "x2/a", "x2/b", "x1/c"}, timerKeys(due))
			require.Equal(t, baseTime.Add(time.Second), due[0].FireAt)

			due, err = b.exec.TimerListDue(ctx, baseTime.Add(3*time.Second), 2)
			require.NoError(t, err)
			require.Equal(t, []string{"x1/a", "x2/a"}, timerKeys(due))

			due, err = b.exec.TimerListDue(ctx, baseTime.Add(999*time.Millisecond), 10)
			require.NoError(t, err)
			require.Empty(t, due)
		})
	})

	t.Run("TimerNext", func(t *testing.T) {
		t.Parallel()

		t.Run("Earliest", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			_, err := b.exec.TimerNext(ctx)
			require.ErrorIs(t, err, store.ErrNotFound)

			x := b.newExecution(ctx, t, "x1")
			require.NoError(t, b.exec.TimerInsert(ctx, []*store.Timer{timer(x.Arn, "b", time.Minute), timer(x.Arn, "a", time.Hour)}))
			next, err := b.exec.TimerNext(ctx)
			require.NoError(t, err)
			require.Equal(t, timer(x.Arn, "b", time.Minute), next)

			require.NoError(t, b.exec.TimerDelete(ctx, x.Arn, []string{"b"}))
			next, err = b.exec.TimerNext(ctx)
			require.NoError(t, err)
			require.Equal(t, timer(x.Arn, "a", time.Hour), next)

			require.NoError(t, b.exec.TimerDelete(ctx, x.Arn, []string{"a"}))
			_, err = b.exec.TimerNext(ctx)
			require.ErrorIs(t, err, store.ErrNotFound)
		})
	})
}
