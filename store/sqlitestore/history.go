package sqlitestore

import (
	"context"
	"fmt"

	"stepwise/store"
	"stepwise/store/internal/sqlcore"
)

const (
	executionIDSQL = `SELECT id FROM stepwise_execution WHERE arn = ?`

	eventInsertHead = `INSERT INTO stepwise_event (execution_id, id, type, timestamp, body)`

	inputInsertHead = `INSERT INTO stepwise_input (execution_id, seq, at, body)`
)

// executionIDs maps the ARNs of n rows (arn(i) for each) to their
// executions' ids; a missing execution is sql.ErrNoRows. A batch usually
// holds one execution's rows, so this is one lookup.
func executionIDs(ctx context.Context, q querier, n int, arn func(i int) string) (map[string]int64, error) {
	ids := map[string]int64{}
	for i := range n {
		a := arn(i)
		if _, ok := ids[a]; ok {
			continue
		}
		var id int64
		if err := q.QueryRowContext(ctx, executionIDSQL, a).Scan(&id); err != nil {
			return nil, fmt.Errorf("execution %s: %w", a, err)
		}
		ids[a] = id
	}
	return ids, nil
}

// EventInsert appends history events, all or none. An id already stored
// for the execution is store.ErrAlreadyExists; an execution that does not
// exist is store.ErrNotFound.
func (e *Executor) EventInsert(ctx context.Context, events []*store.Event) error {
	if len(events) == 0 {
		return nil
	}
	err := e.batch(ctx, len(events), func(q querier) error {
		ids, err := executionIDs(ctx, q, len(events), func(i int) string { return events[i].ExecutionArn })
		if err != nil {
			return err
		}
		return insertBatch(ctx, q, eventInsertHead, 5, len(events), func(i int, args []any) []any {
			ev := events[i]
			return append(args, ids[ev.ExecutionArn], ev.ID, string(ev.Type), sqlcore.Millis(ev.Timestamp), sqlcore.Blob(ev.Body))
		})
	})
	return interpretError("insert events", err)
}

// InputInsert appends to replay logs, all or none. A seq already stored
// for the execution is store.ErrAlreadyExists.
func (e *Executor) InputInsert(ctx context.Context, inputs []*store.Input) error {
	if len(inputs) == 0 {
		return nil
	}
	err := e.batch(ctx, len(inputs), func(q querier) error {
		ids, err := executionIDs(ctx, q, len(inputs), func(i int) string { return inputs[i].ExecutionArn })
		if err != nil {
			return err
		}
		return insertBatch(ctx, q, inputInsertHead, 4, len(inputs), func(i int, args []any) []any {
			in := inputs[i]
			return append(args, ids[in.ExecutionArn], in.Seq, sqlcore.Millis(in.At), sqlcore.Blob(in.Body))
		})
	})
	return interpretError("insert inputs", err)
}
