package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"stepwise/store"
	"stepwise/store/internal/sqlcore"
)

// Rows to insert travel as one array per column (unnest), so that one
// statement of one text, prepared once per connection, inserts any number
// of them, all or none.
const (
	executionIDsSQL = `SELECT id, arn FROM stepwise_execution WHERE arn = ANY ($1::text[])`

	eventInsertSQL = `
INSERT INTO stepwise_event (execution_id, id, type, timestamp, body)
SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::bigint[], $5::bytea[])`

	inputInsertSQL = `
INSERT INTO stepwise_input (execution_id, seq, at, body)
SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bytea[])`
)

// executionIDs maps the ARNs of n rows (arn(i) for each) to their
// executions' ids in one query; a missing execution is pgx.ErrNoRows.
func executionIDs(ctx context.Context, q querier, n int, arn func(i int) string) (map[string]int64, error) {
	ids := map[string]int64{}
	var arns []string
	for i := range n {
		a := arn(i)
		if _, ok := ids[a]; !ok {
			ids[a] = 0
			arns = append(arns, a)
		}
	}
	rows, err := q.Query(ctx, executionIDsSQL, arns)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var a string
		if err := rows.Scan(&id, &a); err != nil {
			return nil, err
		}
		ids[a] = id
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, a := range arns {
		if ids[a] == 0 {
			return nil, fmt.Errorf("execution %s: %w", a, pgx.ErrNoRows)
		}
	}
	return ids, nil
}

// eventColumns are the arrays of eventInsertSQL.
type eventColumns struct {
	executionIDs, ids, timestamps []int64
	types                         []string
	bodies                        [][]byte
}

func (c *eventColumns) add(executionID int64, ev *store.Event) {
	c.executionIDs = append(c.executionIDs, executionID)
	c.ids = append(c.ids, ev.ID)
	c.types = append(c.types, string(ev.Type))
	c.timestamps = append(c.timestamps, sqlcore.Millis(ev.Timestamp))
	c.bodies = append(c.bodies, sqlcore.Blob(ev.Body))
}

func (c *eventColumns) args() []any {
	return []any{c.executionIDs, c.ids, c.types, c.timestamps, c.bodies}
}

// inputColumns are the arrays of inputInsertSQL.
type inputColumns struct {
	executionIDs, seqs, ats []int64
	bodies                  [][]byte
}

func (c *inputColumns) add(executionID int64, in *store.Input) {
	c.executionIDs = append(c.executionIDs, executionID)
	c.seqs = append(c.seqs, in.Seq)
	c.ats = append(c.ats, sqlcore.Millis(in.At))
	c.bodies = append(c.bodies, sqlcore.Blob(in.Body))
}

func (c *inputColumns) args() []any {
	return []any{c.executionIDs, c.seqs, c.ats, c.bodies}
}

// EventInsert appends history events, all or none. An id already stored
// for the execution is store.ErrAlreadyExists; an execution that does not
// exist is store.ErrNotFound.
func (e *Executor) EventInsert(ctx context.Context, events []*store.Event) error {
	if len(events) == 0 {
		return nil
	}
	q := e.q()
	ids, err := executionIDs(ctx, q, len(events), func(i int) string { return events[i].ExecutionArn })
	if err == nil {
		var c eventColumns
		for _, ev := range events {
			c.add(ids[ev.ExecutionArn], ev)
		}
		// An execution deleted since the lookup is a foreign-key error.
		_, err = q.Exec(ctx, eventInsertSQL, c.args()...)
	}
	return interpretError("insert events", err)
}

// InputInsert appends to replay logs, all or none. A seq already stored
// for the execution is store.ErrAlreadyExists.
func (e *Executor) InputInsert(ctx context.Context, inputs []*store.Input) error {
	if len(inputs) == 0 {
		return nil
	}
	q := e.q()
	ids, err := executionIDs(ctx, q, len(inputs), func(i int) string { return inputs[i].ExecutionArn })
	if err == nil {
		var c inputColumns
		for _, in := range inputs {
			c.add(ids[in.ExecutionArn], in)
		}
		_, err = q.Exec(ctx, inputInsertSQL, c.args()...)
	}
	return interpretError("insert inputs", err)
}
