package sqlcore

import (
	"context"
	"math"
	"stepwise/history"
	"stepwise/store"
)

// The reads of an execution's history and replay log; their inserts are
// each driver's (arrays in PostgreSQL, multi-row VALUES in SQLite).
const (
	eventListSQL = `
SELECT id, type, timestamp, body
FROM stepwise_event
WHERE execution_id = (SELECT id FROM stepwise_execution WHERE arn = $1) AND id > $2
ORDER BY id
LIMIT $3`

	// EventListReverseSQL is exported for the drivers' tests of its
	// query plan.
	EventListReverseSQL = `
SELECT id, type, timestamp, body
FROM stepwise_event
WHERE execution_id = (SELECT id FROM stepwise_execution WHERE arn = $1) AND id < $2
ORDER BY id DESC
LIMIT $3`

	inputListSQL = `
SELECT seq, at, body
FROM stepwise_input
WHERE execution_id = (SELECT id FROM stepwise_execution WHERE arn = $1)
ORDER BY seq`
)

// EventList pages through an execution's history by id.
func (c *Core) EventList(ctx context.Context, p *store.EventListParams) ([]*store.Event, error) {
	query, after := eventListSQL, p.AfterID
	if p.Reverse {
		query = EventListReverseSQL
		if after <= 0 {
			after = math.MaxInt64
		}
	}
	evs, err := QueryAll(ctx, c.conn.Reader(), query, []any{p.ExecutionArn, after, c.dialect.Limit(p.Limit)}, func(s Scanner) (*store.Event, error) {
		ev := store.Event{ExecutionArn: p.ExecutionArn}
		var ts int64
		var typ string
		if err := s.Scan(&ev.ID, &typ, &ts, &ev.Body); err != nil {
			return nil, err
		}
		ev.Type = history.EventType(typ)
		ev.Timestamp = FromMillis(ts)
		return &ev, nil
	})
	if err != nil {
		return nil, c.conn.Error("list events of "+p.ExecutionArn, err)
	}
	return evs, nil
}

// InputList returns an execution's replay log by seq.
func (c *Core) InputList(ctx context.Context, executionArn string) ([]*store.Input, error) {
	ins, err := QueryAll(ctx, c.conn.Reader(), inputListSQL, []any{executionArn}, func(s Scanner) (*store.Input, error) {
		in := store.Input{ExecutionArn: executionArn}
		var at int64
		if err := s.Scan(&in.Seq, &at, &in.Body); err != nil {
			return nil, err
		}
		in.At = FromMillis(at)
		return &in, nil
	})
	if err != nil {
		return nil, c.conn.Error("list inputs of "+executionArn, err)
	}
	return ins, nil
}
