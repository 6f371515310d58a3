package pgstore

import (
	"context"

	"stepwise/store"
	"stepwise/store/internal/outboxrow"
	"stepwise/store/internal/sqlcore"
)

// The outbox row StepWrite writes; the outbox's reads are sqlcore's.
const (
	// outboxLockSQL serializes the writers of outbox rows from their
	// insert to their commit, so that ids become visible in order (see
	// the package doc).
	outboxLockSQL   = `SELECT pg_advisory_xact_lock($1)`
	outboxInsertSQL = `INSERT INTO stepwise_outbox (created_at, notices, body) VALUES ($1, $2, $3) RETURNING id`
)

// OutboxWrite writes notices no step tells of, as one outbox row, under
// the outbox's lock as StepWrite does.
func (e *Executor) OutboxWrite(ctx context.Context, notices []*store.OutboxEvent) error {
	steps := []*store.Step{{Outbox: notices}}
	row, ok := outboxrow.Pack(steps)
	if !ok {
		return nil
	}
	return interpretError("write outbox", e.inTx(ctx, func(q querier) error {
		if _, err := q.Exec(ctx, outboxLockSQL, outboxLockKey); err != nil {
			return err
		}
		var id int64
		if err := q.QueryRow(ctx, outboxInsertSQL, sqlcore.Millis(row.CreatedAt), int64(row.Notices), row.Body).Scan(&id); err != nil {
			return err
		}
		outboxrow.SetIDs(steps, id)
		return nil
	}))
}
