package sqlcore

import (
	"context"
	"math"

	"stepwise/store"
)

const (
	mapRunColumns = `arn, execution_arn, state_machine_arn, status, start_date, stop_date, max_concurrency,
    tolerated_failure_count, tolerated_failure_percentage, item_counts, execution_counts, redrive_count, redrive_date`

	// mapRunPutSQL creates a map run or replaces every column of the row
	// of its ARN.
	mapRunPutSQL = `
INSERT INTO stepwise_map_run (` + mapRunColumns + `)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
ON CONFLICT (arn) DO UPDATE SET
    execution_arn = excluded.execution_arn,
    state_machine_arn = excluded.state_machine_arn,
    status = excluded.status,
    start_date = excluded.start_date,
    stop_date = excluded.stop_date,
    max_concurrency = excluded.max_concurrency,
    tolerated_failure_count = excluded.tolerated_failure_count,
    tolerated_failure_percentage = excluded.tolerated_failure_percentage,
    item_counts = excluded.item_counts,
    execution_counts = excluded.execution_counts,
    redrive_count = excluded.redrive_count,
    redrive_date = excluded.redrive_date`

	// MapRunGetSQL and MapRunListSQL are exported for the drivers'
	// tests of their query plans.
	MapRunGetSQL = `SELECT ` + mapRunColumns + ` FROM stepwise_map_run WHERE arn = $1`

	// The cursor is a row value: (start_date, arn) above the last row
	// seen. Without one the query starts above (MinInt64, '').
	MapRunListSQL = `SELECT ` + mapRunColumns + `
FROM stepwise_map_run
WHERE execution_arn = $1 AND (start_date, arn) > ($2, $3)
ORDER BY start_date, arn
LIMIT $4`
)

func scanMapRun(s Scanner) (*store.MapRun, error) {
	var m store.MapRun
	var start int64
	var stop, redrive *int64
	if err := s.Scan(&m.Arn, &m.ExecutionArn, &m.StateMachineArn, &m.Status, &start, &stop, &m.MaxConcurrency,
		&m.ToleratedFailureCount, &m.ToleratedFailurePercentage, &m.ItemCounts, &m.ExecutionCounts,
		&m.RedriveCount, &redrive); err != nil {
		return nil, err
	}
	m.StartDate = FromMillis(start)
	m.StopDate = FromMillisPtr(stop)
	m.RedriveDate = FromMillisPtr(redrive)
	return &m, nil
}

// MapRunPut creates a map run, or replaces its row.
func (c *Core) MapRunPut(ctx context.Context, m *store.MapRun) error {
	_, err := c.conn.Writer().Exec(ctx, mapRunPutSQL, m.Arn, m.ExecutionArn, m.StateMachineArn, m.Status,
		Millis(m.StartDate), MillisPtr(m.StopDate), int64(m.MaxConcurrency), m.ToleratedFailureCount,
		m.ToleratedFailurePercentage, m.ItemCounts, m.ExecutionCounts, int64(m.RedriveCount), MillisPtr(m.RedriveDate))
	return c.conn.Error("put map run "+m.Arn, err)
}

// MapRunGet returns a map run.
func (c *Core) MapRunGet(ctx context.Context, arn string) (*store.MapRun, error) {
	m, err := scanMapRun(c.conn.Reader().QueryRow(ctx, MapRunGetSQL, arn))
	if err != nil {
		return nil, c.conn.Error("get map run "+arn, err)
	}
	return m, nil
}

// MapRunList pages through an execution's map runs in the order they
// started (ties by ARN).
func (c *Core) MapRunList(ctx context.Context, p *store.MapRunListParams) ([]*store.MapRun, error) {
	afterStart, afterArn := int64(math.MinInt64), ""
	if p.AfterArn != "" {
		afterStart, afterArn = Millis(p.AfterStartDate), p.AfterArn
	}
	ms, err := QueryAll(ctx, c.conn.Reader(), MapRunListSQL, []any{p.ExecutionArn, afterStart, afterArn, c.dialect.Limit(p.Limit)}, scanMapRun)
	if err != nil {
		return nil, c.conn.Error("list map runs of "+p.ExecutionArn, err)
	}
	return ms, nil
}
