package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"stepwise/store"
	"stepwise/store/internal/eventpack"
	"stepwise/store/internal/sqlcore"
)

// The statements of StepWrite. The update returns the execution's id, so
// that the step's events and replay-log entry need no lookup; deletes name
// (execution, id) pairs of any number of executions.
const (
	executionStepUpdateSQL = `UPDATE stepwise_execution` + sqlcore.ExecutionSetSQL + `
RETURNING id`

	// OR terms, which SQLite looks up one by one in the primary key; a
	// (execution_arn, id) IN (VALUES ...) would scan the table.
	timerDeletePairsHead = `DELETE FROM stepwise_timer WHERE `
	taskDeletePairsHead  = `DELETE FROM stepwise_task WHERE `
)

// stepChunks are the row counts of the multi-row statements StepWrite
// runs, all prepared on the writer when the driver opens: a batch of n
// rows is cut into the largest of them that fit, so that no statement is
// parsed while a commit holds the writer.
var stepChunks = []int{128, 64, 32, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1}

// chunk is the largest of stepChunks no larger than n (n > 0).
func chunk(n int) int {
	for _, c := range stepChunks {
		if c <= n {
			return c
		}
	}
	return 1
}

// chunkSQL holds a multi-row statement's text for each of stepChunks,
// indexed by its number of rows, so that none is built while a commit
// holds the writer.
type chunkSQL [129]string

func newChunkSQL(text func(n int) string) *chunkSQL {
	var c chunkSQL
	for _, n := range stepChunks {
		c[n] = text(n)
	}
	return &c
}

var (
	historyInsertSQL    = newChunkSQL(func(n int) string { return tableValuesSQL(&sqlcore.HistoryTable, n) })
	inputInsertSQL      = newChunkSQL(func(n int) string { return tableValuesSQL(&sqlcore.InputTable, n) })
	timerInsertSQL      = newChunkSQL(func(n int) string { return tableValuesSQL(&sqlcore.TimerTable, n) })
	taskInsertSQL       = newChunkSQL(func(n int) string { return tableValuesSQL(&sqlcore.TaskTable, n) })
	timerDeletePairsSQL = newChunkSQL(func(n int) string { return pairsSQL(timerDeletePairsHead, n) })
	taskDeletePairsSQL  = newChunkSQL(func(n int) string { return pairsSQL(taskDeletePairsHead, n) })
	executionIDsSQL     = newChunkSQL(executionIDsQuery)
	executionInsertsSQL = newChunkSQL(func(n int) string {
		return valuesSQL(executionInsertHead, executionInsertCols, n) + " RETURNING id, arn"
	})
)

// The insert of the rows of several executions, which returns their ids
// (in no order: by ARN). A batch of child starts (a distributed Map's)
// inserts many rows in one transaction: one statement for all of them
// costs the committer less than one statement each (binding and
// stepping a statement is a good part of an insert's cost).
const executionInsertHead = `INSERT INTO stepwise_execution (` + sqlcore.ExecutionColumns + `)`

// executionInsertCols is the number of an execution's columns
// (sqlcore.ExecutionInsertArgs).
var executionInsertCols = strings.Count(sqlcore.ExecutionColumns, ",") + 1

// stepStatements are the statements StepWrite may run.
func stepStatements() []string {
	q := []string{sqlcore.ExecutionInsertSQL, executionStepUpdateSQL, sqlcore.ExecutionVersionSQL, outboxInsertSQL}
	for _, n := range stepChunks {
		for _, c := range []*chunkSQL{executionInsertsSQL, historyInsertSQL, inputInsertSQL, timerInsertSQL, taskInsertSQL, timerDeletePairsSQL, taskDeletePairsSQL, executionIDsSQL} {
			q = append(q, c[n])
		}
	}
	return q
}

// pairsSQL is head followed by n (execution_arn, id) matches.
func pairsSQL(head string, n int) string {
	const pair = "(execution_arn = ? AND id = ?)"
	return head + strings.Repeat(pair+" OR ", n-1) + pair
}

// StepWrite writes the steps of distinct executions, all or none: in a
// transaction of its own, or in the executor's, which must then be rolled
// back when it fails. (A savepoint would make the failure undoable, but
// it costs a copy of every page the steps change, and the engine rolls
// back a failed batch anyway.)
func (e *Executor) StepWrite(ctx context.Context, steps []*store.Step) error {
	if len(steps) == 0 {
		return nil
	}
	if err := sqlcore.CheckSteps(steps); err != nil {
		return interpretError("write steps", err)
	}
	if e.tx != nil {
		return interpretError("write steps", e.writeSteps(ctx, e.tx, steps))
	}
	return interpretError("write steps", e.inTx(ctx, func(q querier) error {
		return e.writeSteps(ctx, q, steps)
	}))
}

