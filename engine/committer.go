package engine

import (
	"context"
	"errors"
	"log/slog"
	"runtime"
	"time"

	"stepwise/store"
)

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

func (c *committer) tx(ctx context.Context, steps []*store.Step) (err error) {
	if c.observer != nil {
		began := time.Now()
		defer func() { c.observer.BatchCommitted(steps, time.Since(began), err) }()
	}
	ctx = context.WithoutCancel(ctx)
	tx, err := c.drv.Begin(ctx)
	if err != nil {
		return err
	}
	if err := tx.StepWrite(ctx, steps); err != nil {
		return errors.Join(err, tx.Rollback(ctx))
	}
	return tx.Commit(ctx)
}
