package engine

import (
	"context"
	"errors"
	"log/slog"
	"runtime"
	"time"

	"stepwise/interp"
	"stepwise/store"
)

// The commit stage: the step's store work is written durably, in a
// transaction the committer shares among the steps of many executions;
// a store that cannot write has the commit retried (see health.go). Only
// then does the live execution move on to the row the step left.

// commitStep commits the store work w of a step of l (on event ev; nil
// for the start), then moves l on to next, the row the step left: the
// replay log's next entry, and the activity tasks a worker holds. l
// (when it is live) is locked. On an error, l is as it was.
func (e *Engine) commitStep(ctx context.Context, l *liveExecution, ev *interp.Event, w *store.Step, next *store.Execution) error {
	if err := e.commit(ctx, l.arn, w); err != nil {
		return err
	}
	l.row = *next
	l.rowID = w.ExecutionID // the store's, now that it is committed
	if ev == nil {
		return nil
	}
	l.seq++
	switch ev.Kind {
	case interp.TaskStarted:
		if l.started == nil {
			l.started = map[string]bool{}
		}
		l.started[ev.ID] = true
	case interp.TaskReleased, interp.TaskSucceeded, interp.TaskFailed:
		delete(l.started, ev.ID)
	}
	return nil
}

// commit writes a step, retrying it while the store cannot write (see
// health.go).
func (e *Engine) commit(ctx context.Context, arn string, w *store.Step) error {
	began := time.Now()
	err := e.commits.commit(ctx, arn, w)
	if err == nil {
		e.health.success(began)
		return nil
	}
	if !errors.Is(err, store.ErrUnavailable) {
		return err
	}
	internal := ctx.Value(internalKey{}) != nil
	e.health.retrying.Add(1)
	defer e.health.retrying.Add(-1)
	ctx = context.WithoutCancel(ctx)
	delay := commitRetryFirst
	giveUp := e.cfg.EvalClock().Add(commitRetryLimit)
	for {
		e.health.failure(err, began, time.Now())
		if !internal && !e.cfg.EvalClock().Before(giveUp) {
			return err
		}
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-e.halted:
			t.Stop()
			return errStopped
		}
		delay = min(2*delay, commitRetryMax)
		began = time.Now()
		if err = e.commits.commit(ctx, arn, w); err == nil {
			e.health.success(began)
			return nil
		}
		if !errors.Is(err, store.ErrUnavailable) {
			return err
		}
	}
}

type commitRequest struct {
	step *store.Step
	arn  string
	done chan error
}

// committer groups the steps of many executions into one transaction,
// written with one StepWrite. A batch holds at most one step of an
// execution (an execution's steps are ordered by its lock, so a second one
// waits for the next batch). When a batch fails, each of its steps is
// retried alone, so one bad step does not fail the others.
type committer struct {
	drv      store.Driver
	maxBatch int
	log      *slog.Logger
	reqs     chan *commitRequest
	observer Observer
}

// maxYields is how many times the committer lets other goroutines run
// before it writes a batch. Steps finish interpreting and ask for a commit
// in bursts (the requests a batch's commit unblocked); yielding once
// gathers about three times as many of them into a transaction, whose
// cost is mostly per transaction (writing its pages to the WAL).
const maxYields = 4

func newCommitter(drv store.Driver, maxBatch int, log *slog.Logger) *committer {
	return &committer{drv: drv, maxBatch: maxBatch, log: log, reqs: make(chan *commitRequest, maxBatch)}
}

// commit writes the step of execution arn durably, in a transaction shared
// with other executions' steps.
func (c *committer) commit(ctx context.Context, arn string, step *store.Step) error {
	req := &commitRequest{step: step, arn: arn, done: make(chan error, 1)}
	select {
	case c.reqs <- req:
	case <-ctx.Done():
		return ctx.Err()
	}
	return <-req.done
}

func (c *committer) run(ctx context.Context) {
	batch := make([]*commitRequest, 0, c.maxBatch)
	steps := make([]*store.Step, 0, c.maxBatch)
	inBatch := make(map[string]bool, c.maxBatch)
	var held *commitRequest // the first of the next batch
	for {
		if held == nil {
			select {
			case <-ctx.Done():
				// Fail whatever is left; Stop waits for steps in flight
				// before cancelling, so normally nothing is.
				for {
					select {
					case req := <-c.reqs:
						req.done <- context.Canceled
					default:
						return
					}
				}
			case held = <-c.reqs:
			}
		}
		batch = append(batch[:0], held)
		clear(inBatch)
		inBatch[held.arn] = true
		held = nil
		yields, before := 0, 0
	fill:
		for len(batch) < c.maxBatch {
			select {
			case more := <-c.reqs:
				if inBatch[more.arn] {
					held = more
					break fill
				}
				inBatch[more.arn] = true
				batch = append(batch, more)
			default:
				// Let the goroutines that are about to ask for a commit
				// run first, as long as that brings more.
				if yields == maxYields || (yields > 0 && len(batch) == before) {
					break fill
				}
				yields, before = yields+1, len(batch)
				runtime.Gosched()
			}
		}
		steps = steps[:0]
		for _, req := range batch {
			steps = append(steps, req.step)
		}
		c.apply(ctx, batch, steps)
	}
}

// apply commits a batch in one transaction, falling back to one
// transaction per step when the batch fails.
func (c *committer) apply(ctx context.Context, batch []*commitRequest, steps []*store.Step) {
	if len(batch) > 1 {
		if err := c.tx(ctx, steps); err == nil {
			for _, req := range batch {
				req.done <- nil
			}
			return
		}
	}
	for i, req := range batch {
		req.done <- c.tx(ctx, steps[i:i+1])
	}
}

// stepsWriter is a store that writes steps in a transaction of their own
// in fewer round trips than Begin, StepWrite and Commit one after the
// other (PostgreSQL's sends the BEGIN with the statements).
type stepsWriter interface {
	WriteSteps(ctx context.Context, steps []*store.Step) error
}

func (c *committer) tx(ctx context.Context, steps []*store.Step) (err error) {
	if c.observer != nil {
		began := time.Now()
		defer func() { c.observer.BatchCommitted(steps, time.Since(began), err) }()
	}
	ctx = context.WithoutCancel(ctx)
	if w, ok := c.drv.(stepsWriter); ok {
		return w.WriteSteps(ctx, steps)
	}
	tx, err := c.drv.Begin(ctx)
	if err != nil {
		return err
	}
	if err := tx.StepWrite(ctx, steps); err != nil {
		return errors.Join(err, tx.Rollback(ctx))
	}
	return tx.Commit(ctx)
}
