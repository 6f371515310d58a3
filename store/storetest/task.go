package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"stepwise/history"
	"stepwise/store"
)

func exerciseTasks(ctx context.Context, t *testing.T, setup func(t *testing.T) *testBundle) {
	t.Helper()

	task := func(arn, id string, after time.Duration) *store.Task {
		return &store.Task{
			ExecutionArn: arn,
			ID:           id,
			Resource:     "arn:aws:states:::lambda:invoke",
			Body:         []byte(`{"FunctionName":"` + id + `"}`),
			CreatedAt:    baseTime.Add(after),
		}
	}

	t.Run("TaskInsert", func(t *testing.T) {
		t.Parallel()

		t.Run("InsertsListsDeletes", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			x := b.newExecution(ctx, t, "x1")
			y := b.insertExecution(ctx, t, x.StateMachineArn, "x2", baseTime, history.StatusRunning)
			require.NoError(t, b.exec.TaskInsert(ctx, []*store.Task{task(x.Arn, "b", time.Second), task(x.Arn, "a", 2*time.Second), task(y.Arn, "a", 0)}))
			require.NoError(t, b.exec.TaskInsert(ctx, []*store.Task{task(x.Arn, "c", 0)}))
			require.NoError(t, b.exec.TaskInsert(ctx, nil))

			got, err := b.exec.TaskListForExecution(ctx, x.Arn)
			require.NoError(t, err)
			require.Equal(t, []*store.Task{task(x.Arn, "c", 0), task(x.Arn, "b", time.Second), task(x.Arn, "a", 2*time.Second)}, got)

			require.NoError(t, b.exec.TaskDelete(ctx, x.Arn, []string{"a", "c", "never"}))
			require.NoError(t, b.exec.TaskDelete(ctx, x.Arn, nil))
			got, err = b.exec.TaskListForExecution(ctx, x.Arn)
			require.NoError(t, err)
			require.Equal(t, []*store.Task{task(x.Arn, "b", time.Second)}, got)
			got, err = b.exec.TaskListForExecution(ctx, y.Arn)
			require.NoError(t, err)
			require.Equal(t, []*store.Task{task(y.Arn, "a", 0)}, got)

			got, err = b.exec.TaskListForExecution(ctx, executionArn(x.StateMachineArn, "nope"))
			require.NoError(t, err)
			require.Empty(t, got)
		})

		t.Run("IDTaken", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			x := b.newExecution(ctx, t, "x1")
			require.NoError(t, b.exec.TaskInsert(ctx, []*store.Task{task(x.Arn, "a", 0)}))
			err := b.exec.TaskInsert(ctx, []*store.Task{task(x.Arn, "b", 0), task(x.Arn, "a", time.Second)})
			require.ErrorIs(t, err, store.ErrAlreadyExists)
			if !b.afterError() {
				return
			}
			got, err := b.exec.TaskListForExecution(ctx, x.Arn)
			require.NoError(t, err)
			require.Equal(t, []*store.Task{task(x.Arn, "a", 0)}, got)
		})
	})
}
