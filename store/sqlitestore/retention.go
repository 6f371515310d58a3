package sqlitestore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"stepwise/store"
	"stepwise/store/internal/sqlcore"
)

// The statements of ExecutionDeleteClosed. The executions a batch deletes
// travel as one JSON array (json_each), so that each statement is
// prepared once whatever the batch's size, and each table is searched by
// its primary key's first column.
const (
	// The status list is the partial index's, word for word, so that
	// SQLite uses the index.
	executionClosedSQL = `
SELECT id, arn, state_machine_arn
FROM stepwise_execution
WHERE status IN ('SUCCEEDED', 'FAILED', 'TIMED_OUT', 'ABORTED') AND stop_date < ?
ORDER BY stop_date
LIMIT ?`

	closedEventDeleteSQL     = `DELETE FROM stepwise_event WHERE execution_id IN (SELECT value FROM json_each(?))`
	closedInputDeleteSQL     = `DELETE FROM stepwise_input WHERE execution_id IN (SELECT value FROM json_each(?))`
	closedTimerDeleteSQL     = `DELETE FROM stepwise_timer WHERE execution_arn IN (SELECT value FROM json_each(?))`
	closedTaskDeleteSQL      = `DELETE FROM stepwise_task WHERE execution_arn IN (SELECT value FROM json_each(?))`
	closedTagDeleteSQL       = `DELETE FROM stepwise_tag WHERE resource_arn IN (SELECT value FROM json_each(?))`
	closedMapRunDeleteSQL    = `DELETE FROM stepwise_map_run WHERE execution_arn IN (SELECT value FROM json_each(?))`
	closedExecutionDeleteSQL = `DELETE FROM stepwise_execution WHERE id IN (SELECT value FROM json_each(?))`

	// A map run's items go with it (they are keyed by the map run's ARN
	// alone): deleted before it.
	closedMapItemDeleteSQL = `
DELETE FROM stepwise_map_item
WHERE map_run_arn IN (SELECT arn FROM stepwise_map_run WHERE execution_arn IN (SELECT value FROM json_each(?)))`

	// The revisions of a deleted state machine stay for its executions
	// (StateMachineDelete); once the last of them is gone, so are they.
	orphanRevisionDeleteSQL = `
DELETE FROM stepwise_state_machine_revision AS r
WHERE r.state_machine_arn IN (SELECT value FROM json_each(?))
  AND NOT EXISTS (SELECT 1 FROM stepwise_state_machine AS sm WHERE sm.arn = r.state_machine_arn)
  AND NOT EXISTS (SELECT 1 FROM stepwise_execution AS x WHERE x.state_machine_arn = r.state_machine_arn)`
)

// ExecutionDeleteClosed deletes up to p.Limit executions that ended before
// p.StoppedBefore, those that ended first first, with their history,
// replay log, timers, tasks, tags and map runs (and those runs' items),
// and the revisions of deleted state machines none of the executions left
// uses; all in one transaction (a savepoint of the executor's, inside
// one). The executions are picked in the same transaction, so one redriven
// meanwhile is running again and not picked.
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
	rows, err := q.QueryContext(ctx, executionClosedSQL, sqlcore.Millis(p.StoppedBefore), p.Limit)
	if err != nil {
		return 0, err
	}
	var ids []int64
	var arns []string
	machines := map[string]bool{}
	for rows.Next() {
		var id int64
		var arn, sm string
		if err := rows.Scan(&id, &arn, &sm); err != nil {
			rows.Close()
			return 0, err
		}
		ids, arns = append(ids, id), append(arns, arn)
		machines[sm] = true
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return 0, err
	}
	if len(ids) == 0 {
		return 0, nil
	}
	idsJSON, err := json.Marshal(ids)
	if err != nil {
		return 0, err
	}
	arnsJSON, err := json.Marshal(arns)
	if err != nil {
		return 0, err
	}
	smArns := make([]string, 0, len(machines))
	for sm := range machines {
		smArns = append(smArns, sm)
	}
	smJSON, err := json.Marshal(smArns)
	if err != nil {
		return 0, err
	}
	// Children first: the foreign keys are checked statement by
	// statement.
	for _, st := range []struct {
		query string
		arg   []byte
	}{
		{closedEventDeleteSQL, idsJSON},
		{closedInputDeleteSQL, idsJSON},
		{closedTimerDeleteSQL, arnsJSON},
		{closedTaskDeleteSQL, arnsJSON},
		{closedTagDeleteSQL, arnsJSON},
		{closedMapItemDeleteSQL, arnsJSON}, // before their map runs
		{closedMapRunDeleteSQL, arnsJSON},
		{closedExecutionDeleteSQL, idsJSON},
		{orphanRevisionDeleteSQL, smJSON},
	} {
		if _, err := q.ExecContext(ctx, st.query, string(st.arg)); err != nil {
			return 0, err
		}
	}
	return len(ids), nil
}