func (e *Executor) writeSteps(ctx context.Context, q querier, steps []*store.Step) error {
	live := func(f store.Fence) error { return e.NodeLive(ctx, sqlQuerier{q}, f) }
	if err := checkFences(ctx, q, steps, live); err != nil {
		return err
	}
	// The events are packed (compressed) while the executions' rows are
	// written: off the writer's path, which every commit waits for.
	packed := packSteps(steps)
	ids, err := writeExecutions(ctx, q, steps)
	if err != nil {
		return err // the packing ends on its own (packed is buffered)
	}
	for i, s := range steps {
		s.ExecutionID = ids[i]
	}
	if err := ownInserted(ctx, q, steps); err != nil {
		return err
	}
	var nEvents, nInputs, nAddTimers, nDelTimers, nAddTasks, nDelTasks int
	for _, s := range steps {
		nEvents += len(s.Events)
		if s.Input != nil {
			nInputs++
		}
		nAddTimers += len(s.AddTimers)
		nDelTimers += len(s.DeleteTimers)
		nAddTasks += len(s.AddTasks)
		nDelTasks += len(s.DeleteTasks)
	}
	if nDelTimers > 0 {
		if err := execRows(ctx, q, nDelTimers, 2, timerDeletePairsSQL,
			stepRows(steps, func(s *store.Step, args []any) []any {
				for _, id := range s.DeleteTimers {
					args = append(args, sqlcore.StepArn(s), id)
				}
				return args
			})); err != nil {
			return err
		}
	}
	if nDelTasks > 0 {
		if err := execRows(ctx, q, nDelTasks, 2, taskDeletePairsSQL,
			stepRows(steps, func(s *store.Step, args []any) []any {
				for _, id := range s.DeleteTasks {
					args = append(args, sqlcore.StepArn(s), id)
				}
				return args
			})); err != nil {
			return err
		}
	}
	if nInputs > 0 {
		var args []any
		for i, s := range steps {
			if in := s.Input; in != nil {
				args = append(args, ids[i], in.Seq, sqlcore.Millis(in.At), sqlcore.Blob(in.Body))
			}
		}
		if err := execRows(ctx, q, nInputs, 4, inputInsertSQL, args); err != nil {
			return err
		}
	}
	if rows := <-packed; nEvents > 0 {
		args := make([]any, 0, 5*len(rows.rows))
		for i := range steps {
			for j := rows.ends[i]; j < rows.ends[i+1]; j++ {
				args = sqlcore.HistoryArgs(args, ids[i], &rows.rows[j])
			}
		}
		// The trigger stepwise_history_taken refuses a row whose events
		// the execution has.
		if err := execRows(ctx, q, len(args)/5, 5, historyInsertSQL, args); err != nil {
			return err
		}
	}
	if nAddTimers > 0 {
		if err := execRows(ctx, q, nAddTimers, 3, timerInsertSQL,
			stepRows(steps, func(s *store.Step, args []any) []any {
				for _, t := range s.AddTimers {
					args = append(args, t.ExecutionArn, t.ID, sqlcore.Millis(t.FireAt))
				}
				return args
			})); err != nil {
			return err
		}
	}
	if err := writeOutbox(ctx, q, steps); err != nil {
		return err
	}
	if nAddTasks > 0 {
		if err := execRows(ctx, q, nAddTasks, 5, taskInsertSQL,
			stepRows(steps, func(s *store.Step, args []any) []any {
				for _, t := range s.AddTasks {
					args = append(args, t.ExecutionArn, t.ID, t.Resource, sqlcore.Blob(t.Body), sqlcore.Millis(t.CreatedAt))
				}
				return args
			})); err != nil {
			return err
		}
	}
	return nil
}

// packedSteps are the history rows of a batch of steps: step i's are
// rows[ends[i]:ends[i+1]].
type packedSteps struct {
	rows []eventpack.Row
	ends []int
}

// packConcurrently is the fewest steps whose events packSteps packs on a
// goroutine of its own.
const packConcurrently = 8

// packSteps packs the events of steps into their history rows, on a
// goroutine of its own when there are enough of them.
func packSteps(steps []*store.Step) <-chan packedSteps {
	out := make(chan packedSteps, 1)
	pack := func() {
		p := packedSteps{ends: make([]int, 1, len(steps)+1)}
		for _, s := range steps {
			p.rows = eventpack.Pack(p.rows, s.Events)
			p.ends = append(p.ends, len(p.rows))
		}
		out <- p
	}
	if len(steps) < packConcurrently {
		pack()
	} else {
		go pack()
	}
	return out
}

