package pgstore

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"stepwise/store"
	"stepwise/store/internal/eventpack"
	"stepwise/store/internal/outboxrow"
	"stepwise/store/internal/sqlcore"
)

// The statements of StepWrite, sent in one batch (one round trip).
const (
	// (execution, id) pairs of any number of executions.
	timerDeletePairsSQL = `
DELETE FROM stepwise_timer AS t
USING unnest($1::text[], $2::text[]) AS d (execution_arn, id)
WHERE t.execution_arn = d.execution_arn AND t.id = d.id`

	taskDeletePairsSQL = `
DELETE FROM stepwise_task AS t
USING unnest($1::text[], $2::text[]) AS d (execution_arn, id)
WHERE t.execution_arn = d.execution_arn AND t.id = d.id`

	// executionInsertOwnedSQL inserts an execution owned by a node and epoch.
	executionInsertOwnedSQL = `
INSERT INTO stepwise_execution (` + sqlcore.ExecutionColumns + `, owner, owner_epoch)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24)`

	// executionStepUpdateSQL updates an execution's row if it is at the
	// expected version, and says why it did not: id is NULL then, and
	// version the row's (read before the update), or NULL when there is
	// no row.
	executionStepUpdateSQL = `
WITH updated AS (
    UPDATE stepwise_execution` + sqlcore.ExecutionSetSQL + `
    RETURNING id
)
SELECT (SELECT id FROM updated), (SELECT version FROM stepwise_execution WHERE arn = $9)`

	// executionArnsSQL finds which of the ARNs have an execution, and
	// their ids.
	executionArnsSQL = `SELECT arn, id FROM stepwise_execution WHERE arn = ANY ($1::text[])`

	// The history and the replay log are keyed by the execution's id:
	// the one the step carries (xid, store.Step.ExecutionID), or else
	// looked up here by ARN, as the batch cannot wait for the lookup's
	// answer. A missing execution would be a NULL id, but the lookup
	// before has failed the batch then; a carried id of a row that is
	// gone fails the foreign key.
	stepInputInsertSQL = `
INSERT INTO stepwise_input (execution_id, seq, at, body)
SELECT COALESCE(NULLIF(i.xid, 0), (SELECT x.id FROM stepwise_execution AS x WHERE x.arn = i.arn)), i.seq, i.at, i.body
FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::bigint[], $5::bytea[]) AS i (arn, xid, seq, at, body)`

	// The savepoint of a StepWrite inside the executor's transaction: set
	// and released in the batch, it costs a round trip only when the
	// write fails.
	stepSavepointSQL         = `SAVEPOINT stepwise_step`
	stepReleaseSQL           = `RELEASE SAVEPOINT stepwise_step`
	stepRollbackSavepointSQL = `ROLLBACK TO SAVEPOINT stepwise_step; RELEASE SAVEPOINT stepwise_step`
)

var (
	// Rows whose events the execution holds already are left out
	// (sqlcore.HistoryFree), and counted as missing.
	stepHistoryInsertSQL = `
INSERT INTO stepwise_history (execution_id, first_id, last_id, codec, body)
SELECT h.xid, h.first_id, h.last_id, h.codec, h.body
FROM (
    SELECT COALESCE(NULLIF(u.carried, 0), (SELECT x.id FROM stepwise_execution AS x WHERE x.arn = u.arn)) AS xid,
           u.first_id, u.last_id, u.codec, u.body
    FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bytea[])
        AS u (arn, carried, first_id, last_id, codec, body)
) AS h
WHERE ` + sqlcore.HistoryFree("h.xid", "h.first_id", "h.last_id")
)

