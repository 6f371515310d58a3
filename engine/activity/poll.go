package activity

import (
	"context"
	"time"

	"stepwise/engine/task"
)

// Handout is an activity task handed to a worker: its token and its input
// (JSON text).
type Handout struct {
	Token string
	Input string
}

// Poll hands the oldest task of activity arn in q to the worker polling
// with ctx, waiting up to wait for one, or until released is closed (the
// server shuts down); nil when none came. handOut records the hand-out as
// a step of the task's execution: nil when the task ended meanwhile or
// went back to the queue (the poller left), and the loop takes the next.
// An error with the poller gone is no one's to hear: nil.
//
// While it waits, a step that schedules a task of the activity may hand
// the task to the poller (worker) in that step (Claim): given is then
// called with the task, whose hand-out is committed.
func (q *Queue) Poll(ctx context.Context, arn, worker string, wait time.Duration, released <-chan struct{},
	handOut, given func(t *task.Task) (*Handout, error)) (*Handout, error) {
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	for ctx.Err() == nil {
		t, ready := q.popDirect(arn, worker, ctx)
		if t == nil {
			select {
			case <-ready:
				if t := q.given(ready); t != nil {
					return given(t)
				}
				continue
			case <-deadline.C:
			case <-ctx.Done():
			case <-released:
			}
			if t := q.unwaitDirect(arn, ready); t != nil {
				return given(t)
			}
			return nil, nil
		}
		h, err := handOut(t)
		if err != nil && ctx.Err() != nil {
			return nil, nil // the worker is gone: there is no one to tell
		}
		if h != nil || err != nil {
			return h, err
		}
		// The task ended meanwhile, or went back to the queue.
	}
	return nil, nil
}

// PollShared is Poll over the queue a cluster's nodes share, in the
// store: take takes a task of the activity from it (false when there is
// none), and handOut hands it out, wherever its execution is. q only
// wakes the poller: when tasks are queued (Wake), and every interval it
// looks again without a wake-up; or it gives the poller a task of this
// node's (GiveShared), which the poller hands out, or gives back with giveBack
// when it does not need it (it took another, or it stops waiting).
func (q *Queue) PollShared(ctx context.Context, arn string, wait, interval time.Duration, released <-chan struct{},
	take func() (executionArn, taskID string, ok bool), handOut func(executionArn, taskID string) (*Handout, error),
	giveBack func(executionArn, taskID string)) (*Handout, error) {
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for ctx.Err() == nil {
		ready := q.Listen(arn)
		executionArn, id, ok := take()
		if ok {
			if g, given := q.Unlisten(arn, ready); given {
				giveBack(g.ExecutionArn, g.TaskID)
			}
		} else {
			var g Handed
			select {
			case <-ready:
				g, ok = q.Received(ready)
			case <-tick.C:
				g, ok = q.Unlisten(arn, ready)
			case <-deadline.C:
				return nil, q.stop(arn, ready, giveBack)
			case <-ctx.Done():
				return nil, q.stop(arn, ready, giveBack)
			case <-released:
				return nil, q.stop(arn, ready, giveBack)
			}
			if !ok {
				continue
			}
			executionArn, id = g.ExecutionArn, g.TaskID
		}
		h, err := handOut(executionArn, id)
		if err != nil && ctx.Err() != nil {
			return nil, nil // the worker is gone: there is no one to tell
		}
		if h != nil || err != nil {
			return h, err
		}
	}
	return nil, nil
}

// stop withdraws a poller of a cluster's queue that stops waiting, and
// gives back the task it was given meanwhile, if any.
func (q *Queue) stop(arn string, ready chan struct{}, giveBack func(executionArn, taskID string)) error {
	if g, given := q.Unlisten(arn, ready); given {
		giveBack(g.ExecutionArn, g.TaskID)
	}
	return nil
}