// writeExecutions inserts or updates the execution row of every step that
// has one to write, and returns the ids of all the steps' executions. Most
// steps leave their execution's row as it was: their ids are the ones
// they carry (store.Step.ExecutionID), or looked up in one statement,
// which writes nothing.
func writeExecutions(ctx context.Context, q querier, steps []*store.Step) ([]int64, error) {
	ids := make([]int64, len(steps))
	index := make(map[string]int, len(steps))
	var lookups []any
	var inserts []int // the indexes of the steps that insert their row
	for i, s := range steps {
		arn := sqlcore.StepArn(s)
		index[arn] = i
		switch {
		case s.Insert != nil:
			inserts = append(inserts, i)
		case s.Update != nil:
			id, err := executionStepUpdate(ctx, q, s.Update)
			if err != nil {
				return nil, err
			}
			ids[i] = id
		case s.ExecutionID != 0:
			ids[i] = s.ExecutionID
		default:
			lookups = append(lookups, arn)
		}
	}
	for len(lookups) > 0 {
		c := chunk(len(lookups))
		rows, err := q.QueryContext(ctx, executionIDsSQL[c], lookups[:c]...)
		if err != nil {
			return nil, err
		}
		found := 0
		for rows.Next() {
			var id int64
			var arn sql.RawBytes
			if err := rows.Scan(&id, &arn); err != nil {
				rows.Close()
				return nil, err
			}
			ids[index[string(arn)]] = id
			found++
		}
		if err := rows.Close(); err != nil {
			return nil, err
		}
		if found < c {
			for _, a := range lookups[:c] {
				if ids[index[a.(string)]] == 0 {
					return nil, fmt.Errorf("execution %s: %w", a, sql.ErrNoRows)
				}
			}
		}
		lookups = lookups[c:]
	}
	if len(inserts) == 1 {
		i := inserts[0]
		id, err := executionInsert(ctx, q, steps[i].Insert)
		if err != nil {
			return nil, err
		}
		ids[i] = id
		return ids, nil
	}
	for len(inserts) > 0 {
		c := chunk(len(inserts))
		args := make([]any, 0, c*executionInsertCols)
		for _, i := range inserts[:c] {
			args = append(args, sqlcore.ExecutionInsertArgs(steps[i].Insert)...)
		}
		if err := executionInserts(ctx, q, c, args, index, ids); err != nil {
			return nil, err
		}
		inserts = inserts[c:]
	}
	return ids, nil
}

// executionInserts inserts n executions' rows (args holds their
// arguments) and sets their ids in ids, by the index of their ARN.
func executionInserts(ctx context.Context, q querier, n int, args []any, index map[string]int, ids []int64) error {
	rows, err := q.QueryContext(ctx, executionInsertsSQL[n], args...)
	if err != nil {
		return fmt.Errorf("insert %d executions: %w", n, err)
	}
	got := 0
	for rows.Next() {
		var id int64
		var arn sql.RawBytes
		if err := rows.Scan(&id, &arn); err != nil {
			rows.Close()
			return fmt.Errorf("insert %d executions: %w", n, err)
		}
		i, ok := index[string(arn)]
		if !ok {
			rows.Close()
			return fmt.Errorf("insert %d executions: an id returned for %s, not inserted", n, arn)
		}
		ids[i] = id
		got++
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return fmt.Errorf("insert %d executions: %w", n, err)
	}
	if got != n {
		return fmt.Errorf("insert %d executions: %d ids returned", n, got)
	}
	return nil
}

// executionIDsHead looks up the ids of executions by ARN; an IN list is
// looked up one ARN at a time in the unique index.
const executionIDsHead = `SELECT id, arn FROM stepwise_execution WHERE arn IN (`

func executionIDsQuery(n int) string {
	return executionIDsHead + "?" + strings.Repeat(", ?", n-1) + ")"
}

// stepRows returns the arguments row appends for every step.
func stepRows(steps []*store.Step, row func(s *store.Step, args []any) []any) []any {
	var args []any
	for _, s := range steps {
		args = row(s, args)
	}
	return args
}

// execRows runs the statement of n rows of cols arguments each (args holds
// them all) in chunks of the prepared sizes.
func execRows(ctx context.Context, q querier, n, cols int, query *chunkSQL, args []any) error {
	for n > 0 {
		c := chunk(n)
		if _, err := q.ExecContext(ctx, query[c], args[:c*cols]...); err != nil {
			return err
		}
		args, n = args[c*cols:], n-c
	}
	return nil
}

// executionInsert inserts an execution's row and returns its id.
func executionInsert(ctx context.Context, q querier, x *store.Execution) (int64, error) {
	res, err := q.ExecContext(ctx, sqlcore.ExecutionInsertSQL, sqlcore.ExecutionInsertArgs(x)...)
	if err != nil {
		return 0, fmt.Errorf("insert execution %s: %w", x.Arn, err)
	}
	return res.LastInsertId()
}

// executionStepUpdate writes an execution's new status if its version is
// still p.ExpectedVersion, and returns its id.
func executionStepUpdate(ctx context.Context, q querier, p *store.ExecutionUpdateParams) (int64, error) {
	var id int64
	err := q.QueryRowContext(ctx, executionStepUpdateSQL, sqlcore.ExecutionUpdateArgs(p)...).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		err = sqlcore.VersionConflict(ctx, sqlQuerier{q}, p.Arn, p.ExpectedVersion)
	}
	if err != nil {
		return 0, fmt.Errorf("update execution %s: %w", p.Arn, err)
	}
	return id, nil
}
