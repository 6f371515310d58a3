package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"stepwise/store"
	"stepwise/store/internal/outboxrow"
	"stepwise/store/internal/sqlcore"
)

const (
	outboxInsertSQL    = `INSERT INTO stepwise_outbox (created_at, notices, body) VALUES (?, ?, ?)`
	outboxListSQL      = `SELECT id, created_at, notices, body FROM stepwise_outbox WHERE id > ? ORDER BY id LIMIT ?`
	outboxDeleteSQL    = `DELETE FROM stepwise_outbox WHERE id IN (SELECT id FROM stepwise_outbox WHERE id <= ? ORDER BY id LIMIT ?)`
	outboxCursorSQL    = `SELECT last_id FROM stepwise_outbox_cursor WHERE destination = ?`
	outboxCursorSetSQL = `INSERT INTO stepwise_outbox_cursor (destination, last_id) VALUES (?, ?)
ON CONFLICT (destination) DO UPDATE SET last_id = excluded.last_id`
)

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

// OutboxList returns the notices after afterID in ID order, whole IDs,
// until it has at least limit of them or there are no more.
func (e *Executor) OutboxList(ctx context.Context, afterID int64, limit int) ([]*store.OutboxEvent, error) {
	rows, err := e.reader().QueryContext(ctx, outboxListSQL, afterID, limit)
	if err != nil {
		return nil, interpretError("list outbox", err)
	}
	defer rows.Close()
	var out []*store.OutboxEvent
	for len(out) < limit && rows.Next() {
		var id, at int64
		var notices int
		var body []byte
		if err := rows.Scan(&id, &at, &notices, &body); err != nil {
			return nil, interpretError("list outbox", err)
		}
		if out, err = outboxrow.Unpack(id, at, notices, body, out); err != nil {
			return nil, err
		}
	}
	return out, interpretError("list outbox", rows.Err())
}

// OutboxDelete removes up to limit notices with IDs up to throughID.
func (e *Executor) OutboxDelete(ctx context.Context, throughID int64, limit int) (int, error) {
	if limit <= 0 {
		return 0, fmt.Errorf("delete outbox: limit %d: must be positive", limit)
	}
	res, err := e.writer().ExecContext(ctx, outboxDeleteSQL, throughID, limit)
	if err != nil {
		return 0, interpretError("delete outbox", err)
	}
	n, err := res.RowsAffected()
	return int(n), interpretError("delete outbox", err)
}

// OutboxCursor returns a destination's cursor, 0 when it has none.
func (e *Executor) OutboxCursor(ctx context.Context, destination string) (int64, error) {
	var id int64
	err := e.reader().QueryRowContext(ctx, outboxCursorSQL, destination).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return id, interpretError("outbox cursor "+destination, err)
}

// OutboxCursorSet moves a destination's cursor.
func (e *Executor) OutboxCursorSet(ctx context.Context, destination string, id int64) error {
	_, err := e.writer().ExecContext(ctx, outboxCursorSetSQL, destination, id)
	return interpretError("outbox cursor "+destination, err)
}
