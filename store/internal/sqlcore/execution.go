package sqlcore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"stepwise/history"
	"stepwise/store"
)

// An execution's row, its insert, its update at an expected version, and
// its reads. The insert and the update are exported for the drivers'
// StepWrite, which runs them in its own way.
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

	// ExecutionInsertSQL inserts an execution's row (ExecutionInsertArgs).
	ExecutionInsertSQL = `
INSERT INTO stepwise_execution (` + ExecutionColumns + `)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22)`

	// ExecutionSetSQL is an update's changes of an execution's row, if
	// it is at the expected version (ExecutionUpdateArgs).
	ExecutionSetSQL = `
SET status = $1, output = $2, error = $3, cause = $4, stop_date = $5, last_event_id = $6,
    redrive_count = $7, redrive_date = $8, version = version + 1
WHERE arn = $9 AND version = $10`

	// ExecutionUpdateSQL updates an execution's row and returns it as
	// written.
	ExecutionUpdateSQL = `UPDATE stepwise_execution` + ExecutionSetSQL + `
RETURNING ` + ExecutionColumns

	// ExecutionVersionSQL reads an execution's version, to tell why an
	// update matched no row (VersionConflict).
	ExecutionVersionSQL = `SELECT version FROM stepwise_execution WHERE arn = $1`

	// The cursor is a row value: (start_date, arn) below the last row
	// seen. Without one the query starts below (MaxInt64, ''). The
	// queries of a version, an alias or a map run are
	// ExecutionListQuery's. ExecutionListSQL and ExecutionListStatusSQL
	// are exported for the drivers' tests of their query plans.
	ExecutionListSQL = `SELECT ` + ExecutionColumns + `
FROM stepwise_execution
WHERE map_run_arn = '' AND state_machine_arn = $1 AND (start_date, arn) < ($2, $3)
ORDER BY start_date DESC, arn DESC
LIMIT $4`

	ExecutionListStatusSQL = `SELECT ` + ExecutionColumns + `
FROM stepwise_execution
WHERE map_run_arn = '' AND state_machine_arn = $1 AND status = $2 AND (start_date, arn) < ($3, $4)
ORDER BY start_date DESC, arn DESC
LIMIT $5`
)

// ExecutionInsertArgs are the arguments of ExecutionInsertSQL.
func ExecutionInsertArgs(x *store.Execution) []any {
	return []any{x.Arn, x.StateMachineArn, x.RevisionID, x.Name, string(x.Status), x.Input,
		x.Output, x.Error, x.Cause, Millis(x.StartDate), MillisPtr(x.StopDate), x.RoleArn,
		x.TraceHeader, int64(x.RedriveCount), MillisPtr(x.RedriveDate), x.Version, x.LastEventID, x.TestCase,
		x.VersionArn, x.AliasArn, x.MapRunArn, x.Policies}
}

// ExecutionUpdateArgs are the arguments of ExecutionSetSQL.
func ExecutionUpdateArgs(p *store.ExecutionUpdateParams) []any {
	return []any{string(p.Status), p.Output, p.Error, p.Cause, MillisPtr(p.StopDate), p.LastEventID,
		int64(p.RedriveCount), MillisPtr(p.RedriveDate), p.Arn, p.ExpectedVersion}
}

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

// ExecutionInsert creates an execution with the version it is given.
func (c *Core) ExecutionInsert(ctx context.Context, p *store.ExecutionInsertParams) (*store.Execution, error) {
	x := p.Execution
	if _, err := c.conn.Writer().Exec(ctx, ExecutionInsertSQL, ExecutionInsertArgs(x)...); err != nil {
		return nil, c.conn.Error("insert execution "+x.Arn, err)
	}
	out := *x
	out.StartDate = Truncate(x.StartDate)
	out.StopDate = TruncatePtr(x.StopDate)
	out.RedriveDate = TruncatePtr(x.RedriveDate)
	return &out, nil
}

