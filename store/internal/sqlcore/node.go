package sqlcore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"stepwise/store"
)

// A node's lease, timed by the database's clock (Dialect.Now), so that
// the nodes' clocks need not agree. %[1]s is the clock, %[2]s
// Dialect.ShareRows.
const (
	nodeRegisterSQL = `INSERT INTO stepwise_node (id, epoch, expires_at) VALUES ($1, 1, %[1]s + $2)
ON CONFLICT (id) DO UPDATE SET epoch = stepwise_node.epoch + 1, expires_at = excluded.expires_at
RETURNING epoch`
	nodeRenewSQL  = `UPDATE stepwise_node SET expires_at = %[1]s + $3 WHERE id = $1 AND epoch = $2 AND expires_at > %[1]s`
	nodeLiveSQL   = `SELECT 1 FROM stepwise_node WHERE id = $1 AND epoch = $2 AND expires_at > %[1]s%[2]s`
	nodeDeleteSQL = `DELETE FROM stepwise_node WHERE id = $1 AND epoch = $2`
	nodeDisownSQL = `UPDATE stepwise_execution SET owner = NULL, owner_epoch = NULL WHERE owner = $1 AND owner_epoch = $2 AND status = 'RUNNING'`
)

// nodeSQL is the statements of leases in a dialect.
type nodeSQL struct {
	register, renew, live string
}

func newNodeSQL(d *Dialect) nodeSQL {
	return nodeSQL{
		register: fmt.Sprintf(nodeRegisterSQL, d.Now),
		renew:    fmt.Sprintf(nodeRenewSQL, d.Now),
		live:     fmt.Sprintf(nodeLiveSQL, d.Now, d.ShareRows),
	}
}

// NodeRegister gives node a lease with a new epoch.
func (c *Core) NodeRegister(ctx context.Context, node string, ttl time.Duration) (store.Fence, error) {
	f := store.Fence{Node: node}
	err := c.conn.Writer().QueryRow(ctx, c.sql.node.register, node, ttl.Milliseconds()).Scan(&f.Epoch)
	return f, c.conn.Error("register node "+node, err)
}

// NodeRenew extends a live lease.
func (c *Core) NodeRenew(ctx context.Context, f store.Fence, ttl time.Duration) error {
	n, err := c.conn.Writer().Exec(ctx, c.sql.node.renew, f.Node, f.Epoch, ttl.Milliseconds())
	if err == nil && n == 0 {
		err = Fenced(f) // the lease ran out, or the node registered again
	}
	return c.conn.Error("renew node "+f.Node, err)
}

// NodeRelease ends a lease and leaves its executions unowned.
func (c *Core) NodeRelease(ctx context.Context, f store.Fence) error {
	return c.conn.Error("release node "+f.Node, c.conn.InTx(ctx, func(q Querier) error {
		return q.ExecBatch(ctx, Stmt{nodeDisownSQL, []any{f.Node, f.Epoch}}, Stmt{nodeDeleteSQL, []any{f.Node, f.Epoch}})
	}))
}

// ExecutionClaim makes orphaned running executions f's own
// (Dialect.ExecutionClaimSQL), while f's lease is live.
func (c *Core) ExecutionClaim(ctx context.Context, f store.Fence, limit int) ([]string, error) {
	var arns []string
	err := c.conn.InTx(ctx, func(q Querier) error {
		if err := c.ClaimLock(ctx, q); err != nil {
			return err
		}
		if err := c.NodeLive(ctx, q, f); err != nil {
			return err
		}
		var err error
		arns, err = QueryAll(ctx, q, c.dialect.ExecutionClaimSQL, []any{f.Node, f.Epoch, limit}, func(s Scanner) (string, error) {
			var arn string
			return arn, s.Scan(&arn)
		})
		return err
	})
	return arns, c.conn.Error("claim executions", err)
}

// ClaimLock makes a claim's transaction wait its turn (Dialect.ClaimLockSQL).
func (c *Core) ClaimLock(ctx context.Context, q Querier) error {
	if c.dialect.ClaimLockSQL == "" {
		return nil
	}
	_, err := q.Exec(ctx, c.dialect.ClaimLockSQL)
	return err
}

// NodeLive fails with store.ErrFenced unless f's lease is live, and holds
// it (Dialect.ShareRows) for the rest of the transaction.
func (c *Core) NodeLive(ctx context.Context, q Querier, f store.Fence) error {
	var one int
	err := q.QueryRow(ctx, c.sql.node.live, f.Node, f.Epoch).Scan(&one)
	if errors.Is(err, c.dialect.ErrNoRows) {
		return Fenced(f)
	}
	return err
}

// Fenced is the error of a write by node f that no longer may.
func Fenced(f store.Fence) error {
	return fmt.Errorf("node %s (epoch %d): %w", f.Node, f.Epoch, store.ErrFenced)
}