// StepWrite writes the steps of distinct executions, all or none, in one
// round trip: in a transaction of its own (begun in the same batch, and
// committed after), or in a savepoint of the executor's transaction.
// A statement the database refused is undone to the savepoint, and the
// transaction stays usable; a failure found in the answers (a conflict,
// a fence, a missing execution) leaves it aborted. The engine rolls back
// after any failed write, as the store asks.
func (e *Executor) StepWrite(ctx context.Context, steps []*store.Step) error {
	if len(steps) == 0 {
		return nil
	}
	if err := sqlcore.CheckSteps(steps); err != nil {
		return interpretError("write steps", err)
	}
	w := newStepBatch(steps, e.tx == nil)
	if e.tx != nil {
		err := w.run(e.tx.SendBatch(ctx, w.b))
		if err != nil && w.opened {
			_, rbErr := e.tx.Exec(ctx, stepRollbackSavepointSQL)
			err = errors.Join(err, rbErr)
		}
		return interpretError("write steps", err)
	}
	br := e.driver.pool.SendBatch(ctx, w.b)
	tx := br.Tx()
	if err := w.run(br); err != nil {
		return interpretError("write steps", errors.Join(err, rollback(ctx, tx)))
	}
	return interpretError("write steps", tx.Commit(ctx))
}

// rollback rolls tx back; one that never began is no error.
func rollback(ctx context.Context, tx pgx.Tx) error {
	if err := tx.Rollback(ctx); err != nil && !errors.Is(err, pgx.ErrTxClosed) {
		return err
	}
	return nil
}

// stepResult is what one queued statement of a step batch answers.
type stepResult int

const (
	resultExec    stepResult = iota // nothing but success or an error
	resultUpdate                    // executionStepUpdateSQL's row
	resultLookup                    // executionArnsSQL's rows
	resultOutbox                    // the outbox row's id
	resultOpening                   // BEGIN or SAVEPOINT
	resultFence                     // stepFenceSQL's rows
	resultLease                     // nodeLeaseSQL's row: the inserting node's lease is live
	resultHistory                   // stepHistoryInsertSQL's count, of history.n rows
)

// stepBatch is the batch of one StepWrite and how to read its answers.
type stepBatch struct {
	steps   []*store.Step
	b       *pgx.Batch
	ops     []string // what each queued statement does, for errors
	results []stepResult
	updates []*store.Step // of the resultUpdate statements, in order
	// lookups are the ARNs of the steps that leave their row as it was
	// and carry no row id, looked up by ARN.
	lookups []string
	fences  map[string]store.Fence // of the fenced steps that do not insert, by ARN
	opened  bool                   // the BEGIN or SAVEPOINT succeeded

	historyRows int64 // rows of history the batch inserts
}

func (w *stepBatch) queue(op string, r stepResult, sql string, args ...any) {
	w.b.Queue(sql, args...)
	w.ops = append(w.ops, op)
	w.results = append(w.results, r)
}

