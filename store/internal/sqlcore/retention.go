package sqlcore

import (
	"context"
	"fmt"

	"stepwise/store"
)

// The statements of ExecutionDeleteClosed. The executions a batch deletes
// travel as one list argument (Dialect.In and Dialect.List), so that each
// statement has one text whatever the batch's size, and each table is
// searched by its primary key's first column. %[1]s is the condition of a
// list of ids, %[2]s of a list of ARNs.
const (
	// The status list is the partial index's, word for word, so that
	// SQLite uses the index. %s is Dialect.LockRows: in PostgreSQL the
	// rows are kept from being redriven until they are gone, and a row
	// redriven first is RUNNING when the lock is granted and is passed
	// over.
	executionClosedSQL = `
SELECT id, arn, state_machine_arn
FROM stepwise_execution
WHERE status IN ('SUCCEEDED', 'FAILED', 'TIMED_OUT', 'ABORTED') AND stop_date < $1
ORDER BY stop_date
LIMIT $2%s`

	closedEventDeleteSQL     = `DELETE FROM stepwise_history WHERE execution_id %[1]s`
	closedInputDeleteSQL     = `DELETE FROM stepwise_input WHERE execution_id %[1]s`
	closedTimerDeleteSQL     = `DELETE FROM stepwise_timer WHERE execution_arn %[2]s`
	closedTaskDeleteSQL      = `DELETE FROM stepwise_task WHERE execution_arn %[2]s`
	closedTagDeleteSQL       = `DELETE FROM stepwise_tag WHERE resource_arn %[2]s`
	closedMapRunDeleteSQL    = `DELETE FROM stepwise_map_run WHERE execution_arn %[2]s`
	closedExecutionDeleteSQL = `DELETE FROM stepwise_execution WHERE id %[1]s`

	// A map run's items go with it (they are keyed by the map run's ARN
	// alone): deleted before it.
	closedMapItemDeleteSQL = `
DELETE FROM stepwise_map_item
WHERE map_run_arn IN (SELECT arn FROM stepwise_map_run WHERE execution_arn %[2]s)`

	// The revisions of a deleted state machine stay for its executions
	// (StateMachineDelete); once the last of them is gone, so are they.
	orphanRevisionDeleteSQL = `
DELETE FROM stepwise_state_machine_revision AS r
WHERE r.state_machine_arn %[2]s
  AND NOT EXISTS (SELECT 1 FROM stepwise_state_machine AS sm WHERE sm.arn = r.state_machine_arn)
  AND NOT EXISTS (SELECT 1 FROM stepwise_execution AS x WHERE x.map_run_arn = '' AND x.state_machine_arn = r.state_machine_arn)`
)

// retentionSQL is ExecutionDeleteClosed's statements in a dialect.
type retentionSQL struct {
	closed string
	// The deletes, children first (the foreign keys are checked
	// statement by statement), each with what it is given: the ids, the
	// ARNs or the state machines.
	deletes []retentionDelete
}

type retentionDelete struct {
	sql string
	of  int // retentionIDs, retentionArns or retentionMachines
}

const (
	retentionIDs = iota
	retentionArns
	retentionMachines
)

func newRetentionSQL(d *Dialect) retentionSQL {
	ids, arns := d.In("bigint", 1), d.In("text", 1)
	del := func(format string, of int) retentionDelete {
		return retentionDelete{fmt.Sprintf(format, ids, arns), of}
	}
	return retentionSQL{
		closed: fmt.Sprintf(executionClosedSQL, d.LockRows),
		deletes: []retentionDelete{
			del(closedEventDeleteSQL, retentionIDs),
			del(closedInputDeleteSQL, retentionIDs),
			del(closedTimerDeleteSQL, retentionArns),
			del(closedTaskDeleteSQL, retentionArns),
			del(closedTagDeleteSQL, retentionArns),
			del(closedMapItemDeleteSQL, retentionArns), // before their map runs
			del(closedMapRunDeleteSQL, retentionArns),
			del(closedExecutionDeleteSQL, retentionIDs),
			del(orphanRevisionDeleteSQL, retentionMachines),
		},
	}
}

// ListSQL is the statements that take a list (Dialect.In) in dialect d:
// exported for the drivers' tests of their query plans, each seeking by
// the list rather than scanning a table.
func ListSQL(d *Dialect) []string {
	s := New(nil, d).sql
	out := []string{s.executionIDs, s.timerDelete, s.taskDelete, s.tagDelete}
	for _, del := range s.retention.deletes {
		out = append(out, del.sql)
	}
	return out
}

// ExecutionDeleteClosed deletes up to p.Limit executions that ended before
// p.StoppedBefore, those that ended first first, with their history,
// replay log, timers, tasks, tags and map runs (and those runs' items),
// and the revisions of deleted state machines none of the executions left
// uses; all in one transaction (a savepoint of the executor's, inside
// one). The executions are picked in the same transaction, so one
// redriven meanwhile is running again and not picked.
func (c *Core) ExecutionDeleteClosed(ctx context.Context, p *store.ExecutionDeleteClosedParams) (int, error) {
	if p.Limit <= 0 {
		return 0, fmt.Errorf("delete closed executions: limit %d: must be positive", p.Limit)
	}
	var n int
	err := c.conn.InTx(ctx, func(q Querier) error {
		var err error
		n, err = c.deleteClosed(ctx, q, p)
		return err
	})
	if err != nil {
		return 0, c.conn.Error("delete closed executions", err)
	}
	return n, nil
}

func (c *Core) deleteClosed(ctx context.Context, q Querier, p *store.ExecutionDeleteClosedParams) (int, error) {
	var ids []int64
	var arns, machines []string
	seen := map[string]bool{}
	_, err := QueryAll(ctx, q, c.sql.retention.closed, []any{Millis(p.StoppedBefore), int64(p.Limit)}, func(s Scanner) (struct{}, error) {
		var id int64
		var arn, sm string
		if err := s.Scan(&id, &arn, &sm); err != nil {
			return struct{}{}, err
		}
		ids, arns = append(ids, id), append(arns, arn)
		if !seen[sm] {
			seen[sm] = true
			machines = append(machines, sm)
		}
		return struct{}{}, nil
	})
	if err != nil || len(ids) == 0 {
		return 0, err
	}
	var lists [3]any
	for i, l := range []any{ids, arns, machines} {
		if lists[i], err = c.dialect.List(l); err != nil {
			return 0, err
		}
	}
	stmts := make([]Stmt, len(c.sql.retention.deletes))
	for i, d := range c.sql.retention.deletes {
		stmts[i] = Stmt{d.sql, []any{lists[d.of]}}
	}
	if err := q.ExecBatch(ctx, stmts...); err != nil {
		return 0, err
	}
	return len(ids), nil
}
