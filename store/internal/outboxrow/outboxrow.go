// Package outboxrow is the layout of an outbox row that the store drivers
// share: the notices of one StepWrite packed into one row, which gives
// them its ID. A row holds Notices notices, each a varint of its creation
// time in Unix milliseconds, a uvarint of its length and its bytes; a row
// of 0 notices (written before rows were packed) is one notice as it is.
package outboxrow

import (
	"encoding/binary"
	"fmt"
	"time"

	"stepwise/store"
)

// Row is a packed outbox row.
type Row struct {
	CreatedAt time.Time // the first notice's
	Notices   int
	Body      []byte
}

// Pack packs the steps' notices, in the steps' order; ok is false when
// they have none.
func Pack(steps []*store.Step) (row Row, ok bool) {
	size := 0
	for _, s := range steps {
		for _, ev := range s.Outbox {
			row.Notices++
			size += len(ev.Body) + 2*binary.MaxVarintLen64
		}
	}
	if row.Notices == 0 {
		return row, false
	}
	row.Body = make([]byte, 0, size)
	for _, s := range steps {
		for _, ev := range s.Outbox {
			if row.CreatedAt.IsZero() {
				row.CreatedAt = ev.CreatedAt
			}
			row.Body = binary.AppendVarint(row.Body, ev.CreatedAt.UnixMilli())
			row.Body = binary.AppendUvarint(row.Body, uint64(len(ev.Body)))
			row.Body = append(row.Body, ev.Body...)
		}
	}
	return row, true
}

// SetIDs gives the steps' notices the ID of their row.
func SetIDs(steps []*store.Step, id int64) {
	for _, s := range steps {
		for _, ev := range s.Outbox {
			ev.ID = id
		}
	}
}

// Unpack appends the notices of row id to out.
func Unpack(id, createdAt int64, notices int, body []byte, out []*store.OutboxEvent) ([]*store.OutboxEvent, error) {
	if notices == 0 {
		return append(out, &store.OutboxEvent{ID: id, CreatedAt: time.UnixMilli(createdAt).UTC(), Body: body}), nil
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
		out = append(out, &store.OutboxEvent{ID: id, CreatedAt: time.UnixMilli(at).UTC(), Body: body[n : n+int(l) : n+int(l)]})
		body = body[n+int(l):]
	}
	return out, nil
}
