package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"stepwise/store"
)

// executionStepUpdateSQL is executionUpdateSQL returning only the id, so
// that the step's events and replay-log entry need no lookup.
const executionStepUpdateSQL = `
UPDATE stepwise_execution
SET status = $1, output = $2, error = $3, cause = $4, stop_date = $5, last_event_id = $6,
    redrive_count = $7, redrive_date = $8, version = version + 1
WHERE arn = $9 AND version = $10
RETURNING id`

const executionInsertIDSQL = executionInsertSQL + ` RETURNING id`

// The savepoint of a StepWrite inside the executor's transaction. It is
// set and released in the batches StepWrite sends anyway, so it costs no
// round trip unless the write fails.
const (
	stepSavepointSQL         = `SAVEPOINT stepwise_step`
	stepReleaseSQL           = `RELEASE SAVEPOINT stepwise_step`
	stepRollbackSavepointSQL = `ROLLBACK TO SAVEPOINT stepwise_step; RELEASE SAVEPOINT stepwise_step`
)

// StepWrite writes the steps of distinct executions, all or none: in a
// transaction of its own, or in a savepoint of the executor's, which
// stays usable when it fails (the engine rolls it back all the same, as
// the store asks). It takes two round trips besides the transaction's
// own: one batch writes or looks up the executions' rows, the next the
// rest.
func (e *Executor) StepWrite(ctx context.Context, steps []*store.Step) error {
	if len(steps) == 0 {
		return nil
	}
	if e.tx != nil {
		return interpretError("write steps", writeSteps(ctx, e.tx, steps, true))
	}
	tx, err := e.driver.pool.Begin(ctx)
	if err != nil {
		return interpretError("write steps", err)
	}
	if err := writeSteps(ctx, tx, steps, false); err != nil {
		return interpretError("write steps", errors.Join(err, tx.Rollback(ctx)))
	}
	return interpretError("write steps", tx.Commit(ctx))
}

// writeSteps writes steps through q, inside a savepoint if savepoint is
// set; when it fails, it rolls back to the savepoint.
func writeSteps(ctx context.Context, q querier, steps []*store.Step, savepoint bool) (err error) {
	ids, saved, err := writeExecutions(ctx, q, steps, savepoint)
	if saved {
		defer func() {
			if err != nil {
				_, rbErr := q.Exec(ctx, stepRollbackSavepointSQL)
				err = errors.Join(err, rbErr)
			}
		}()
	}
	if err != nil {
		return err
	}

	var delTimers, delTasks pairColumns
	var inputs inputColumns
	var events eventColumns
	var timers timerColumns
	var tasks taskColumns
	for i, s := range steps {
		arn := stepArn(s)
		delTimers.add(arn, s.DeleteTimers)
		delTasks.add(arn, s.DeleteTasks)
		if s.Input != nil {
			inputs.add(ids[i], s.Input)
		}
		for _, ev := range s.Events {
			events.add(ids[i], ev)
		}
		for _, t := range s.AddTimers {
			timers.add(t)
		}
		for _, t := range s.AddTasks {
			tasks.add(t)
		}
	}

	// One round trip: the deletes before the inserts (a timer may be
	// re-armed under its id), the outbox last, so that its lock is held
	// for as short a time as can be.
	b := &pgx.Batch{}
	var ops []string // what each queued statement does, for errors
	queue := func(op, sql string, args ...any) {
		b.Queue(sql, args...)
		ops = append(ops, op)
	}
	if len(delTimers.ids) > 0 {
		queue("delete timers", timerDeletePairsSQL, delTimers.args()...)
	}
	if len(delTasks.ids) > 0 {
		queue("delete tasks", taskDeletePairsSQL, delTasks.args()...)
	}
	if len(inputs.seqs) > 0 {
		queue("insert inputs", inputInsertSQL, inputs.args()...)
	}
	if len(events.ids) > 0 {
		queue("insert events", eventInsertSQL, events.args()...)
	}
	if len(timers.ids) > 0 {
		queue("insert timers", timerInsertSQL, timers.args()...)
	}
	if len(tasks.ids) > 0 {
		queue("insert tasks", taskInsertSQL, tasks.args()...)
	}
	row, hasOutbox := packOutbox(steps)
	outboxAt := -1
	if hasOutbox {
		queue("lock outbox", outboxLockSQL, outboxLockKey)
		outboxAt = len(ops)
		queue("write outbox", outboxInsertSQL, millis(row.createdAt), int64(row.notices), row.body)
	}
	if saved {
		queue("release savepoint", stepReleaseSQL)
	}
	if b.Len() == 0 {
		return nil
	}
	br := q.SendBatch(ctx, b)
	var outboxID int64
	for i, op := range ops {
		if i == outboxAt {
			err = br.QueryRow().Scan(&outboxID)
		} else {
			_, err = br.Exec()
		}
		if err != nil {
			_ = br.Close()
			return fmt.Errorf("%s: %w", op, err)
		}
	}
	if err := br.Close(); err != nil {
		return err
	}
	if hasOutbox {
		setOutboxIDs(steps, outboxID)
	}
	return nil
}

