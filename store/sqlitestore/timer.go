package sqlitestore

import (
	"context"
	"time"

	"stepwise/store"
	"stepwise/store/internal/sqlcore"
)

const (
	timerInsertHead = `INSERT INTO stepwise_timer (execution_arn, id, fire_at)`

	timerDeleteHead = `DELETE FROM stepwise_timer WHERE execution_arn = ? AND id IN`

	timerListDueSQL = `
SELECT execution_arn, id, fire_at
FROM stepwise_timer
WHERE fire_at <= ?
ORDER BY fire_at, execution_arn, id
LIMIT ?`

	timerNextSQL = `
SELECT execution_arn, id, fire_at
FROM stepwise_timer
ORDER BY fire_at, execution_arn, id
LIMIT 1`

	timerListForExecutionSQL = `
SELECT execution_arn, id, fire_at
FROM stepwise_timer
WHERE execution_arn = ?
ORDER BY fire_at, id`

	taskInsertHead = `INSERT INTO stepwise_task (execution_arn, id, resource, body, created_at)`

	taskDeleteHead = `DELETE FROM stepwise_task WHERE execution_arn = ? AND id IN`

	taskListForExecutionSQL = `
SELECT execution_arn, id, resource, body, created_at
FROM stepwise_task
WHERE execution_arn = ?
ORDER BY created_at, id`
)

func scanTimer(s scanner) (*store.Timer, error) {
	var t store.Timer
	var fireAt int64
	if err := s.Scan(&t.ExecutionArn, &t.ID, &fireAt); err != nil {
		return nil, err
	}
	t.FireAt = sqlcore.FromMillis(fireAt)
	return &t, nil
}

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

// TimerListDue lists timers with FireAt <= before, earliest first.
func (e *Executor) TimerListDue(ctx context.Context, before time.Time, limitN int) ([]*store.Timer, error) {
	ts, err := queryAll(ctx, e.reader(), timerListDueSQL, []any{sqlcore.Millis(before), limit(limitN)}, scanTimer)
	if err != nil {
		return nil, interpretError("list due timers", err)
	}
	return ts, nil
}

// TimerNext returns the earliest pending timer, or store.ErrNotFound.
func (e *Executor) TimerNext(ctx context.Context) (*store.Timer, error) {
	t, err := scanTimer(e.reader().QueryRowContext(ctx, timerNextSQL))
	if err != nil {
		return nil, interpretError("next timer", err)
	}
	return t, nil
}

// TimerListForExecution lists an execution's timers, earliest first.
func (e *Executor) TimerListForExecution(ctx context.Context, executionArn string) ([]*store.Timer, error) {
	ts, err := queryAll(ctx, e.reader(), timerListForExecutionSQL, []any{executionArn}, scanTimer)
	if err != nil {
		return nil, interpretError("list timers of "+executionArn, err)
	}
	return ts, nil
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

// TaskListForExecution lists an execution's tasks, oldest first.
func (e *Executor) TaskListForExecution(ctx context.Context, executionArn string) ([]*store.Task, error) {
	ts, err := queryAll(ctx, e.reader(), taskListForExecutionSQL, []any{executionArn}, func(s scanner) (*store.Task, error) {
		var t store.Task
		var created int64
		if err := s.Scan(&t.ExecutionArn, &t.ID, &t.Resource, &t.Body, &created); err != nil {
			return nil, err
		}
		t.CreatedAt = sqlcore.FromMillis(created)
		return &t, nil
	})
	if err != nil {
		return nil, interpretError("list tasks of "+executionArn, err)
	}
	return ts, nil
}
