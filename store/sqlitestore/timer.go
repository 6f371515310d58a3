package sqlitestore

import (
	"context"

	"stepwise/store"
	"stepwise/store/internal/sqlcore"
)

const (
	timerInsertHead = `INSERT INTO stepwise_timer (execution_arn, id, fire_at)`

	timerDeleteHead = `DELETE FROM stepwise_timer WHERE execution_arn = ? AND id IN`

	taskInsertHead = `INSERT INTO stepwise_task (execution_arn, id, resource, body, created_at)`

	taskDeleteHead = `DELETE FROM stepwise_task WHERE execution_arn = ? AND id IN`
)

// TimerInsert adds timers, all or none. An id the execution already has is
// store.ErrAlreadyExists.
func (e *Executor) TimerInsert(ctx context.Context, timers []*store.Timer) error {
	if len(timers) == 0 {
		return nil
	}
	err := e.batch(ctx, len(timers), func(q querier) error {
		return insertBatch(ctx, q, timerInsertHead, 3, len(timers), func(i int, args []any) []any {
			t := timers[i]
			return append(args, t.ExecutionArn, t.ID, sqlcore.Millis(t.FireAt))
		})
	})
	return interpretError("insert timers", err)
}

// TimerDelete removes an execution's timers; ids it does not have are
// ignored.
func (e *Executor) TimerDelete(ctx context.Context, executionArn string, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	err := e.batch(ctx, len(ids), func(q querier) error {
		return deleteBatch(ctx, q, timerDeleteHead, []any{executionArn}, ids)
	})
	return interpretError("delete timers of "+executionArn, err)
}

// TaskInsert adds tasks, all or none. An id the execution already has is
// store.ErrAlreadyExists.
func (e *Executor) TaskInsert(ctx context.Context, tasks []*store.Task) error {
	if len(tasks) == 0 {
		return nil
	}
	err := e.batch(ctx, len(tasks), func(q querier) error {
		return insertBatch(ctx, q, taskInsertHead, 5, len(tasks), func(i int, args []any) []any {
			t := tasks[i]
			return append(args, t.ExecutionArn, t.ID, t.Resource, sqlcore.Blob(t.Body), sqlcore.Millis(t.CreatedAt))
		})
	})
	return interpretError("insert tasks", err)
}

// TaskDelete removes an execution's tasks; ids it does not have are
// ignored.
func (e *Executor) TaskDelete(ctx context.Context, executionArn string, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	err := e.batch(ctx, len(ids), func(q querier) error {
		return deleteBatch(ctx, q, taskDeleteHead, []any{executionArn}, ids)
	})
	return interpretError("delete tasks of "+executionArn, err)
}
