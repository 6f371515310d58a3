package sqlcore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"stepwise/store"
	"stepwise/store/internal/eventpack"
)

// Table is a table that takes rows in batches (Dialect.InsertRows): an
// execution's history, replay log, timers and tasks, a resource's tags
// and a map run's items.
type Table struct {
	Name    string
	Columns []string
	// Types are the columns' SQL types: bigint, text or bytea.
	Types []string
	// Upsert, when not empty, follows the rows: the ON CONFLICT clause
	// of a table whose rows replace those stored.
	Upsert string
}

// The tables of the rows a step writes. Each row's values come from
// HistoryArgs, InputArgs, TimerArgs and TaskArgs, in the columns' order.
var (
	HistoryTable = Table{"stepwise_history",
		[]string{"execution_id", "first_id", "last_id", "codec", "body"},
		[]string{"bigint", "bigint", "bigint", "bigint", "bytea"}, ""}
	InputTable = Table{"stepwise_input",
		[]string{"execution_id", "seq", "at", "body"},
		[]string{"bigint", "bigint", "bigint", "bytea"}, ""}
	TimerTable = Table{"stepwise_timer",
		[]string{"execution_arn", "id", "fire_at"},
		[]string{"text", "text", "bigint"}, ""}
	TaskTable = Table{"stepwise_task",
		[]string{"execution_arn", "id", "resource", "body", "created_at"},
		[]string{"text", "text", "text", "bytea", "bigint"}, ""}

	// Of a key given twice in one insert, PostgreSQL refuses the second
	// (an upsert may not touch a row twice): TagPut gives each once.
	TagTable = Table{"stepwise_tag",
		[]string{"resource_arn", "key", "value"},
		[]string{"text", "text", "text"},
		"ON CONFLICT (resource_arn, key) DO UPDATE SET value = excluded.value"}
	MapItemTable = Table{"stepwise_map_item",
		[]string{"map_run_arn", "idx", "body"},
		[]string{"text", "bigint", "text"},
		"ON CONFLICT (map_run_arn, idx) DO UPDATE SET body = excluded.body"}
)

// Head is the start of an insert of t's rows: "INSERT INTO t (a, b)".
func (t *Table) Head() string {
	return "INSERT INTO " + t.Name + " (" + strings.Join(t.Columns, ", ") + ")"
}

// HistoryFree is the condition that the stored history of the execution
// whose id is the SQL expression execution holds none of the events first
// to last (expressions too): rows do not overlap, so only the last row
// that starts at or before last can. PostgreSQL's step insert keeps the
// rows it holds and counts them: one missing is an event id taken.
// (SQLite's trigger stepwise_history_taken asks the same of every row.)
func HistoryFree(execution, first, last string) string {
	return `COALESCE((SELECT o.last_id FROM stepwise_history AS o WHERE o.execution_id = ` + execution +
		` AND o.first_id <= ` + last + ` ORDER BY o.first_id DESC LIMIT 1), 0) < ` + first
}

// ErrEventTaken is the error of a step's history row refused by
// HistoryFree.
var ErrEventTaken = fmt.Errorf("an event id is taken: %w", store.ErrAlreadyExists)

// HistoryArgs appends a row of history, of the execution whose id is id.
func HistoryArgs(args []any, id int64, r *eventpack.Row) []any {
	return append(args, id, r.First, r.Last, r.Codec, r.Body)
}

// InputArgs appends a replay-log entry's row, of the execution whose id
// is id.
func InputArgs(args []any, id int64, in *store.Input) []any {
	return append(args, id, in.Seq, Millis(in.At), Blob(in.Body))
}

// TimerArgs appends a timer's row.
func TimerArgs(args []any, t *store.Timer) []any {
	return append(args, t.ExecutionArn, t.ID, Millis(t.FireAt))
}

// TaskArgs appends a task's row.
func TaskArgs(args []any, t *store.Task) []any {
	return append(args, t.ExecutionArn, t.ID, t.Resource, Blob(t.Body), Millis(t.CreatedAt))
}

// executionIDsSQL looks up the ids of executions by ARN: %s is the list's
// condition (Dialect.In).
const executionIDsSQL = `SELECT id, arn FROM stepwise_execution WHERE arn %s`

// executionIDs maps the ARNs of n rows (arn(i) for each) to their
// executions' ids, in one query; a missing execution is the dialect's
// ErrNoRows.
func (c *Core) executionIDs(ctx context.Context, q Querier, n int, arn func(i int) string) (map[string]int64, error) {
	ids := map[string]int64{}
	var arns []string
	for i := range n {
		if a := arn(i); !hasKey(ids, a) {
			ids[a] = 0
			arns = append(arns, a)
		}
	}
	list, err := c.dialect.List(arns)
	if err != nil {
		return nil, err
	}
	if _, err := QueryAll(ctx, q, c.sql.executionIDs, []any{list}, func(s Scanner) (struct{}, error) {
		var id int64
		var a string
		if err := s.Scan(&id, &a); err != nil {
			return struct{}{}, err
		}
		ids[a] = id
		return struct{}{}, nil
	}); err != nil {
		return nil, err
	}
	for _, a := range arns {
		if ids[a] == 0 {
			return nil, fmt.Errorf("execution %s: %w", a, c.dialect.ErrNoRows)
		}
	}
	return ids, nil
}

func hasKey[K comparable, V any](m map[K]V, k K) bool {
	_, ok := m[k]
	return ok
}

// historyOverlapSQL finds the last id of the only row that might hold an
// event of ids up to $2 of the execution whose id is $1: rows do not
// overlap, so only the last that starts at or before $2 can.
const historyOverlapSQL = `
SELECT last_id FROM stepwise_history
WHERE execution_id = $1 AND first_id <= $2
ORDER BY first_id DESC
LIMIT 1`

