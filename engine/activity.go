package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"stepwise/engine/activity"
	"stepwise/engine/task"
	"stepwise/interp"
	"stepwise/jsonvalue"
	"stepwise/store"
)

// SendTaskSuccess completes the task of token with output (JSON text).
// A token it did not make is refused before the output is looked at, as
// AWS does.
func (e *Engine) SendTaskSuccess(ctx context.Context, token, output string) error {
	if _, _, ok := e.tokens.Parse(token); !ok {
		return ErrInvalidToken
	}
	out, err := jsonvalue.ParseString(output)
	if err != nil {
		return &InvalidOutputError{Err: err}
	}
	return e.sendTask(ctx, token, interp.Event{Kind: interp.TaskSucceeded, Output: out})
}

// SendTaskFailure fails the task of token with an error and a cause.
func (e *Engine) SendTaskFailure(ctx context.Context, token, errName, cause string) error {
	return e.sendTask(ctx, token, interp.Event{Kind: interp.TaskFailed, Error: errName, Cause: cause})
}

// SendTaskHeartbeat says the task of token is still being worked on.
func (e *Engine) SendTaskHeartbeat(ctx context.Context, token string) error {
	return e.sendTask(ctx, token, interp.Event{Kind: interp.TaskHeartbeat})
}

func (e *Engine) sendTask(ctx context.Context, token string, ev interp.Event) error {
	arn, id, ok := e.tokens.Parse(token)
	if !ok {
		return ErrInvalidToken
	}
	ev.ID = id
	if err := e.gates.wait(ctx, e.ctx, arn, id); err != nil {
		return err
	}
	// A worker's answer: another node that owns the execution waits
	// for the task's request as this one did (see reqSend).
	applied, err := e.applyEvent(context.WithValue(ctx, sendKey{}, true), arn, ev)
	if err != nil {
		return err
	}
	if !applied {
		return ErrTaskOver
	}
	return nil
}

// ActivityStatus reports an activity's waiting tasks and recent workers
// (the workers that polled this node).
func (e *Engine) ActivityStatus(activityArn string) activity.Status {
	if e.cl != nil {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(e.ctx), 5*time.Second)
		defer cancel()
		n, err := e.cl.Store().ActivityQueued(ctx, activityArn)
		if err != nil {
			e.log.Warn("engine: counting an activity's tasks failed", "activity_arn", activityArn, "error", err)
		}
		return activity.Status{Waiting: n, Workers: e.activities.Workers(activityArn)}
	}
	return e.activities.Status(activityArn)
}

// DefaultActivityPoll is how long GetActivityTask waits, as on AWS.
const DefaultActivityPoll = 60 * time.Second

// GetActivityTask hands the oldest task of an activity to one worker,
// waiting up to DefaultActivityPoll for one.
func (e *Engine) GetActivityTask(ctx context.Context, activityArn, worker string) (*activity.Handout, error) {
	return e.PollActivity(ctx, activityArn, worker, DefaultActivityPoll)
}

// PollActivity hands the oldest task of an activity to one worker, waiting
// up to wait (or until ctx ends) for one; nil when none came. ctx is the
// poller's: it ends when the worker is gone (its connection closed).
//
// # Hand-out
//
// Each task goes to exactly one worker that is still there, and a worker
// that leaves takes no task with it:
//
//	pop ─► lock the execution ─► poller gone? ──yes──► put the task back (nothing recorded)
//	                                   │no
//	                                   ▼
//	        commit TaskStarted (ActivityStarted in the history),
//	        with a context the poller's leaving does not cancel
//	                                   │
//	                                   ▼
//	                             poller gone? ──yes──► commit TaskReleased, put the task back
//	                                   │no
//	                                   ▼
//	                          answer the worker with the token
//
// A task put back goes to the front of the queue. The next worker gets the
// same task and token; handing out a released task commits TaskStarted
// again in the replay log, which writes no second ActivityStarted (the
// history names the first worker) and restarts the heartbeat clock. The
// replay log thus says, after a restart, whether a worker holds each
// started task: one whose last hand-out entry is TaskReleased is queued
// again, the others are left to their workers.
//
// The HTTP layer ends ctx when the worker's connection closes (awsjson
// looks at the connection whenever ctx.Err is called, so a hang-up counts
// from when it arrives, not from when a reader gets to run); nothing says
// whether an answer arrived. A worker that leaves after the last check
// (between it and the answer reaching it: the answer's encoding and write
// here, plus the network) is not seen. Such a task, and one whose release
// a crash or a failed write prevented, stays with the worker as AWS leaves
// it: TimeoutSeconds or HeartbeatSeconds end it.
func (e *Engine) PollActivity(ctx context.Context, activityArn, worker string, wait time.Duration) (*activity.Handout, error) {
	e.activities.Polled(activityArn, worker, e.now())
	if e.cl != nil {
		return e.pollCluster(ctx, activityArn, worker, wait)
	}
	return e.activities.Poll(ctx, activityArn, wait, e.releasePolls, func(t *task.Task) (*activity.Handout, error) {
		return e.handOut(ctx, t, worker)
	})
}

