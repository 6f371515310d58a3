package pgstore

import (
	"context"

	"stepwise/store"
	"stepwise/store/internal/sqlcore"
)

const (
	timerInsertSQL = `
INSERT INTO stepwise_timer (execution_arn, id, fire_at)
SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[])`

	timerDeleteSQL = `DELETE FROM stepwise_timer WHERE execution_arn = $1 AND id = ANY ($2::text[])`

	// (execution, id) pairs of any number of executions.
	timerDeletePairsSQL = `
DELETE FROM stepwise_timer AS t
USING unnest($1::text[], $2::text[]) AS d (execution_arn, id)
WHERE t.execution_arn = d.execution_arn AND t.id = d.id`

	taskInsertSQL = `
INSERT INTO stepwise_task (execution_arn, id, resource, body, created_at)
SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bytea[], $5::bigint[])`

	taskDeleteSQL = `DELETE FROM stepwise_task WHERE execution_arn = $1 AND id = ANY ($2::text[])`

	taskDeletePairsSQL = `
DELETE FROM stepwise_task AS t
USING unnest($1::text[], $2::text[]) AS d (execution_arn, id)
WHERE t.execution_arn = d.execution_arn AND t.id = d.id`
)

// timerColumns are the arrays of timerInsertSQL.
type timerColumns struct {
	arns, ids []string
	fireAts   []int64
}

func (c *timerColumns) add(t *store.Timer) {
	c.arns = append(c.arns, t.ExecutionArn)
	c.ids = append(c.ids, t.ID)
	c.fireAts = append(c.fireAts, sqlcore.Millis(t.FireAt))
}

func (c *timerColumns) args() []any { return []any{c.arns, c.ids, c.fireAts} }

// taskColumns are the arrays of taskInsertSQL.
type taskColumns struct {
	arns, ids, resources []string
	bodies               [][]byte
	createdAts           []int64
}

func (c *taskColumns) add(t *store.Task) {
	c.arns = append(c.arns, t.ExecutionArn)
	c.ids = append(c.ids, t.ID)
	c.resources = append(c.resources, t.Resource)
	c.bodies = append(c.bodies, sqlcore.Blob(t.Body))
	c.createdAts = append(c.createdAts, sqlcore.Millis(t.CreatedAt))
}

func (c *taskColumns) args() []any {
	return []any{c.arns, c.ids, c.resources, c.bodies, c.createdAts}
}

// pairColumns are the (execution, id) arrays of a pairs delete.
type pairColumns struct {
	arns, ids []string
}

func (c *pairColumns) add(arn string, ids []string) {
	for _, id := range ids {
		c.arns = append(c.arns, arn)
		c.ids = append(c.ids, id)
	}
}

func (c *pairColumns) args() []any { return []any{c.arns, c.ids} }

// TimerInsert adds timers, all or none. An id the execution already has is
// store.ErrAlreadyExists; an execution that does not exist
// store.ErrNotFound.
func (e *Executor) TimerInsert(ctx context.Context, timers []*store.Timer) error {
	if len(timers) == 0 {
		return nil
	}
	var c timerColumns
	for _, t := range timers {
		c.add(t)
	}
	_, err := e.q().Exec(ctx, timerInsertSQL, c.args()...)
	return interpretError("insert timers", err)
}

// TimerDelete removes an execution's timers; ids it does not have are
// ignored.
func (e *Executor) TimerDelete(ctx context.Context, executionArn string, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	_, err := e.q().Exec(ctx, timerDeleteSQL, executionArn, ids)
	return interpretError("delete timers of "+executionArn, err)
}

// TaskInsert adds tasks, all or none. An id the execution already has is
// store.ErrAlreadyExists.
func (e *Executor) TaskInsert(ctx context.Context, tasks []*store.Task) error {
	if len(tasks) == 0 {
		return nil
	}
	var c taskColumns
	for _, t := range tasks {
		c.add(t)
	}
	_, err := e.q().Exec(ctx, taskInsertSQL, c.args()...)
	return interpretError("insert tasks", err)
}

// TaskDelete removes an execution's tasks; ids it does not have are
// ignored.
func (e *Executor) TaskDelete(ctx context.Context, executionArn string, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	_, err := e.q().Exec(ctx, taskDeleteSQL, executionArn, ids)
	return interpretError("delete tasks of "+executionArn, err)
}
