package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"stepwise/store"
	"stepwise/store/internal/sqlcore"
)

// nowMS is the database's clock in Unix milliseconds: leases are timed by
// it, so the nodes' clocks need not agree.
const nowMS = `(extract(epoch FROM clock_timestamp()) * 1000)::bigint`

const (
	nodeRegisterSQL = `INSERT INTO stepwise_node (id, epoch, expires_at) VALUES ($1, 1, ` + nowMS + ` + $2)
ON CONFLICT (id) DO UPDATE SET epoch = stepwise_node.epoch + 1, expires_at = excluded.expires_at
RETURNING epoch`
	nodeRenewSQL  = `UPDATE stepwise_node SET expires_at = ` + nowMS + ` + $3 WHERE id = $1 AND epoch = $2 AND expires_at > ` + nowMS
	nodeLiveSQL   = `SELECT 1 FROM stepwise_node WHERE id = $1 AND epoch = $2 AND expires_at > ` + nowMS + ` FOR SHARE`
	nodeDeleteSQL = `DELETE FROM stepwise_node WHERE id = $1 AND epoch = $2`
	nodeDisownSQL = `UPDATE stepwise_execution SET owner = NULL, owner_epoch = NULL WHERE owner = $1 AND owner_epoch = $2 AND status = 'RUNNING'`
	// nodeLeaseSQL says whether a node's lease is live: a node inserts
	// executions only while it is.
	nodeLeaseSQL = `SELECT EXISTS (SELECT 1 FROM stepwise_node WHERE id = $1 AND epoch = $2 AND expires_at > ` + nowMS + `)`
	// A running execution is an orphan when it has no owner, or its
	// owner's lease ran out, or its owner registered again, or is gone.
	// Rows another claimer holds are skipped. The condition is checked
	// again on the row as it is once locked (noLiveOwner, a subquery):
	// a row a concurrent claim took meanwhile has a live owner now,
	// which the join of the first pick, re-read with the node row it
	// found then, would not see.
	executionClaimSQL = `
WITH picked AS (
    SELECT e.id FROM stepwise_execution AS e LEFT JOIN stepwise_node AS n ON n.id = e.owner
    WHERE e.status = 'RUNNING'
      AND (e.owner IS NULL OR n.id IS NULL OR n.expires_at <= ` + nowMS + ` OR n.epoch <> e.owner_epoch)
    LIMIT $3
    FOR UPDATE OF e SKIP LOCKED
)
UPDATE stepwise_execution AS e SET owner = $1, owner_epoch = $2, version = version + 1
WHERE e.id IN (SELECT id FROM picked) AND e.status = 'RUNNING' AND ` + noLiveOwner + `
RETURNING arn`
	noLiveOwner = `NOT EXISTS (SELECT 1 FROM stepwise_node AS o WHERE o.id = e.owner AND o.epoch = e.owner_epoch AND o.expires_at > ` + nowMS + `)`

	// stepFenceSQL reads (and holds against claims until the commit) the
	// owners of fenced steps' executions.
	// The owner's lease must be live too: a node whose lease ran out
	// writes nothing more, even before another claims its executions.
	stepFenceSQL = `SELECT e.arn, e.owner, e.owner_epoch, coalesce(n.expires_at > ` + nowMS + `, false)
FROM stepwise_execution AS e LEFT JOIN stepwise_node AS n ON n.id = e.owner AND n.epoch = e.owner_epoch
WHERE e.arn = ANY ($1::text[]) FOR SHARE OF e`
)

// NodeRegister gives node a lease with a new epoch.
func (e *Executor) NodeRegister(ctx context.Context, node string, ttl time.Duration) (store.Fence, error) {
	f := store.Fence{Node: node}
	err := e.q().QueryRow(ctx, nodeRegisterSQL, node, ttl.Milliseconds()).Scan(&f.Epoch)
	return f, interpretError("register node "+node, err)
}

// NodeRenew extends a live lease.
func (e *Executor) NodeRenew(ctx context.Context, f store.Fence, ttl time.Duration) error {
	tag, err := e.q().Exec(ctx, nodeRenewSQL, f.Node, f.Epoch, ttl.Milliseconds())
	if err == nil && tag.RowsAffected() == 0 {
		err = fenced(f) // the lease ran out, or the node registered again
	}
	return interpretError("renew node "+f.Node, err)
}

// NodeRelease ends a lease and leaves its executions unowned.
func (e *Executor) NodeRelease(ctx context.Context, f store.Fence) error {
	return interpretError("release node "+f.Node, e.inTx(ctx, func(q querier) error {
		if _, err := q.Exec(ctx, nodeDisownSQL, f.Node, f.Epoch); err != nil {
			return err
		}
		_, err := q.Exec(ctx, nodeDeleteSQL, f.Node, f.Epoch)
		return err
	}))
}

// ExecutionClaim makes orphaned running executions f's own.
func (e *Executor) ExecutionClaim(ctx context.Context, f store.Fence, limit int) ([]string, error) {
	var arns []string
	err := e.inTx(ctx, func(q querier) error {
		var one int
		err := q.QueryRow(ctx, nodeLiveSQL, f.Node, f.Epoch).Scan(&one)
		if errors.Is(err, pgx.ErrNoRows) {
			return fenced(f)
		}
		if err != nil {
			return err
		}
		arns, err = queryAll(ctx, q, executionClaimSQL, []any{f.Node, f.Epoch, limit}, func(r sqlcore.Scanner) (string, error) {
			var arn string
			return arn, r.Scan(&arn)
		})
		return err
	})
	return arns, interpretError("claim executions", err)
}

func fenced(f store.Fence) error {
	return fmt.Errorf("node %s (epoch %d): %w", f.Node, f.Epoch, store.ErrFenced)
}
