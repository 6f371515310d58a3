package sqlitestore

import (
	"context"
	"fmt"

	"stepwise/store"
	"stepwise/store/internal/outboxrow"
	"stepwise/store/internal/sqlcore"
)

// outboxInsertSQL is the outbox row StepWrite writes; the outbox's
// reads are sqlcore's.
const outboxInsertSQL = `INSERT INTO stepwise_outbox (created_at, notices, body) VALUES (?, ?, ?)`

// writeOutbox writes the steps' notices, in the steps' order, as one row
// (outboxrow's layout), and gives them its ID: one row a transaction
// costs the outbox one insert and one delete however many notices it
// holds.
func writeOutbox(ctx context.Context, q querier, steps []*store.Step) error {
	row, ok := outboxrow.Pack(steps)
	if !ok {
		return nil
	}
	res, err := q.ExecContext(ctx, outboxInsertSQL, sqlcore.Millis(row.CreatedAt), row.Notices, row.Body)
	if err != nil {
		return fmt.Errorf("write outbox: %w", err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return err
	}
	outboxrow.SetIDs(steps, id)
	return nil
}

// OutboxWrite writes notices no step tells of, as one outbox row.
func (e *Executor) OutboxWrite(ctx context.Context, notices []*store.OutboxEvent) error {
	steps := []*store.Step{{Outbox: notices}}
	if e.tx != nil {
		return interpretError("write outbox", writeOutbox(ctx, e.tx, steps))
	}
	return interpretError("write outbox", e.inTx(ctx, func(q querier) error { return writeOutbox(ctx, q, steps) }))
}
