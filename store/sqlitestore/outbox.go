package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"stepwise/store"
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
// (migration 007 says how it is packed), and gives them its ID: one row
// a transaction costs the outbox one insert and one delete however many
// notices it holds.
func writeOutbox(ctx context.Context, q querier, steps []*store.Step) error {
	n, size := 0, 0
	for _, s := range steps {
		for _, ev := range s.Outbox {
			n++
			size += len(ev.Body) + 2*binary.MaxVarintLen64
		}
	}
	if n == 0 {
		return nil
	}
	body := make([]byte, 0, size)
	var first time.Time
	for _, s := range steps {
		for _, ev := range s.Outbox {
			if first.IsZero() {
				first = ev.CreatedAt
			}
			body = binary.AppendVarint(body, ev.CreatedAt.UnixMilli())
			body = binary.AppendUvarint(body, uint64(len(ev.Body)))
			body = append(body, ev.Body...)
		}
	}
	res, err := q.ExecContext(ctx, outboxInsertSQL, millis(first), n, body)
	if err != nil {
		return fmt.Errorf("write outbox: %w", err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return err
	}
	for _, s := range steps {
		for _, ev := range s.Outbox {
			ev.ID = id
		}
	}
	return nil
}

// unpackOutbox reads the notices of a row.
func unpackOutbox(id int64, createdAt int64, notices int, body []byte, out []*store.OutboxEvent) ([]*store.OutboxEvent, error) {
	if notices == 0 {
		return append(out, &store.OutboxEvent{ID: id, CreatedAt: fromMillis(createdAt), Body: body}), nil
	}
	for range notices {
		at, n := binary.Varint(body)
		if n <= 0 {
			return out, fmt.Errorf("outbox row %d is damaged", id)
		}
		body = body[n:]
		l, n := binary.Uvarint(body)
		if n <= 0 || l > uint64(len(body)-n) {
			return out, fmt.Errorf("outbox row %d is damaged", id)
		}
		out = append(out, &store.OutboxEvent{ID: id, CreatedAt: fromMillis(at), Body: body[n : n+int(l) : n+int(l)]})
		body = body[n+int(l):]
	}
	return out, nil
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
		if out, err = unpackOutbox(id, at, notices, body, out); err != nil {
			return nil, err
		}
	}
	return out, interpretError("list outbox", rows.Err())
}

// OutboxDelete removes up to limit notices with IDs up to throughID.
func (e *Executor) OutboxDelete(ctx context.Context, throughID int64, limit int) (int, error) {
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
