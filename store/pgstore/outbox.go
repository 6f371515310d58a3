package pgstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"stepwise/store"
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

// outboxRow is the packed row of a StepWrite's notices (migration 007 says
// how it is packed): one row a transaction costs the outbox one insert
// and one delete however many notices it holds.
type outboxRow struct {
	notices   int
	createdAt time.Time // the first notice's
	body      []byte
}

// packOutbox packs the steps' notices in the steps' order; ok is false
// when they have none.
func packOutbox(steps []*store.Step) (row outboxRow, ok bool) {
	size := 0
	for _, s := range steps {
		for _, ev := range s.Outbox {
			row.notices++
			size += len(ev.Body) + 2*binary.MaxVarintLen64
		}
	}
	if row.notices == 0 {
		return row, false
	}
	row.body = make([]byte, 0, size)
	for _, s := range steps {
		for _, ev := range s.Outbox {
			if row.createdAt.IsZero() {
				row.createdAt = ev.CreatedAt
			}
			row.body = binary.AppendVarint(row.body, ev.CreatedAt.UnixMilli())
			row.body = binary.AppendUvarint(row.body, uint64(len(ev.Body)))
			row.body = append(row.body, ev.Body...)
		}
	}
	return row, true
}

// setOutboxIDs gives the steps' notices the ID of their row.
func setOutboxIDs(steps []*store.Step, id int64) {
	for _, s := range steps {
		for _, ev := range s.Outbox {
			ev.ID = id
		}
	}
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
		if out, err = unpackOutbox(id, at, int(notices), body, out); err != nil {
			return nil, err
		}
	}
	rows.Close()
	return out, interpretError("list outbox", rows.Err())
}

// OutboxDelete removes up to limit notices with IDs up to throughID.
func (e *Executor) OutboxDelete(ctx context.Context, throughID int64, limit int) (int, error) {
	tag, err := e.q().Exec(ctx, outboxDeleteSQL, throughID, int64(limit))
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