// ExecutionUpdate writes an execution's new status if its version is still
// p.ExpectedVersion, and returns the row as written.
func (c *Core) ExecutionUpdate(ctx context.Context, p *store.ExecutionUpdateParams) (*store.Execution, error) {
	q := c.conn.Writer()
	x, err := ScanExecution(q.QueryRow(ctx, ExecutionUpdateSQL, ExecutionUpdateArgs(p)...))
	if errors.Is(err, c.dialect.ErrNoRows) {
		// Nothing matched: tell a missing execution from a stale version.
		err = VersionConflict(ctx, q, p.Arn, p.ExpectedVersion)
	}
	if err != nil {
		return nil, c.conn.Error("update execution "+p.Arn, err)
	}
	return x, nil
}

// VersionConflict tells why an update of arn expecting version expected
// matched no row: a stale version (store.ErrConflict) or a missing
// execution (the dialect's ErrNoRows).
func VersionConflict(ctx context.Context, q Querier, arn string, expected int64) error {
	var version int64
	if err := q.QueryRow(ctx, ExecutionVersionSQL, arn).Scan(&version); err != nil {
		return fmt.Errorf("execution %s: %w", arn, err)
	}
	return fmt.Errorf("execution %s at version %d, not %d: %w", arn, version, expected, store.ErrConflict)
}

// ExecutionList pages through a state machine's executions, or a map
// run's, newest first (ties by ARN, descending), of a status, a version
// or an alias when p says.
func (c *Core) ExecutionList(ctx context.Context, p *store.ExecutionListParams) ([]*store.Execution, error) {
	query, args := ExecutionListQuery(p, c.dialect.Limit(p.Limit))
	xs, err := QueryAll(ctx, c.conn.Reader(), query, args, ScanExecution)
	if err != nil {
		return nil, c.conn.Error("list executions of "+executionListOf(p), err)
	}
	return xs, nil
}

// executionListOf names what ExecutionList lists the executions of.
func executionListOf(p *store.ExecutionListParams) string {
	if p.MapRunArn != "" {
		return p.MapRunArn
	}
	return p.StateMachineArn
}

// ExecutionListQuery is ExecutionList's query and its arguments, limit
// last. The filters of a map run, a version and an alias repeat their
// partial indexes' conditions, so that the planner may use them whatever
// the parameters. A map run's children are its own: their state machine
// is not looked at; a state machine's executions are those of no map run
// (the list indexes leave children out).
func ExecutionListQuery(p *store.ExecutionListParams, limit any) (string, []any) {
	afterStart, afterArn := int64(math.MaxInt64), ""
	if p.AfterArn != "" {
		afterStart, afterArn = Millis(p.AfterStartDate), p.AfterArn
	}
	if p.MapRunArn == "" && p.VersionArn == "" && p.AliasArn == "" {
		if p.Status != "" {
			return ExecutionListStatusSQL, []any{p.StateMachineArn, string(p.Status), afterStart, afterArn, limit}
		}
		return ExecutionListSQL, []any{p.StateMachineArn, afterStart, afterArn, limit}
	}
	var b strings.Builder
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	b.WriteString("SELECT " + ExecutionColumns + "\nFROM stepwise_execution\nWHERE ")
	if p.MapRunArn != "" {
		b.WriteString("map_run_arn <> '' AND map_run_arn = " + arg(p.MapRunArn) + " AND ")
	}
	if p.VersionArn != "" {
		b.WriteString("version_arn <> '' AND version_arn = " + arg(p.VersionArn) + " AND ")
	}
	if p.AliasArn != "" {
		b.WriteString("alias_arn <> '' AND alias_arn = " + arg(p.AliasArn) + " AND ")
	}
	if p.MapRunArn == "" {
		b.WriteString("map_run_arn = '' AND state_machine_arn = " + arg(p.StateMachineArn) + " AND ")
	}
	if p.Status != "" {
		b.WriteString("status = " + arg(string(p.Status)) + " AND ")
	}
	b.WriteString("(start_date, arn) < (" + arg(afterStart) + ", " + arg(afterArn) + ")\n")
	b.WriteString("ORDER BY start_date DESC, arn DESC\nLIMIT " + arg(limit))
	return b.String(), args
}
