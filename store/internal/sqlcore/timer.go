package sqlcore

import (
	"context"
	"time"

	"stepwise/store"
)

// The reads of timers and tasks; their inserts and deletes are
// rows.go's.
const (
	// TimerListDueSQL and TimerNextSQL are exported for the drivers'
	// tests of their query plans.
	TimerListDueSQL = `
SELECT execution_arn, id, fire_at
FROM stepwise_timer
WHERE fire_at <= $1
ORDER BY fire_at, execution_arn, id
LIMIT $2`

	TimerNextSQL = `
SELECT execution_arn, id, fire_at
FROM stepwise_timer
ORDER BY fire_at, execution_arn, id
LIMIT 1`

	timerListForExecutionSQL = `
SELECT execution_arn, id, fire_at
FROM stepwise_timer
WHERE execution_arn = $1
ORDER BY fire_at, id`

	taskListForExecutionSQL = `
SELECT execution_arn, id, resource, body, created_at
FROM stepwise_task
WHERE execution_arn = $1
ORDER BY created_at, id`
)

func scanTimer(s Scanner) (*store.Timer, error) {
	var t store.Timer
	var fireAt int64
	if err := s.Scan(&t.ExecutionArn, &t.ID, &fireAt); err != nil {
		return nil, err
	}
	t.FireAt = FromMillis(fireAt)
	return &t, nil
}

// TimerListDue lists timers with FireAt <= before, earliest first.
func (c *Core) TimerListDue(ctx context.Context, before time.Time, limitN int) ([]*store.Timer, error) {
	ts, err := QueryAll(ctx, c.conn.Reader(), TimerListDueSQL, []any{Millis(before), c.dialect.Limit(limitN)}, scanTimer)
	if err != nil {
		return nil, c.conn.Error("list due timers", err)
	}
	return ts, nil
}

// TimerNext returns the earliest pending timer, or store.ErrNotFound.
func (c *Core) TimerNext(ctx context.Context) (*store.Timer, error) {
	t, err := scanTimer(c.conn.Reader().QueryRow(ctx, TimerNextSQL))
	if err != nil {
		return nil, c.conn.Error("next timer", err)
	}
	return t, nil
}

// TimerListForExecution lists an execution's timers, earliest first.
func (c *Core) TimerListForExecution(ctx context.Context, executionArn string) ([]*store.Timer, error) {
	ts, err := QueryAll(ctx, c.conn.Reader(), timerListForExecutionSQL, []any{executionArn}, scanTimer)
	if err != nil {
		return nil, c.conn.Error("list timers of "+executionArn, err)
	}
	return ts, nil
}

// TaskListForExecution lists an execution's tasks, oldest first.
func (c *Core) TaskListForExecution(ctx context.Context, executionArn string) ([]*store.Task, error) {
	ts, err := QueryAll(ctx, c.conn.Reader(), taskListForExecutionSQL, []any{executionArn}, func(s Scanner) (*store.Task, error) {
		var t store.Task
		var created int64
		if err := s.Scan(&t.ExecutionArn, &t.ID, &t.Resource, &t.Body, &created); err != nil {
			return nil, err
		}
		t.CreatedAt = FromMillis(created)
		return &t, nil
	})
	if err != nil {
		return nil, c.conn.Error("list tasks of "+executionArn, err)
	}
	return ts, nil
}