// EventInsert appends history events, all or none, in rows of
// consecutive ids (eventpack.Pack). An id already stored for the
// execution, or given twice, is store.ErrAlreadyExists; an execution that
// does not exist is store.ErrNotFound (one deleted since the lookup of
// its id is a foreign-key error, which reads the same).
func (c *Core) EventInsert(ctx context.Context, events []*store.Event) error {
	if len(events) == 0 {
		return nil
	}
	ids, err := c.executionIDs(ctx, c.conn.Writer(), len(events), func(i int) string { return events[i].ExecutionArn })
	if err != nil {
		return c.conn.Error("insert events", err)
	}
	type row struct {
		execution int64
		eventpack.Row
	}
	var rows []row
	sorted := slices.Clone(events)
	slices.SortStableFunc(sorted, func(a, b *store.Event) int {
		return cmp.Or(cmp.Compare(ids[a.ExecutionArn], ids[b.ExecutionArn]), cmp.Compare(a.ID, b.ID))
	})
	var packed []eventpack.Row
	for i := 0; i < len(sorted); {
		j := i + 1
		for j < len(sorted) && sorted[j].ExecutionArn == sorted[i].ExecutionArn {
			if sorted[j].ID == sorted[j-1].ID {
				return fmt.Errorf("insert events: event %d of %s given twice: %w", sorted[j].ID, sorted[j].ExecutionArn, store.ErrAlreadyExists)
			}
			j++
		}
		id := ids[sorted[i].ExecutionArn]
		packed = eventpack.Pack(packed[:0], sorted[i:j])
		for _, r := range packed {
			var last int64
			err := c.conn.Writer().QueryRow(ctx, historyOverlapSQL, id, r.Last).Scan(&last)
			switch {
			case err == nil && last >= r.First:
				return fmt.Errorf("insert events: events %d to %d of %s: %w", r.First, r.Last, sorted[i].ExecutionArn, store.ErrAlreadyExists)
			case err != nil && !errors.Is(err, c.dialect.ErrNoRows):
				return c.conn.Error("insert events", err)
			}
			rows = append(rows, row{id, r})
		}
		i = j
	}
	err = c.dialect.InsertRows(ctx, c.conn, &HistoryTable, len(rows), func(i int, args []any) []any {
		return HistoryArgs(args, rows[i].execution, &rows[i].Row)
	})
	return c.conn.Error("insert events", err)
}

// InputInsert appends to replay logs, all or none. A seq already stored
// for the execution is store.ErrAlreadyExists.
func (c *Core) InputInsert(ctx context.Context, inputs []*store.Input) error {
	if len(inputs) == 0 {
		return nil
	}
	ids, err := c.executionIDs(ctx, c.conn.Writer(), len(inputs), func(i int) string { return inputs[i].ExecutionArn })
	if err == nil {
		err = c.dialect.InsertRows(ctx, c.conn, &InputTable, len(inputs), func(i int, args []any) []any {
			return InputArgs(args, ids[inputs[i].ExecutionArn], inputs[i])
		})
	}
	return c.conn.Error("insert inputs", err)
}

// TimerInsert adds timers, all or none. An id the execution already has is
// store.ErrAlreadyExists; an execution that does not exist
// store.ErrNotFound.
func (c *Core) TimerInsert(ctx context.Context, timers []*store.Timer) error {
	if len(timers) == 0 {
		return nil
	}
	err := c.dialect.InsertRows(ctx, c.conn, &TimerTable, len(timers), func(i int, args []any) []any {
		return TimerArgs(args, timers[i])
	})
	return c.conn.Error("insert timers", err)
}

// TaskInsert adds tasks, all or none. An id the execution already has is
// store.ErrAlreadyExists.
func (c *Core) TaskInsert(ctx context.Context, tasks []*store.Task) error {
	if len(tasks) == 0 {
		return nil
	}
	err := c.dialect.InsertRows(ctx, c.conn, &TaskTable, len(tasks), func(i int, args []any) []any {
		return TaskArgs(args, tasks[i])
	})
	return c.conn.Error("insert tasks", err)
}

// The deletes of an execution's timers and tasks by id: %s is the list's
// condition (Dialect.In, of $2).
const (
	timerDeleteSQL = `DELETE FROM stepwise_timer WHERE execution_arn = $1 AND id %s`
	taskDeleteSQL  = `DELETE FROM stepwise_task WHERE execution_arn = $1 AND id %s`
)

// TimerDelete removes an execution's timers; ids it does not have are
// ignored.
func (c *Core) TimerDelete(ctx context.Context, executionArn string, ids []string) error {
	return c.conn.Error("delete timers of "+executionArn, c.deleteIn(ctx, c.sql.timerDelete, executionArn, ids))
}

// TaskDelete removes an execution's tasks; ids it does not have are
// ignored.
func (c *Core) TaskDelete(ctx context.Context, executionArn string, ids []string) error {
	return c.conn.Error("delete tasks of "+executionArn, c.deleteIn(ctx, c.sql.taskDelete, executionArn, ids))
}

// deleteIn runs query, the delete of the rows of owner (an execution or
// a resource, $1) whose ids or keys are in list ($2).
func (c *Core) deleteIn(ctx context.Context, query, owner string, list []string) error {
	if len(list) == 0 {
		return nil
	}
	arg, err := c.dialect.List(list)
	if err != nil {
		return err
	}
	_, err = c.conn.Writer().Exec(ctx, query, owner, arg)
	return err
}
