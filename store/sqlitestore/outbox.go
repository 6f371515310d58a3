package sqlitestore

import (
	"context"
	"database/sql"
	"errors"

	"stepwise/store"
)

const (
	outboxInsertHead   = `INSERT INTO stepwise_outbox (created_at, body)`
	outboxListSQL      = `SELECT id, created_at, body FROM stepwise_outbox WHERE id > ? ORDER BY id LIMIT ?`
	outboxDeleteSQL    = `DELETE FROM stepwise_outbox WHERE id IN (SELECT id FROM stepwise_outbox WHERE id <= ? ORDER BY id LIMIT ?)`
	outboxCursorSQL    = `SELECT last_id FROM stepwise_outbox_cursor WHERE destination = ?`
	outboxCursorSetSQL = `INSERT INTO stepwise_outbox_cursor (destination, last_id) VALUES (?, ?)
ON CONFLICT (destination) DO UPDATE SET last_id = excluded.last_id`
)

// outboxInsertSQL inserts notices, prepared on the writer like the
// other statements of a step.
var outboxInsertSQL = newChunkSQL(func(n int) string { return valuesSQL(outboxInsertHead, 2, n) })

// writeOutbox inserts the steps' notices, in the steps' order, and sets
// their IDs: a multi-row insert gives its rows consecutive IDs ending
// with the last insert ID (AUTOINCREMENT, one writer).
func writeOutbox(ctx context.Context, q querier, steps []*store.Step) error {
	var evs []*store.OutboxEvent
	for _, s := range steps {
		evs = append(evs, s.Outbox...)
	}
	for len(evs) > 0 {
		c := chunk(len(evs))
		args := make([]any, 0, 2*c)
		for _, ev := range evs[:c] {
			args = append(args, millis(ev.CreatedAt), blob(ev.Body))
		}
		res, err := q.ExecContext(ctx, outboxInsertSQL[c], args...)
		if err != nil {
			return err
		}
		last, err := res.LastInsertId()
		if err != nil {
			return err
		}
		for i, ev := range evs[:c] {
			ev.ID = last - int64(c-1-i)
		}
		evs = evs[c:]
	}
	return nil
}

// OutboxList returns up to limit notices after afterID, in ID order.
func (e *Executor) OutboxList(ctx context.Context, afterID int64, limit int) ([]*store.OutboxEvent, error) {
	rows, err := e.reader().QueryContext(ctx, outboxListSQL, afterID, limit)
	if err != nil {
		return nil, interpretError("list outbox", err)
	}
	defer rows.Close()
	var out []*store.OutboxEvent
	for rows.Next() {
		var ev store.OutboxEvent
		var at int64
		if err := rows.Scan(&ev.ID, &at, &ev.Body); err != nil {
			return nil, interpretError("list outbox", err)
		}
		ev.CreatedAt = fromMillis(at)
		out = append(out, &ev)
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