// newStepBatch builds the batch that writes steps: begun by BEGIN when
// begin is set, by a SAVEPOINT (released at the end) otherwise. The rows
// of executions come first, the deletes before the inserts (a timer may
// be re-armed under its id), and the outbox last, so that its lock is
// held for as short a time as can be.
func newStepBatch(steps []*store.Step, begin bool) *stepBatch {
	w := &stepBatch{steps: steps, b: &pgx.Batch{}}
	if begin {
		w.b.BeginTx(pgx.TxOptions{})
		w.ops = append(w.ops, "begin")
		w.results = append(w.results, resultOpening)
	} else {
		w.queue("savepoint", resultOpening, stepSavepointSQL)
	}

	// Fenced steps first: their executions' owners, read and held
	// against claims, must be their fences' before anything is written.
	var fencedArns []string
	var leases []store.Fence // of the fenced steps that insert
	for _, s := range steps {
		switch {
		case s.Fence == nil:
		case s.Insert != nil:
			if !slices.Contains(leases, *s.Fence) {
				leases = append(leases, *s.Fence)
			}
		default:
			if w.fences == nil {
				w.fences = map[string]store.Fence{}
			}
			w.fences[sqlcore.StepArn(s)] = *s.Fence
			fencedArns = append(fencedArns, sqlcore.StepArn(s))
		}
	}
	if len(fencedArns) > 0 {
		w.queue("check owners", resultFence, stepFenceSQL, fencedArns)
	}
	for _, f := range leases {
		w.queue("check the lease of node "+f.Node, resultLease, nodeLeaseSQL, f.Node, f.Epoch)
	}

	delTimers, delTasks := newArrays("text", "text"), newArrays("text", "text")
	inputs := newArrays("text", "bigint", "bigint", "bigint", "bytea")
	history := newArrays("text", "bigint", "bigint", "bigint", "bigint", "bytea")
	var packed []eventpack.Row
	timers, tasks := newArrays(sqlcore.TimerTable.Types...), newArrays(sqlcore.TaskTable.Types...)
	var row []any
	for _, s := range steps {
		arn := sqlcore.StepArn(s)
		var carried int64 // the row id the step's rows are written under; 0: looked up by ARN
		switch {
		case s.Insert != nil && s.Fence != nil:
			// Owned from the start: one row version, not an insert and
			// an update.
			w.queue("insert execution "+arn, resultExec, executionInsertOwnedSQL,
				append(sqlcore.ExecutionInsertArgs(s.Insert), s.Fence.Node, s.Fence.Epoch)...)
		case s.Insert != nil:
			w.queue("insert execution "+arn, resultExec, sqlcore.ExecutionInsertSQL, sqlcore.ExecutionInsertArgs(s.Insert)...)
		case s.Update != nil:
			p := s.Update
			w.queue("update execution "+arn, resultUpdate, executionStepUpdateSQL, sqlcore.ExecutionUpdateArgs(p)...)
			w.updates = append(w.updates, s)
		case s.ExecutionID != 0:
			carried = s.ExecutionID
		default:
			w.lookups = append(w.lookups, arn)
		}
		for _, id := range s.DeleteTimers {
			delTimers.add(arn, id)
		}
		for _, id := range s.DeleteTasks {
			delTasks.add(arn, id)
		}
		if in := s.Input; in != nil {
			inputs.add(arn, carried, in.Seq, sqlcore.Millis(in.At), sqlcore.Blob(in.Body))
		}
		packed = eventpack.Pack(packed[:0], s.Events)
		for _, r := range packed {
			history.add(arn, carried, r.First, r.Last, r.Codec, r.Body)
		}
		for _, t := range s.AddTimers {
			row = sqlcore.TimerArgs(row[:0], t)
			timers.add(row...)
		}
		for _, t := range s.AddTasks {
			row = sqlcore.TaskArgs(row[:0], t)
			tasks.add(row...)
		}
	}
	if len(w.lookups) > 0 {
		w.queue("look up executions", resultLookup, executionArnsSQL, w.lookups)
	}
	for _, a := range []struct {
		op, sql string
		rows    *arrays
	}{
		{"delete timers", timerDeletePairsSQL, delTimers},
		{"delete tasks", taskDeletePairsSQL, delTasks},
		{"insert inputs", stepInputInsertSQL, inputs},
		{"insert timers", timerInsertSQL, timers},
		{"insert tasks", taskInsertSQL, tasks},
	} {
		if a.rows.n > 0 {
			w.queue(a.op, resultExec, a.sql, a.rows.cols...)
		}
	}
	if history.n > 0 {
		w.queue("insert events", resultHistory, stepHistoryInsertSQL, history.cols...)
		w.historyRows = int64(history.n)
	}
	if row, ok := outboxrow.Pack(steps); ok {
		w.queue("lock outbox", resultExec, outboxLockSQL, outboxLockKey)
		w.queue("write outbox", resultOutbox, outboxInsertSQL, sqlcore.Millis(row.CreatedAt), int64(row.Notices), row.Body)
	}
	if !begin {
		w.queue("release savepoint", resultExec, stepReleaseSQL)
	}
	return w
}

