package pgstore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"stepwise/store"
	"stepwise/store/internal/sqlcore"
)

const (
	executionInsertSQL = `
INSERT INTO stepwise_execution (` + sqlcore.ExecutionColumns + `)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22)`

	// executionInsertOwnedSQL inserts an execution owned by a node and epoch.
	executionInsertOwnedSQL = `
INSERT INTO stepwise_execution (` + sqlcore.ExecutionColumns + `, owner, owner_epoch)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24)`

	executionUpdateSQL = `
UPDATE stepwise_execution
SET status = $1, output = $2, error = $3, cause = $4, stop_date = $5, last_event_id = $6,
    redrive_count = $7, redrive_date = $8, version = version + 1
WHERE arn = $9 AND version = $10
RETURNING ` + sqlcore.ExecutionColumns

	executionVersionSQL = `SELECT version FROM stepwise_execution WHERE arn = $1`

	// The cursor is a row value: (start_date, arn) below the last row seen.
	// Without one the query starts below (MaxInt64, ''). The queries of a
	// version, an alias or a map run are executionListQuery's.
	executionListSQL = `SELECT ` + sqlcore.ExecutionColumns + `
FROM stepwise_execution
WHERE state_machine_arn = $1 AND (start_date, arn) < ($2, $3)
ORDER BY start_date DESC, arn DESC
LIMIT $4`

	executionListStatusSQL = `SELECT ` + sqlcore.ExecutionColumns + `
FROM stepwise_execution
WHERE state_machine_arn = $1 AND status = $2 AND (start_date, arn) < ($3, $4)
ORDER BY start_date DESC, arn DESC
LIMIT $5`
)

// ExecutionInsert creates an execution with the version it is given.
func (e *Executor) ExecutionInsert(ctx context.Context, p *store.ExecutionInsertParams) (*store.Execution, error) {
	x := p.Execution
	if _, err := e.q().Exec(ctx, executionInsertSQL, executionInsertArgs(x)...); err != nil {
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
		x.TraceHeader, int64(x.RedriveCount), sqlcore.MillisPtr(x.RedriveDate), x.Version, x.LastEventID, x.TestCase,
		x.VersionArn, x.AliasArn, x.MapRunArn, x.Policies}
}

// ExecutionUpdate writes an execution's new status if its version is still
// p.ExpectedVersion, and returns the row as written.
func (e *Executor) ExecutionUpdate(ctx context.Context, p *store.ExecutionUpdateParams) (*store.Execution, error) {
	q := e.q()
	x, err := sqlcore.ScanExecution(q.QueryRow(ctx, executionUpdateSQL,
		string(p.Status), p.Output, p.Error, p.Cause, sqlcore.MillisPtr(p.StopDate), p.LastEventID,
		int64(p.RedriveCount), sqlcore.MillisPtr(p.RedriveDate), p.Arn, p.ExpectedVersion))
	if errors.Is(err, pgx.ErrNoRows) {
		// Nothing matched: tell a missing execution from a stale version.
		err = versionConflict(ctx, q, p.Arn, p.ExpectedVersion)
	}
	if err != nil {
		return nil, interpretError("update execution "+p.Arn, err)
	}
	return x, nil
}

// versionConflict tells why an update of arn expecting version expected
// matched no row: a stale version (store.ErrConflict) or a missing
// execution (pgx.ErrNoRows).
func versionConflict(ctx context.Context, q querier, arn string, expected int64) error {
	var version int64
	if err := q.QueryRow(ctx, executionVersionSQL, arn).Scan(&version); err != nil {
		return fmt.Errorf("execution %s: %w", arn, err)
	}
	return fmt.Errorf("execution %s at version %d, not %d: %w", arn, version, expected, store.ErrConflict)
}

// ExecutionList pages through a state machine's executions, or a map
// run's, newest first (ties by ARN, descending), of a status, a version
// or an alias when p says.
func (e *Executor) ExecutionList(ctx context.Context, p *store.ExecutionListParams) ([]*store.Execution, error) {
	afterStart, afterArn := int64(math.MaxInt64), ""
	if p.AfterArn != "" {
		afterStart, afterArn = sqlcore.Millis(p.AfterStartDate), p.AfterArn
	}
	query, args := executionListQuery(p, afterStart, afterArn)
	xs, err := queryAll(ctx, e.q(), query, args, sqlcore.ScanExecution)
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

// executionListQuery is ExecutionList's query and its arguments. The
// filters of a map run, a version and an alias repeat their partial
// indexes' conditions, so that the planner may use them whatever the
// parameters. A map run's children are its own: their state machine is
// not looked at.
func executionListQuery(p *store.ExecutionListParams, afterStart int64, afterArn string) (string, []any) {
	if p.MapRunArn == "" && p.VersionArn == "" && p.AliasArn == "" {
		if p.Status != "" {
			return executionListStatusSQL, []any{p.StateMachineArn, string(p.Status), afterStart, afterArn, limit(p.Limit)}
		}
		return executionListSQL, []any{p.StateMachineArn, afterStart, afterArn, limit(p.Limit)}
	}
	var b strings.Builder
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	b.WriteString("SELECT " + sqlcore.ExecutionColumns + "\nFROM stepwise_execution\nWHERE ")
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
		b.WriteString("state_machine_arn = " + arg(p.StateMachineArn) + " AND ")
	}
	if p.Status != "" {
		b.WriteString("status = " + arg(string(p.Status)) + " AND ")
	}
	b.WriteString("(start_date, arn) < (" + arg(afterStart) + ", " + arg(afterArn) + ")\n")
	b.WriteString("ORDER BY start_date DESC, arn DESC\nLIMIT " + arg(limit(p.Limit)))
	return b.String(), args
}
