package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"strings"

	"stepwise/store"
	"stepwise/store/internal/sqlcore"
)

const (
	executionInsertSQL = `
INSERT INTO stepwise_execution (` + sqlcore.ExecutionColumns + `)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

	executionUpdateSQL = `
UPDATE stepwise_execution
SET status = ?, output = ?, error = ?, cause = ?, stop_date = ?, last_event_id = ?,
    redrive_count = ?, redrive_date = ?, version = version + 1
WHERE arn = ? AND version = ?
RETURNING ` + sqlcore.ExecutionColumns

	executionVersionSQL = `SELECT version FROM stepwise_execution WHERE arn = ?`

	// The cursor is a row value: (start_date, arn) below the last row seen.
	// Without one the query starts below (MaxInt64, ''). The queries of a
	// version, an alias or a map run are executionListQuery's.
	executionListSQL = `SELECT ` + sqlcore.ExecutionColumns + `
FROM stepwise_execution
WHERE state_machine_arn = ? AND (start_date, arn) < (?, ?)
ORDER BY start_date DESC, arn DESC
LIMIT ?`

	executionListStatusSQL = `SELECT ` + sqlcore.ExecutionColumns + `
FROM stepwise_execution
WHERE state_machine_arn = ? AND status = ? AND (start_date, arn) < (?, ?)
ORDER BY start_date DESC, arn DESC
LIMIT ?`
)

// ExecutionInsert creates an execution with the version it is given.
func (e *Executor) ExecutionInsert(ctx context.Context, p *store.ExecutionInsertParams) (*store.Execution, error) {
	x := p.Execution
	if _, err := e.writer().ExecContext(ctx, executionInsertSQL, executionInsertArgs(x)...); err != nil {
		return nil, interpretError("insert execution "+x.Arn, err)
	}
	out := *x
	out.StartDate = sqlcore.Truncate(x.StartDate)
	out.StopDate = sqlcore.TruncatePtr(x.StopDate)
	out.RedriveDate = sqlcore.TruncatePtr(x.RedriveDate)
	return &out, nil
}

// executionInsertArgs are the arguments of executionInsertSQL.
func executionInsertArgs(x *store.Execution) []any {
	return []any{x.Arn, x.StateMachineArn, x.RevisionID, x.Name, string(x.Status), x.Input,
		x.Output, x.Error, x.Cause, sqlcore.Millis(x.StartDate), sqlcore.MillisPtr(x.StopDate), x.RoleArn,
		x.TraceHeader, x.RedriveCount, sqlcore.MillisPtr(x.RedriveDate), x.Version, x.LastEventID, x.TestCase,
		x.VersionArn, x.AliasArn, x.MapRunArn, x.Policies}
}

// ExecutionUpdate writes an execution's new status if its version is still
// p.ExpectedVersion, and returns the row as written.
func (e *Executor) ExecutionUpdate(ctx context.Context, p *store.ExecutionUpdateParams) (*store.Execution, error) {
	q := e.writer()
	x, err := sqlcore.ScanExecution(q.QueryRowContext(ctx, executionUpdateSQL,
		string(p.Status), p.Output, p.Error, p.Cause, sqlcore.MillisPtr(p.StopDate), p.LastEventID,
		p.RedriveCount, sqlcore.MillisPtr(p.RedriveDate), p.Arn, p.ExpectedVersion))
	if errors.Is(err, sql.ErrNoRows) {
		// Nothing matched: tell a missing execution from a stale version.
		err = versionConflict(ctx, q, p)
	}
	if err != nil {
		return nil, interpretError("update execution "+p.Arn, err)
	}
	return x, nil
}

// ExecutionList pages through a state machine's executions, or a map
// run's, newest first (ties by ARN, descending), of a status, a version
// or an alias when p says.
func (e *Executor) ExecutionList(ctx context.Context, p *store.ExecutionListParams) ([]*store.Execution, error) {
	afterStart, afterArn := int64(math.MaxInt64), ""
	if p.AfterArn != "" {
		afterStart, afterArn = sqlcore.Millis(p.AfterStartDate), p.AfterArn
	}
	query, args := executionListQuery(p)
	args = append(args, afterStart, afterArn, limit(p.Limit))
	xs, err := queryAll(ctx, e.reader(), query, args, sqlcore.ScanExecution)
	if err != nil {
		return nil, interpretError("list executions of "+executionListOf(p), err)
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

// executionListQuery is the query of ExecutionList's filters, and their
// arguments; the cursor's and the limit's follow. The filters of a map
// run, a version and an alias repeat their partial indexes' conditions,
// so that SQLite may use them. A map run's children are its own: their
// state machine is not looked at.
func executionListQuery(p *store.ExecutionListParams) (string, []any) {
	if p.MapRunArn == "" && p.VersionArn == "" && p.AliasArn == "" {
		if p.Status != "" {
			return executionListStatusSQL, []any{p.StateMachineArn, string(p.Status)}
		}
		return executionListSQL, []any{p.StateMachineArn}
	}
	var b strings.Builder
	b.WriteString("SELECT " + sqlcore.ExecutionColumns + "\nFROM stepwise_execution\nWHERE ")
	var args []any
	if p.MapRunArn != "" {
		b.WriteString("map_run_arn != '' AND map_run_arn = ? AND ")
		args = append(args, p.MapRunArn)
	}
	if p.VersionArn != "" {
		b.WriteString("version_arn != '' AND version_arn = ? AND ")
		args = append(args, p.VersionArn)
	}
	if p.AliasArn != "" {
		b.WriteString("alias_arn != '' AND alias_arn = ? AND ")
		args = append(args, p.AliasArn)
	}
	if p.MapRunArn == "" {
		b.WriteString("state_machine_arn = ? AND ")
		args = append(args, p.StateMachineArn)
	}
	if p.Status != "" {
		b.WriteString("status = ? AND ")
		args = append(args, string(p.Status))
	}
	b.WriteString("(start_date, arn) < (?, ?)\nORDER BY start_date DESC, arn DESC\nLIMIT ?")
	return b.String(), args
}