// handOut gives a task taken from the queue to the poller of ctx. It
// returns nil when the task ended meanwhile (its execution stopped, or it
// timed out), or when the poller left (the task is queued again); a task
// whose hand-out failed is queued again too.
func (e *Engine) handOut(ctx context.Context, t *task.Task, worker string) (*activity.Handout, error) {
	if err := e.beginStep(); err != nil {
		e.queueActivity(t, true)
		return nil, err
	}
	defer e.endStep()
	// The hand-out's steps are written even if the poller leaves meanwhile.
	stepCtx := context.WithoutCancel(ctx)
	for range 3 {
		l, err := e.get(stepCtx, t.ExecutionArn)
		var ended *errEnded
		if errors.As(err, &ended) || errors.Is(err, store.ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			e.queueActivity(t, true)
			return nil, err
		}
		l.mu.Lock()
		if l.gone {
			l.mu.Unlock()
			continue
		}
		task, err := e.handOutLocked(ctx, stepCtx, l, t, worker)
		l.mu.Unlock()
		return task, err
	}
	e.queueActivity(t, true)
	return nil, fmt.Errorf("execution %s: could not be loaded", t.ExecutionArn)
}

// handOutLocked is handOut with the task's execution locked.
func (e *Engine) handOutLocked(ctx, stepCtx context.Context, l *liveExecution, t *task.Task, worker string) (*activity.Handout, error) {
	if l.tasks[t.ID] == nil {
		return nil, nil // the task ended
	}
	if ctx.Err() != nil {
		e.queueActivity(t, true)
		return nil, nil
	}
	ev := interp.Event{Kind: interp.TaskStarted, ID: t.ID, WorkerName: worker}
	if l.released[t.ID] {
		if err := e.recordLocked(stepCtx, l, ev); err != nil {
			e.queueActivity(t, true)
			return nil, fmt.Errorf("hand out task again: %w", err)
		}
		delete(l.released, t.ID)
	} else {
		_, applied, err := e.stepLocked(stepCtx, l, ev)
		if err != nil {
			// The execution is dropped: reloading it queues the task
			// too, which the queue takes once.
			e.queueActivity(t, true)
			return nil, err
		}
		if !applied {
			return nil, nil // a worker holds it: a copy queued by a reload
		}
	}
	if ctx.Err() != nil {
		e.release(stepCtx, l, t)
		return nil, nil
	}
	return &activity.Handout{Token: t.Request.Token, Input: jsonvalue.String(t.Request.Parameters)}, nil
}

// release undoes the hand-out of a task whose poller left before it was
// answered: TaskReleased in the replay log, and the task back at the front
// of the queue. l.mu is held.
func (e *Engine) release(ctx context.Context, l *liveExecution, t *task.Task) {
	if err := e.recordLocked(ctx, l, interp.Event{Kind: interp.TaskReleased, ID: t.ID}); err != nil {
		// The store still says a worker holds the task: it is left to
		// its timeouts, as one whose worker crashed.
		e.log.ErrorContext(ctx, "engine: release of an activity task not recorded",
			"execution_arn", l.arn, "task_id", t.ID, "error", err)
		return
	}
	if l.released == nil {
		l.released = map[string]bool{}
	}
	l.released[t.ID] = true
	e.queueActivity(t, true)
}

// recordLocked runs one step with an event that writes no history event
// (a hand-out of a released task, a release), which stepLocked would leave
// out as not awaited: its replay log entry, and the heartbeat timer it
// starts or cancels, are written all the same. l.mu is held.
func (e *Engine) recordLocked(ctx context.Context, l *liveExecution, ev interp.Event) error {
	now := e.now()
	if now.Before(l.row.StartDate) {
		now = l.row.StartDate
	}
	events, cmds, err := l.x.Step(ev, now)
	if err != nil {
		e.drop(l)
		return err
	}
	return e.commitLocked(ctx, l, now, ev, events, cmds)
}

// ReleasePolls answers every GetActivityTask poll waiting now, and every
// later one that finds no task at once, with no task, as a poll that timed
// out is answered. A server calls it when it shuts down: its workers are
// not held until their polls time out, and poll again (reaching the
// server once it is back).
func (e *Engine) ReleasePolls() {
	e.releasePollsOnce.Do(func() { close(e.releasePolls) })
}

// mocked completes a task with its mocked result. A task whose result
// comes later on AWS (.sync, .waitForTaskToken) has its request recorded
// as submitted first, as the call it stands for would have.
func (e *Engine) mocked(ctx context.Context, t *task.Task, res task.Result, done func(task.Result)) {
	if r := t.Request.Resource; strings.HasSuffix(r, ".sync") || strings.HasSuffix(r, ".sync:2") || strings.HasSuffix(r, ".waitForTaskToken") {
		_, _ = e.applyEvent(ctx, t.ExecutionArn, interp.Event{Kind: interp.TaskSubmitted, ID: t.ID, Output: jsonvalue.NewObject(0)})
	}
	done(res)
}