// writeExecutions inserts or updates the execution row of every step that
// has one to write, and returns the ids of all the steps' executions, in
// one round trip, which first sets the savepoint if savepoint is set
// (saved says it was). Most steps leave their execution's row as it was:
// their ids are looked up in one statement, which writes nothing.
func writeExecutions(ctx context.Context, q querier, steps []*store.Step, savepoint bool) (ids []int64, saved bool, err error) {
	ids = make([]int64, len(steps))
	index := make(map[string]int, len(steps))
	var lookups []string
	b := &pgx.Batch{}
	if savepoint {
		b.Queue(stepSavepointSQL)
	}
	for i, s := range steps {
		arn := stepArn(s)
		if arn == "" {
			return nil, false, errors.New("a step with neither Insert, Update nor Input")
		}
		if _, dup := index[arn]; dup {
			return nil, false, fmt.Errorf("execution %s: two steps in one write", arn)
		}
		index[arn] = i
		switch {
		case s.Insert != nil:
			b.Queue(executionInsertIDSQL, executionInsertArgs(s.Insert)...)
		case s.Update != nil:
			p := s.Update
			b.Queue(executionStepUpdateSQL,
				string(p.Status), p.Output, p.Error, p.Cause, millisPtr(p.StopDate), p.LastEventID,
				int64(p.RedriveCount), millisPtr(p.RedriveDate), p.Arn, p.ExpectedVersion)
		default:
			lookups = append(lookups, arn)
		}
	}
	if len(lookups) > 0 {
		b.Queue(executionIDsSQL, lookups)
	}

	br := q.SendBatch(ctx, b)
	if savepoint {
		if _, err := br.Exec(); err != nil {
			_ = br.Close()
			return nil, false, err
		}
		saved = true
	}
	stale := -1 // the first step whose update matched no row
	for i, s := range steps {
		if s.Insert == nil && s.Update == nil {
			continue
		}
		err := br.QueryRow().Scan(&ids[i])
		switch {
		case s.Update != nil && errors.Is(err, pgx.ErrNoRows):
			if stale < 0 {
				stale = i
			}
		case err != nil:
			_ = br.Close()
			if s.Insert != nil {
				return nil, saved, fmt.Errorf("insert execution %s: %w", s.Insert.Arn, err)
			}
			return nil, saved, fmt.Errorf("update execution %s: %w", s.Update.Arn, err)
		}
	}
	if len(lookups) > 0 {
		rows, err := br.Query()
		if err == nil {
			for rows.Next() {
				var id int64
				var arn string
				if err = rows.Scan(&id, &arn); err != nil {
					break
				}
				ids[index[arn]] = id
			}
			rows.Close()
			if err == nil {
				err = rows.Err()
			}
		}
		if err != nil {
			_ = br.Close()
			return nil, saved, err
		}
	}
	if err := br.Close(); err != nil {
		return nil, saved, err
	}
	if stale >= 0 {
		p := steps[stale].Update
		return nil, saved, fmt.Errorf("update execution %s: %w", p.Arn, versionConflict(ctx, q, p.Arn, p.ExpectedVersion))
	}
	for _, arn := range lookups {
		if ids[index[arn]] == 0 {
			return nil, saved, fmt.Errorf("execution %s: %w", arn, pgx.ErrNoRows)
		}
	}
	return ids, saved, nil
}

// stepArn is the ARN of a step's execution ("" if it names none).
func stepArn(s *store.Step) string {
	switch {
	case s.Insert != nil:
		return s.Insert.Arn
	case s.Update != nil:
		return s.Update.Arn
	case s.Input != nil:
		return s.Input.ExecutionArn
	}
	return ""
}
