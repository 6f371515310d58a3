package sqlcore

import (
	"context"
	"math"
	"slices"

	"stepwise/store"
	"stepwise/store/internal/eventpack"
)

// The reads of an execution's history and replay log; their inserts are
// rows.go's.
const (
	// EventRowsSQL reads the rows from the one holding the event after
	// $2 (the last whose first id is at most $2 + 1) on.
	EventRowsSQL = `
SELECT first_id, last_id, codec, body
FROM stepwise_history
WHERE execution_id = (SELECT id FROM stepwise_execution WHERE arn = $1)
  AND first_id >= COALESCE((
      SELECT MAX(first_id) FROM stepwise_history
      WHERE execution_id = (SELECT id FROM stepwise_execution WHERE arn = $1) AND first_id <= $2 + 1), 0)
ORDER BY first_id
LIMIT $3`

	// EventRowsReverseSQL reads the rows that hold events before $2, the
	// last first. It is exported for the drivers' tests of its query plan.
	EventRowsReverseSQL = `
SELECT first_id, last_id, codec, body
FROM stepwise_history
WHERE execution_id = (SELECT id FROM stepwise_execution WHERE arn = $1) AND first_id < $2
ORDER BY first_id DESC
LIMIT $3`

	inputListSQL = `
SELECT seq, at, body
FROM stepwise_input
WHERE execution_id = (SELECT id FROM stepwise_execution WHERE arn = $1)
ORDER BY seq`
)

// EventList pages through an execution's history by id. A row holds one
// or more events, so a page of n events reads at most n + 1 rows (the
// first may hold only events before the page).
func (c *Core) EventList(ctx context.Context, p *store.EventListParams) ([]*store.Event, error) {
	query, after := EventRowsSQL, p.AfterID
	keep := func(id int64) bool { return id > after }
	if p.Reverse {
		query = EventRowsReverseSQL
		if after <= 0 {
			after = math.MaxInt64
		}
		keep = func(id int64) bool { return id < after }
	}
	rowLimit := 0
	if p.Limit > 0 {
		rowLimit = p.Limit + 1
	}
	rows, err := QueryAll(ctx, c.conn.Reader(), query, []any{p.ExecutionArn, after, c.dialect.Limit(rowLimit)}, func(s Scanner) (eventpack.Row, error) {
		var r eventpack.Row
		err := s.Scan(&r.First, &r.Last, &r.Codec, &r.Body)
		return r, err
	})
	if err != nil {
		return nil, c.conn.Error("list events of "+p.ExecutionArn, err)
	}
	evs := []*store.Event{}
	for i := range rows {
		n := len(evs)
		if evs, err = eventpack.Unpack(evs, p.ExecutionArn, &rows[i], keep); err != nil {
			return nil, err
		}
		if p.Reverse {
			slices.Reverse(evs[n:])
		}
		if p.Limit > 0 && len(evs) >= p.Limit {
			return evs[:p.Limit], nil
		}
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
