package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"stepwise/store"
	"stepwise/store/internal/sqlcore"
)

// nowMS is the database's clock in Unix milliseconds (Dialect.Now).
const nowMS = `CAST(unixepoch('subsec') * 1000 AS INTEGER)`

// The statements of fenced steps and of claims; the leases' are sqlcore's.
const (
	executionOwnSQL   = `UPDATE stepwise_execution SET owner = ?, owner_epoch = ? WHERE arn = ?`
	executionOwnerSQL = `SELECT e.owner, e.owner_epoch, coalesce(n.expires_at > ` + nowMS + `, 0)
FROM stepwise_execution e LEFT JOIN stepwise_node n ON n.id = e.owner AND n.epoch = e.owner_epoch WHERE e.arn = ?`
	// executionClaimSQL is Dialect.ExecutionClaimSQL: the one writer
	// claims one set of orphans at a time.
	executionClaimSQL = `
UPDATE stepwise_execution SET owner = $1, owner_epoch = $2, version = version + 1
WHERE id IN (
    SELECT e.id FROM stepwise_execution e LEFT JOIN stepwise_node n ON n.id = e.owner
    WHERE e.status = 'RUNNING'
      AND (e.owner IS NULL OR n.id IS NULL OR n.expires_at <= ` + nowMS + ` OR n.epoch <> e.owner_epoch)
    LIMIT $3)
RETURNING arn`
)

// checkFences fails with ErrFenced unless every fenced step's execution
// (not one it inserts) is its fence's, under a live lease: before anything
// is written. live says whether a lease is live (Core.NodeLive).
func checkFences(ctx context.Context, q querier, steps []*store.Step, live func(f store.Fence) error) error {
	for _, s := range steps {
		if s.Fence == nil {
			continue
		}
		if s.Insert != nil {
			// A node inserts executions only while its lease is live.
			if err := live(*s.Fence); err != nil {
				return err
			}
			continue
		}
		var owner sql.NullString
		var epoch sql.NullInt64
		var live bool
		err := q.QueryRowContext(ctx, executionOwnerSQL, sqlcore.StepArn(s)).Scan(&owner, &epoch, &live)
		if errors.Is(err, sql.ErrNoRows) {
			continue // the step's own write says the execution does not exist
		}
		if err != nil {
			return err
		}
		if owner.String != s.Fence.Node || epoch.Int64 != s.Fence.Epoch || !owner.Valid || !live {
			return fmt.Errorf("execution %s: %w", sqlcore.StepArn(s), sqlcore.Fenced(*s.Fence))
		}
	}
	return nil
}

// ownInserted makes the executions fenced steps inserted their fences'.
func ownInserted(ctx context.Context, q querier, steps []*store.Step) error {
	for _, s := range steps {
		if s.Fence != nil && s.Insert != nil {
			if _, err := q.ExecContext(ctx, executionOwnSQL, s.Fence.Node, s.Fence.Epoch, s.Insert.Arn); err != nil {
				return err
			}
		}
	}
	return nil
}
