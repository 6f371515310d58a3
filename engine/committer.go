package engine

import (
	"context"
	"errors"
	"log/slog"

	"stepwise/store"
)

// A write is the store work of one step, applied inside a transaction.
type write func(ctx context.Context, tx store.ExecutorTx) error

type commitRequest struct {
	w    write
	done chan error
}

// committer groups the writes of many steps into one transaction. A write
// that fails is retried alone, so one bad step does not fail the others.
type committer struct {
	drv      store.Driver
	maxBatch int
	log      *slog.Logger
	reqs     chan *commitRequest
}

func newCommitter(drv store.Driver, maxBatch int, log *slog.Logger) *committer {
	return &committer{drv: drv, maxBatch: maxBatch, log: log, reqs: make(chan *commitRequest, maxBatch)}
}

// commit applies w durably, in a transaction shared with other steps.
func (c *committer) commit(ctx context.Context, w write) error {
	req := &commitRequest{w: w, done: make(chan error, 1)}
	select {
	case c.reqs <- req:
	case <-ctx.Done():
		return ctx.Err()
	}
	return <-req.done
}

func (c *committer) run(ctx context.Context) {
	batch := make([]*commitRequest, 0, c.maxBatch)
	for {
		select {
		case <-ctx.Done():
			// Fail whatever is left; Stop waits for steps in flight before
			// cancelling, so normally nothing is.
			for {
				select {
				case req := <-c.reqs:
					req.done <- context.Canceled
				default:
					return
				}
			}
		case req := <-c.reqs:
			batch = append(batch[:0], req)
		fill:
			for len(batch) < c.maxBatch {
				select {
				case more := <-c.reqs:
					batch = append(batch, more)
				default:
					break fill
				}
			}
			c.apply(ctx, batch)
		}
	}
}

// apply commits a batch in one transaction, falling back to one
// transaction per write when the batch fails.
func (c *committer) apply(ctx context.Context, batch []*commitRequest) {
	if len(batch) > 1 {
		if err := c.tx(ctx, batch); err == nil {
			for _, req := range batch {
				req.done <- nil
			}
			return
		}
	}
	for _, req := range batch {
		req.done <- c.tx(ctx, []*commitRequest{req})
	}
}

func (c *committer) tx(ctx context.Context, batch []*commitRequest) error {
	ctx = context.WithoutCancel(ctx)
	tx, err := c.drv.Begin(ctx)
	if err != nil {
		return err
	}
	for _, req := range batch {
		if err := req.w(ctx, tx); err != nil {
			return errors.Join(err, tx.Rollback(ctx))
		}
	}
	return tx.Commit(ctx)
}
