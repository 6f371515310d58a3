package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"stepwise/store"
)

const (
	nodeRegisterSQL = `INSERT INTO stepwise_node (id, epoch, expires_at) VALUES (?, 1, ?)
ON CONFLICT (id) DO UPDATE SET epoch = epoch + 1, expires_at = excluded.expires_at
RETURNING epoch`
	nodeRenewSQL      = `UPDATE stepwise_node SET expires_at = ? WHERE id = ? AND epoch = ? AND expires_at > ?`
	nodeLiveSQL       = `SELECT 1 FROM stepwise_node WHERE id = ? AND epoch = ? AND expires_at > ?`
	nodeDeleteSQL     = `DELETE FROM stepwise_node WHERE id = ? AND epoch = ?`
	nodeDisownSQL     = `UPDATE stepwise_execution SET owner = NULL, owner_epoch = NULL WHERE owner = ? AND owner_epoch = ? AND status = 'RUNNING'`
	executionOwnSQL   = `UPDATE stepwise_execution SET owner = ?, owner_epoch = ? WHERE arn = ?`
	executionOwnerSQL = `SELECT e.owner, e.owner_epoch, coalesce(n.expires_at > ?, 0)
FROM stepwise_execution e LEFT JOIN stepwise_node n ON n.id = e.owner AND n.epoch = e.owner_epoch WHERE e.arn = ?`
	// A running execution is an orphan when it has no owner, or its
	// owner's lease ran out, or its owner registered again, or is gone.
	executionClaimSQL = `
UPDATE stepwise_execution SET owner = ?, owner_epoch = ?, version = version + 1
WHERE id IN (
    SELECT e.id FROM stepwise_execution e LEFT JOIN stepwise_node n ON n.id = e.owner
    WHERE e.status = 'RUNNING'
      AND (e.owner IS NULL OR n.id IS NULL OR n.expires_at <= ? OR n.epoch <> e.owner_epoch)
    LIMIT ?)
RETURNING arn`
)

// now is the store's clock for leases, in Unix milliseconds.
func nodeNow() int64 { return time.Now().UnixMilli() }

// NodeRegister gives node a lease with a new epoch.
func (e *Executor) NodeRegister(ctx context.Context, node string, ttl time.Duration) (store.Fence, error) {
	f := store.Fence{Node: node}
	err := e.writer().QueryRowContext(ctx, nodeRegisterSQL, node, nodeNow()+ttl.Milliseconds()).Scan(&f.Epoch)
	return f, interpretError("register node "+node, err)
}

// NodeRenew extends a live lease.
func (e *Executor) NodeRenew(ctx context.Context, f store.Fence, ttl time.Duration) error {
	now := nodeNow()
	res, err := e.writer().ExecContext(ctx, nodeRenewSQL, now+ttl.Milliseconds(), f.Node, f.Epoch, now)
	if err != nil {
		return interpretError("renew node "+f.Node, err)
	}
	n, err := res.RowsAffected()
	if err == nil && n == 0 {
		err = fenced(f) // the lease ran out, or the node registered again
	}
	return interpretError("renew node "+f.Node, err)
}

// NodeRelease ends a lease and leaves its executions unowned.
func (e *Executor) NodeRelease(ctx context.Context, f store.Fence) error {
	return interpretError("release node "+f.Node, e.inTx(ctx, func(q querier) error {
		if _, err := q.ExecContext(ctx, nodeDisownSQL, f.Node, f.Epoch); err != nil {
			return err
		}
		_, err := q.ExecContext(ctx, nodeDeleteSQL, f.Node, f.Epoch)
		return err
	}))
}

// ExecutionClaim makes orphaned running executions f's own.
func (e *Executor) ExecutionClaim(ctx context.Context, f store.Fence, limit int) ([]string, error) {
	var arns []string
	err := e.inTx(ctx, func(q querier) error {
		now := nodeNow()
		if err := nodeLive(ctx, q, f, now); err != nil {
			return err
		}
		rows, err := q.QueryContext(ctx, executionClaimSQL, f.Node, f.Epoch, now, limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var arn string
			if err := rows.Scan(&arn); err != nil {
				return err
			}
			arns = append(arns, arn)
		}
		return rows.Err()
	})
	return arns, interpretError("claim executions", err)
}

// nodeLive fails with ErrFenced unless f's lease is live at now.
func nodeLive(ctx context.Context, q querier, f store.Fence, now int64) error {
	var one int
	err := q.QueryRowContext(ctx, nodeLiveSQL, f.Node, f.Epoch, now).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return fenced(f)
	}
	return err
}

// checkFences fails with ErrFenced unless every fenced step's execution
// (not one it inserts) is its fence's, under a live lease: before anything
// is written.
func checkFences(ctx context.Context, q querier, steps []*store.Step) error {
	for _, s := range steps {
		if s.Fence == nil {
			continue
		}
		if s.Insert != nil {
			// A node inserts executions only while its lease is live.
			if err := nodeLive(ctx, q, *s.Fence, nodeNow()); err != nil {
				return err
			}
			continue
		}
		var owner sql.NullString
		var epoch sql.NullInt64
		var live bool
		err := q.QueryRowContext(ctx, executionOwnerSQL, nodeNow(), stepArn(s)).Scan(&owner, &epoch, &live)
		if errors.Is(err, sql.ErrNoRows) {
			continue // the step's own write says the execution does not exist
		}
		if err != nil {
			return err
		}
		if owner.String != s.Fence.Node || epoch.Int64 != s.Fence.Epoch || !owner.Valid || !live {
			return fmt.Errorf("execution %s: %w", stepArn(s), fenced(*s.Fence))
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

func fenced(f store.Fence) error {
	return fmt.Errorf("node %s (epoch %d): %w", f.Node, f.Epoch, store.ErrFenced)
}
