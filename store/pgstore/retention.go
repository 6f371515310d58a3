package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"stepwise/store"
	"stepwise/store/internal/sqlcore"
)

// The statements of ExecutionDeleteClosed. The executions a batch deletes
// travel as arrays, so that each statement has one text whatever the
// batch's size, and each table is searched by its primary key's first
// column.
const (
	// The status list is the partial index's. FOR UPDATE keeps the rows
	// from being redriven until they are gone; a row redriven first is
	// RUNNING when the lock is granted and is passed over.
	executionClosedSQL = `
SELECT id, arn, state_machine_arn
FROM stepwise_execution
WHERE status IN ('SUCCEEDED', 'FAILED', 'TIMED_OUT', 'ABORTED') AND stop_date < $1
ORDER BY stop_date
LIMIT $2
FOR UPDATE`

	closedEventDeleteSQL     = `DELETE FROM stepwise_event WHERE execution_id = ANY ($1::bigint[])`
	closedInputDeleteSQL     = `DELETE FROM stepwise_input WHERE execution_id = ANY ($1::bigint[])`
	closedTimerDeleteSQL     = `DELETE FROM stepwise_timer WHERE execution_arn = ANY ($1::text[])`
	closedTaskDeleteSQL      = `DELETE FROM stepwise_task WHERE execution_arn = ANY ($1::text[])`
	closedTagDeleteSQL       = `DELETE FROM stepwise_tag WHERE resource_arn = ANY ($1::text[])`
	closedMapRunDeleteSQL    = `DELETE FROM stepwise_map_run WHERE execution_arn = ANY ($1::text[])`
	closedExecutionDeleteSQL = `DELETE FROM stepwise_execution WHERE id = ANY ($1::bigint[])`

	// A map run's items go with it (they are keyed by the map run's ARN
	// alone): deleted before it.
	closedMapItemDeleteSQL = `
DELETE FROM stepwise_map_item
WHERE map_run_arn IN (SELECT arn FROM stepwise_map_run WHERE execution_arn = ANY ($1::text[]))`

	// The revisions of a deleted state machine stay for its executions
	// (StateMachineDelete); once the last of them is gone, so are they.
	orphanRevisionDeleteSQL = `
DELETE FROM stepwise_state_machine_revision AS r
WHERE r.state_machine_arn = ANY ($1::text[])
  AND NOT EXISTS (SELECT 1 FROM stepwise_state_machine AS sm WHERE sm.arn = r.state_machine_arn)
  AND NOT EXISTS (SELECT 1 FROM stepwise_execution AS x WHERE x.state_machine_arn = r.state_machine_arn)`
)

// ExecutionDeleteClosed deletes up to p.Limit executions that ended before
// p.StoppedBefore, those that ended first first, with their history,
// replay log, timers, tasks, tags and map runs (and those runs' items),
// and the revisions of deleted state machines none of the executions left
// uses; all in one transaction (a savepoint of the executor's, inside
// one). The executions are picked and locked in the same transaction, so
// one redriven meanwhile is running again and not picked.
func (e *Executor) ExecutionDeleteClosed(ctx context.Context, p *store.ExecutionDeleteClosedParams) (int, error) {
	if p.Limit <= 0 {
		return 0, fmt.Errorf("delete closed executions: limit %d: must be positive", p.Limit)
	}
	var n int
	err := e.inTx(ctx, func(q querier) error {
		var err error
		n, err = deleteClosed(ctx, q, p)
		return err
	})
	if err != nil {
		return 0, interpretError("delete closed executions", err)
	}
	return n, nil
}

func deleteClosed(ctx context.Context, q querier, p *store.ExecutionDeleteClosedParams) (int, error) {
	rows, err := q.Query(ctx, executionClosedSQL, sqlcore.Millis(p.StoppedBefore), int64(p.Limit))
	if err != nil {
		return 0, err
	}
	var ids []int64
	var arns, machines []string
	seen := map[string]bool{}
	for rows.Next() {
		var id int64
		var arn, sm string
		if err := rows.Scan(&id, &arn, &sm); err != nil {
			rows.Close()
			return 0, err
		}
		ids, arns = append(ids, id), append(arns, arn)
		if !seen[sm] {
			seen[sm] = true
			machines = append(machines, sm)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	if len(ids) == 0 {
		return 0, nil
	}
	// Children first: the foreign keys are checked statement by
	// statement. One round trip.
	b := &pgx.Batch{}
	b.Queue(closedEventDeleteSQL, ids)
	b.Queue(closedInputDeleteSQL, ids)
	b.Queue(closedTimerDeleteSQL, arns)
	b.Queue(closedTaskDeleteSQL, arns)
	b.Queue(closedTagDeleteSQL, arns)
	b.Queue(closedMapItemDeleteSQL, arns) // before their map runs
	b.Queue(closedMapRunDeleteSQL, arns)
	b.Queue(closedExecutionDeleteSQL, ids)
	b.Queue(orphanRevisionDeleteSQL, machines)
	if err := q.SendBatch(ctx, b).Close(); err != nil {
		return 0, err
	}
	return len(ids), nil
}