// run reads the batch's answers in order and stops at the first failure:
// an error, an update that matched no row (store.ErrConflict, or
// pgx.ErrNoRows for a missing execution) or a missing execution among the
// lookups. It closes br.
func (w *stepBatch) run(br pgx.BatchResults) error {
	if err := w.read(br); err != nil {
		_ = br.Close() // the same error, or one it caused
		return err
	}
	return br.Close()
}

func (w *stepBatch) read(br pgx.BatchResults) error {
	updates := w.updates
	var outboxID int64
	for i, op := range w.ops {
		var err error
		switch w.results[i] {
		case resultOpening:
			if _, err = br.Exec(); err == nil {
				w.opened = true
			}
		case resultExec:
			_, err = br.Exec()
		case resultHistory:
			var tag pgconn.CommandTag
			if tag, err = br.Exec(); err == nil && tag.RowsAffected() != w.historyRows {
				err = sqlcore.ErrEventTaken
			}
		case resultUpdate:
			s := updates[0]
			p := s.Update
			updates = updates[1:]
			var id, version *int64
			if err = br.QueryRow().Scan(&id, &version); err == nil && id != nil {
				s.ExecutionID = *id
			}
			if err == nil && id == nil {
				switch {
				case version == nil:
					err = pgx.ErrNoRows
				case *version == p.ExpectedVersion: // changed since the statement began
					err = fmt.Errorf("changed by another writer, at version %d: %w", p.ExpectedVersion, store.ErrConflict)
				default:
					err = fmt.Errorf("at version %d, not %d: %w", *version, p.ExpectedVersion, store.ErrConflict)
				}
			}
		case resultLookup:
			err = w.readLookup(br)
		case resultFence:
			err = w.readFences(br)
		case resultLease:
			var live bool
			if err = br.QueryRow().Scan(&live); err == nil && !live {
				err = sqlcore.Fenced(store.Fence{Node: w.ops[i][len("check the lease of node "):]})
			}
		case resultOutbox:
			err = br.QueryRow().Scan(&outboxID)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
	}
	outboxrow.SetIDs(w.steps, outboxID)
	for _, s := range w.steps {
		if s.Insert != nil {
			s.ExecutionID = 0 // not read back: the next step looks it up
		}
	}
	return nil
}

// readFences fails with store.ErrFenced when an execution of a fenced
// step is not its fence's, or its fence's lease ran out (one that does not exist is left to the step's
// own write to report).
func (w *stepBatch) readFences(br pgx.BatchResults) error {
	rows, err := br.Query()
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var arn string
		var owner *string
		var epoch *int64
		var live bool
		if err := rows.Scan(&arn, &owner, &epoch, &live); err != nil {
			return err
		}
		if f := w.fences[arn]; owner == nil || epoch == nil || *owner != f.Node || *epoch != f.Epoch || !live {
			return fmt.Errorf("execution %s: %w", arn, sqlcore.Fenced(f))
		}
	}
	return rows.Err()
}

// readLookup fails with pgx.ErrNoRows when an ARN of w.lookups has no
// execution, and tells the others' steps their row ids.
func (w *stepBatch) readLookup(br pgx.BatchResults) error {
	rows, err := br.Query()
	if err != nil {
		return err
	}
	found := make(map[string]int64, len(w.lookups))
	for rows.Next() {
		var arn string
		var id int64
		if err := rows.Scan(&arn, &id); err != nil {
			rows.Close()
			return err
		}
		found[arn] = id
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, arn := range w.lookups {
		if found[arn] == 0 {
			return fmt.Errorf("execution %s: %w", arn, pgx.ErrNoRows)
		}
	}
	for _, s := range w.steps {
		if id, ok := found[sqlcore.StepArn(s)]; ok && s.Insert == nil && s.Update == nil {
			s.ExecutionID = id
		}
	}
	return nil
}
