package sqlcore

import (
	"context"
	"errors"
	"fmt"

	"stepwise/store"
	"stepwise/store/internal/outboxrow"
)

// The reads of the outbox and its cursors; the outbox row is written by
// each driver's StepWrite.
const (
	outboxListSQL      = `SELECT id, created_at, notices, body FROM stepwise_outbox WHERE id > $1 ORDER BY id LIMIT $2`
	outboxDeleteSQL    = `DELETE FROM stepwise_outbox WHERE id IN (SELECT id FROM stepwise_outbox WHERE id <= $1 ORDER BY id LIMIT $2)`
	outboxCursorSQL    = `SELECT last_id FROM stepwise_outbox_cursor WHERE destination = $1`
	outboxCursorSetSQL = `INSERT INTO stepwise_outbox_cursor (destination, last_id) VALUES ($1, $2)
ON CONFLICT (destination) DO UPDATE SET last_id = excluded.last_id`
)

// OutboxList returns the notices after afterID in ID order, whole IDs,
// until it has at least limit of them or there are no more.
func (c *Core) OutboxList(ctx context.Context, afterID int64, limit int) ([]*store.OutboxEvent, error) {
	rows, err := c.conn.Reader().Query(ctx, outboxListSQL, afterID, int64(limit))
	if err != nil {
		return nil, c.conn.Error("list outbox", err)
	}
	defer rows.Close()
	var out []*store.OutboxEvent
	for len(out) < limit && rows.Next() {
		var id, at, notices int64
		var body []byte
		if err := rows.Scan(&id, &at, &notices, &body); err != nil {
			return nil, c.conn.Error("list outbox", err)
		}
		if out, err = outboxrow.Unpack(id, at, int(notices), body, out); err != nil {
			return nil, err
		}
	}
	// pgx's rows tell their error once closed.
	_ = rows.Close()
	return out, c.conn.Error("list outbox", rows.Err())
}

// OutboxDelete removes up to limit notices with IDs up to throughID.
func (c *Core) OutboxDelete(ctx context.Context, throughID int64, limit int) (int, error) {
	if limit <= 0 {
		return 0, fmt.Errorf("delete outbox: limit %d: must be positive", limit)
	}
	n, err := c.conn.Writer().Exec(ctx, outboxDeleteSQL, throughID, int64(limit))
	if err != nil {
		return 0, c.conn.Error("delete outbox", err)
	}
	return int(n), nil
}

// OutboxCursor returns a destination's cursor, 0 when it has none.
func (c *Core) OutboxCursor(ctx context.Context, destination string) (int64, error) {
	var id int64
	err := c.conn.Reader().QueryRow(ctx, outboxCursorSQL, destination).Scan(&id)
	if errors.Is(err, c.dialect.ErrNoRows) {
		return 0, nil
	}
	return id, c.conn.Error("outbox cursor "+destination, err)
}

// OutboxCursorSet moves a destination's cursor.
func (c *Core) OutboxCursorSet(ctx context.Context, destination string, id int64) error {
	_, err := c.conn.Writer().Exec(ctx, outboxCursorSetSQL, destination, id)
	return c.conn.Error("outbox cursor "+destination, err)
}
