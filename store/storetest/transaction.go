package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"stepwise/history"
	"stepwise/store"
)

func exerciseTransactions(ctx context.Context, t *testing.T, setup func(t *testing.T) *testBundle) {
	t.Helper()

	// writeAll writes one of everything through ex.
	writeAll := func(t *testing.T, ex store.Executor) *store.Execution {
		t.Helper()
		b := &testBundle{exec: ex}
		x := b.newExecution(ctx, t, "x1")
		_, err := ex.ExecutionUpdate(ctx, &store.ExecutionUpdateParams{Arn: x.Arn, ExpectedVersion: 1, Status: history.StatusRunning, LastEventID: 3})
		require.NoError(t, err)
		require.NoError(t, ex.EventInsert(ctx, eventFixtures(x.Arn, 1, 3)))
		require.NoError(t, ex.InputInsert(ctx, []*store.Input{{ExecutionArn: x.Arn, Seq: 1, At: baseTime, Body: []byte(`{}`)}}))
		require.NoError(t, ex.TimerInsert(ctx, []*store.Timer{{ExecutionArn: x.Arn, ID: "t", FireAt: baseTime}}))
		require.NoError(t, ex.TaskInsert(ctx, []*store.Task{{ExecutionArn: x.Arn, ID: "k", Resource: "r", Body: []byte(`{}`), CreatedAt: baseTime}}))
		require.NoError(t, ex.TagPut(ctx, x.StateMachineArn, []store.Tag{{Key: "k", Value: "v"}}))
		return x
	}

	// requireAll checks that everything writeAll wrote is there (or not).
	requireAll := func(t *testing.T, ex store.Executor, x *store.Execution, there bool) {
		t.Helper()
		_, err := ex.StateMachineGet(ctx, x.StateMachineArn)
		_, revErr := ex.RevisionGet(ctx, x.StateMachineArn, "rev-1")
		got, xErr := ex.ExecutionGet(ctx, x.Arn)
		evs, evErr := ex.EventList(ctx, &store.EventListParams{ExecutionArn: x.Arn})
		require.NoError(t, evErr)
		ins, inErr := ex.InputList(ctx, x.Arn)
		require.NoError(t, inErr)
		timers, tErr := ex.TimerListForExecution(ctx, x.Arn)
		require.NoError(t, tErr)
		due, dueErr := ex.TimerListDue(ctx, baseTime, 10)
		require.NoError(t, dueErr)
		tasks, kErr := ex.TaskListForExecution(ctx, x.Arn)
		require.NoError(t, kErr)
		tags, tagErr := ex.TagList(ctx, x.StateMachineArn)
		require.NoError(t, tagErr)
		running, rErr := ex.ExecutionListRunning(ctx, "", 10)
		require.NoError(t, rErr)
		if there {
			require.NoError(t, err)
			require.NoError(t, revErr)
			require.NoError(t, xErr)
			require.Equal(t, int64(2), got.Version)
			require.Len(t, evs, 3)
			require.Len(t, ins, 1)
			require.Len(t, timers, 1)
			require.Len(t, due, 1)
			require.Len(t, tasks, 1)
			require.Len(t, tags, 1)
			require.Len(t, running, 1)
			return
		}
		require.ErrorIs(t, err, store.ErrNotFound)
		require.ErrorIs(t, revErr, store.ErrNotFound)
		require.ErrorIs(t, xErr, store.ErrNotFound)
		require.Empty(t, evs)
		require.Empty(t, ins)
		require.Empty(t, timers)
		require.Empty(t, due)
		require.Empty(t, tasks)
		require.Empty(t, tags)
		require.Empty(t, running)
	}

	t.Run("CommitKeepsWrites", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		tx, err := b.driver.Begin(ctx)
		require.NoError(t, err)
		x := writeAll(t, tx)
		requireAll(t, tx, x, true)
		require.NoError(t, tx.Commit(ctx))
		requireAll(t, b.driver.Executor(), x, true)
	})

	t.Run("RollbackDiscardsWrites", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		tx, err := b.driver.Begin(ctx)
		require.NoError(t, err)
		x := writeAll(t, tx)
		requireAll(t, tx, x, true)
		require.NoError(t, tx.Rollback(ctx))
		requireAll(t, b.driver.Executor(), x, false)

		// The driver is still usable, and the same rows can be written again.
		tx, err = b.driver.Begin(ctx)
		require.NoError(t, err)
		writeAll(t, tx)
		require.NoError(t, tx.Commit(ctx))
		requireAll(t, b.driver.Executor(), x, true)
	})

	t.Run("UncommittedInvisibleOutside", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		tx, err := b.driver.Begin(ctx)
		require.NoError(t, err)
		t.Cleanup(func() { _ = tx.Rollback(ctx) })
		x := writeAll(t, tx)
		requireAll(t, b.driver.Executor(), x, false)
		require.NoError(t, tx.Commit(ctx))
		requireAll(t, b.driver.Executor(), x, true)
	})

	t.Run("ConflictAcrossTransactions", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		x := b.newExecution(ctx, t, "x1")
		update := func(expected int64) error {
			tx, err := b.driver.Begin(ctx)
			require.NoError(t, err)
			if _, err := tx.ExecutionUpdate(ctx, &store.ExecutionUpdateParams{Arn: x.Arn, ExpectedVersion: expected, Status: history.StatusRunning}); err != nil {
				require.NoError(t, tx.Rollback(ctx))
				return err
			}
			return tx.Commit(ctx)
		}
		require.NoError(t, update(1))
		require.ErrorIs(t, update(1), store.ErrConflict)
		require.NoError(t, update(2))

		got, err := b.exec.ExecutionGet(ctx, x.Arn)
		require.NoError(t, err)
		require.Equal(t, int64(3), got.Version)
	})

	t.Run("ConcurrentSteps", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		// Workers race to step one execution, each reading the version in
		// its transaction and retrying on conflict: no step is lost.
		x := b.newExecution(ctx, t, "x1")
		const workers, steps = 4, 10
		errs := make(chan error, workers)
		for range workers {
			go func() {
				errs <- func() error {
					for done := 0; done < steps; {
						tx, err := b.driver.Begin(ctx)
						if err != nil {
							return err
						}
						cur, err := tx.ExecutionGet(ctx, x.Arn)
						if err == nil {
							_, err = tx.ExecutionUpdate(ctx, &store.ExecutionUpdateParams{Arn: x.Arn, ExpectedVersion: cur.Version, Status: history.StatusRunning, LastEventID: cur.LastEventID + 1})
						}
						if err == nil {
							err = tx.EventInsert(ctx, []*store.Event{eventFixture(x.Arn, cur.LastEventID+1)})
						}
						if err == nil {
							err = tx.Commit(ctx)
						} else {
							_ = tx.Rollback(ctx)
						}
						switch {
						case err == nil:
							done++
						case errors.Is(err, store.ErrConflict), errors.Is(err, store.ErrAlreadyExists):
						default:
							return err
						}
					}
					return nil
				}()
			}()
		}
		for range workers {
			require.NoError(t, <-errs)
		}
		got, err := b.exec.ExecutionGet(ctx, x.Arn)
		require.NoError(t, err)
		require.Equal(t, int64(1+workers*steps), got.Version)
		evs, err := b.exec.EventList(ctx, &store.EventListParams{ExecutionArn: x.Arn})
		require.NoError(t, err)
		require.Len(t, evs, workers*steps)
	})

	t.Run("ErrorsInsideTransaction", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		x := b.newExecution(ctx, t, "x1")
		for _, tc := range []struct {
			name string
			call func(tx store.ExecutorTx) error
			want error
		}{
			{"NotFound", func(tx store.ExecutorTx) error {
				_, err := tx.ExecutionGet(ctx, x.Arn+"-nope")
				return err
			}, store.ErrNotFound},
			{"AlreadyExists", func(tx store.ExecutorTx) error {
				_, err := tx.ExecutionInsert(ctx, &store.ExecutionInsertParams{Execution: x})
				return err
			}, store.ErrAlreadyExists},
			{"Conflict", func(tx store.ExecutorTx) error {
				_, err := tx.ExecutionUpdate(ctx, &store.ExecutionUpdateParams{Arn: x.Arn, ExpectedVersion: 5, Status: history.StatusRunning})
				return err
			}, store.ErrConflict},
		} {
			tx, err := b.driver.Begin(ctx)
			require.NoError(t, err)
			require.ErrorIs(t, tc.call(tx), tc.want, tc.name)
			require.NoError(t, tx.Rollback(ctx))
		}
	})
}
