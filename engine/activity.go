package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"stepwise/engine/activity"
	"stepwise/engine/task"
	"stepwise/history"
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
// A task scheduled while a worker polls for it skips the queue: the step
// that schedules it claims the poller and writes TaskStarted with the
// scheduling (one step, one replay log entry that lists the hand-out; see
// claimPollers), and the poller is answered once that step is committed,
// or, if it left meanwhile, the hand-out is released as above.
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
	return e.activities.Poll(ctx, activityArn, worker, wait, e.releasePolls, func(t *task.Task) (*activity.Handout, error) {
		return e.handOut(ctx, t, worker)
	}, func(t *task.Task) (*activity.Handout, error) {
		return e.handedOut(ctx, t)
	})
}

// handedOut answers the poller of ctx with a task a step handed it as it
// scheduled the task (see claimPollers): its hand-out is committed. A
// poller that left meanwhile gets nothing, and the hand-out is undone
// (TaskReleased) as handOut undoes it.
func (e *Engine) handedOut(ctx context.Context, t *task.Task) (*activity.Handout, error) {
	if ctx.Err() == nil {
		return &activity.Handout{Token: t.Request.Token, Input: jsonvalue.String(t.Request.Parameters)}, nil
	}
	if err := e.beginStep(); err != nil {
		return nil, nil // the store still says a worker holds it: its timeouts end it
	}
	defer e.endStep()
	stepCtx := context.WithoutCancel(ctx)
	for range 3 {
		l, err := e.get(stepCtx, t.ExecutionArn)
		if err != nil {
			return nil, nil // ended, or reloaded later with the task held: its timeouts end it
		}
		l.mu.Lock()
		if l.gone {
			l.mu.Unlock()
			continue
		}
		if l.tasks[t.ID] != nil && l.started[t.ID] {
			e.release(stepCtx, l, t)
		}
		l.mu.Unlock()
		return nil, nil
	}
	return nil, nil
}

// claimPollers hands the activity tasks a step schedules to workers
// already polling for them, in the same step: for each such task it
// claims a poller and takes the task's TaskStarted step at once, so the
// step's history holds the task's scheduling and its start, and its
// replay log entry (en, made before those steps) the hand-outs. The
// pollers are given their tasks once the step is committed (after); a
// step that fails lets them wait on. A task no one polls for is queued
// as ever. Only a single node's queue hands out so (a cluster's is in the
// store). l.mu is held.
func (e *Engine) claimPollers(l *liveExecution, now time.Time, ev *interp.Event, events []*history.Event, cmds []interp.Command) (*entry, []*history.Event, []interp.Command, error) {
	if e.cl != nil || l.x.Status != history.StatusRunning {
		return nil, events, cmds, nil
	}
	var en *entry
	for i, n := 0, len(cmds); i < n; i++ {
		c := cmds[i]
		if c.Kind != interp.RunTask || !interp.IsActivity(c.Task.Resource) || !e.cfg.Tasks.(*chooser).takes(e.activity, l.task(c.ID, c.Task)) {
			continue
		}
		d := e.activities.Claim(c.Task.Resource)
		if d == nil {
			continue
		}
		if en == nil {
			en = stepEntry(l.x, ev)
			events, cmds = slices.Clip(events), slices.Clip(cmds)
		}
		h := handedOut{ID: c.ID, Worker: d.Worker}
		more, moreCmds, err := l.x.Step(h.startedEvent(), now)
		if l.direct == nil {
			l.direct = map[string]claimed{}
		}
		l.direct[c.ID] = claimed{d: d, activityArn: c.Task.Resource}
		if err != nil {
			e.unclaim(l)
			e.drop(l) // the in-memory state is ahead of the store
			return nil, nil, nil, err
		}
		events, cmds = append(events, more...), append(cmds, moreCmds...)
		en.Started = append(en.Started, h)
	}
	return en, events, cmds, nil
}

// unclaim lets the pollers a step of l claimed wait on: the step failed.
// l.mu is held.
func (e *Engine) unclaim(l *liveExecution) {
	for _, c := range l.direct {
		e.activities.Unclaim(c.activityArn, c.d)
	}
	l.direct = nil
}

// claimed is a poller a step claimed for a task of an activity.
type claimed struct {
	d           *activity.Direct
	activityArn string
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
