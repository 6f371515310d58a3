package sqlcore

import (
	"context"
	"stepwise/history"
	"stepwise/store"
)

// An execution's row and its reads by ARN; its inserts, updates and
// filtered lists are still each driver's.
const (
	// ExecutionColumns are an execution's columns, in the order
	// ScanExecution reads them.
	ExecutionColumns = `arn, state_machine_arn, revision_id, name, status, input, output, error, cause,
    start_date, stop_date, role_arn, trace_header, redrive_count, redrive_date, version, last_event_id, test_case,
    version_arn, alias_arn, map_run_arn, policies`

	executionGetSQL = `SELECT ` + ExecutionColumns + ` FROM stepwise_execution WHERE arn = $1`

	// status = 'RUNNING' is literal so that the partial index applies.
	// ExecutionListRunningSQL is exported for the drivers' tests of its
	// query plan.
	ExecutionListRunningSQL = `SELECT ` + ExecutionColumns + `
FROM stepwise_execution
WHERE status = 'RUNNING' AND arn > $1
ORDER BY arn
LIMIT $2`
)

// ScanExecution reads a row of ExecutionColumns.
func ScanExecution(s Scanner) (*store.Execution, error) {
	var x store.Execution
	var start int64
	var status string
	var stop, redrive *int64
	if err := s.Scan(&x.Arn, &x.StateMachineArn, &x.RevisionID, &x.Name, &status, &x.Input,
		&x.Output, &x.Error, &x.Cause, &start, &stop, &x.RoleArn, &x.TraceHeader,
		&x.RedriveCount, &redrive, &x.Version, &x.LastEventID, &x.TestCase,
		&x.VersionArn, &x.AliasArn, &x.MapRunArn, &x.Policies); err != nil {
		return nil, err
	}
	x.Status = history.ExecutionStatus(status)
	x.StartDate = FromMillis(start)
	x.StopDate = FromMillisPtr(stop)
	x.RedriveDate = FromMillisPtr(redrive)
	return &x, nil
}

// ExecutionGet returns an execution.
func (c *Core) ExecutionGet(ctx context.Context, arn string) (*store.Execution, error) {
	x, err := ScanExecution(c.conn.Reader().QueryRow(ctx, executionGetSQL, arn))
	if err != nil {
		return nil, c.conn.Error("get execution "+arn, err)
	}
	return x, nil
}

// ExecutionListRunning pages through RUNNING executions by ARN.
func (c *Core) ExecutionListRunning(ctx context.Context, afterArn string, limitN int) ([]*store.Execution, error) {
	xs, err := QueryAll(ctx, c.conn.Reader(), ExecutionListRunningSQL, []any{afterArn, c.dialect.Limit(limitN)}, ScanExecution)
	if err != nil {
		return nil, c.conn.Error("list running executions", err)
	}
	return xs, nil
}
