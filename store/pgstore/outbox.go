package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"stepwise/store"
	"stepwise/store/internal/outboxrow"
)

const (
	// outboxLockSQL serializes the writers of outbox rows from their
	// insert to their commit, so that ids become visible in order (see
	// the package doc).
	outboxLockSQL      = `SELECT pg_advisory_xact_lock($1)`
	outboxInsertSQL    = `INSERT INTO stepwise_outbox (created_at, notices, body) VALUES ($1, $2, $3) RETURNING id`
	outboxListSQL      = `SELECT id, created_at, notices, body FROM stepwise_outbox WHERE id > $1 ORDER BY id LIMIT $2`
	outboxDeleteSQL    = `DELETE FROM stepwise_outbox WHERE id IN (SELECT id FROM stepwise_outbox WHERE id <= $1 ORDER BY id LIMIT $2)`
	outboxCursorSQL    = `SELECT last_id FROM stepwise_outbox_cursor WHERE destination = $1`
	outboxCursorSetSQL = `INSERT INTO stepwise_outbox_cursor (destination, last_id) VALUES ($1, $2)
ON CONFLICT (destination) DO UPDATE SET last_id = excluded.last_id`
)

// OutboxList returns the notices after afterID in ID order, whole IDs,
// until it has at least limit of them or there are no more.
func (e *Executor) OutboxList(ctx context.Context, afterID int64, limit int) ([]*store.OutboxEvent, error) {
	rows, err := e.q().Query(ctx, outboxListSQL, afterID, int64(limit))
	if err != nil {
		return nil, interpretError("list outbox", err)
	}
	defer rows.Close()
	var out []*store.OutboxEvent
	for len(out) < limit && rows.Next() {
		var id, at, notices int64
		var body []byte
		if err := rows.Scan(&id, &at, &notices, &body); err != nil {
			return nil, interpretError("list outbox", err)
		}
		if out, err = outboxrow.Unpack(id, at, int(notices), body, out); err != nil {
			return nil, err
		}
	}
	rows.Close()
	return out, interpretError("list outbox", rows.Err())
}

// OutboxDelete removes up to limit notices with IDs up to throughID.
func (e *Executor) OutboxDelete(ctx context.Context, throughID int64, n int) (int, error) {
	if n <= 0 {
		return 0, fmt.Errorf("delete outbox: limit %d: must be positive", n)
	}
	tag, err := e.q().Exec(ctx, outboxDeleteSQL, throughID, int64(n))
	if err != nil {
		return 0, interpretError("delete outbox", err)
	}
	return int(tag.RowsAffected()), nil
}

// OutboxCursor returns a destination's cursor, 0 when it has none.
func (e *Executor) OutboxCursor(ctx context.Context, destination string) (int64, error) {
	var id int64
	err := e.q().QueryRow(ctx, outboxCursorSQL, destination).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	return id, interpretError("outbox cursor "+destination, err)
}

// OutboxCursorSet moves a destination's cursor.
func (e *Executor) OutboxCursorSet(ctx context.Context, destination string, id int64) error {
	_, err := e.q().Exec(ctx, outboxCursorSetSQL, destination, id)
	return interpretError("outbox cursor "+destination, err)
}
