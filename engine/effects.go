package engine

import (
	"errors"
	"sync"
	"time"

	"stepwise/engine/task"
	"stepwise/history"
	"stepwise/interp"
	"stepwise/store"
)

// The effects stage: once a step is committed, its commands are carried
// out: timers armed in the timer queue or removed from it, tasks
// dispatched to their runner (chosen in dispatch.go) or cancelled, and a
// child's end told to its parent. What comes back (a timer firing, a
// task's result) is an outside event: a step of its own, from the top of
// the step loop (apply).

// after carries out a committed step's commands; l.mu is held. An
// execution the step ended lets go of its timers and tasks here; the step
// loop then drops it from the live executions.
func (e *Engine) after(l *liveExecution, ev *interp.Event, cmds []interp.Command) {
	if ev != nil {
		switch ev.Kind {
		case interp.TimerFired:
			delete(l.timers, ev.ID)
		case interp.TaskSucceeded, interp.TaskFailed:
			delete(l.tasks, ev.ID)
			e.work.taskEnded(l.arn, ev.ID)
		}
	}
	running := l.x.Status == history.StatusRunning
	for _, c := range cmds {
		switch c.Kind {
		case interp.StartTimer:
			if running {
				l.timers[c.ID] = c.At
				e.timers.add(l.arn, c.ID, c.At)
			}
		case interp.CancelTimer:
			delete(l.timers, c.ID)
			e.timers.remove(l.arn, c.ID)
		case interp.RunTask:
			if running {
				l.tasks[c.ID] = c.Task
				e.work.taskRunning(l.arn, c.ID)
				if cl, ok := l.direct[c.ID]; ok {
					// Handed out in the step: its poller gets it.
					delete(l.direct, c.ID)
					e.activities.Give(cl.d, l.task(c.ID, c.Task))
				} else {
					e.dispatch(&l.row, c.ID, c.Task, nil, false)
				}
			}
		case interp.CancelTask:
			// A kill (c.Kill) stops the work itself (task.Killer: a
			// local function's process group is killed); a cancel
			// drops the result, each runner stopping what it can (a
			// .sync job's stop call made, an activity's task taken
			// from the queue, a child execution stopped).
			delete(l.tasks, c.ID)
			delete(l.started, c.ID)
			delete(l.released, c.ID)
			e.work.taskEnded(l.arn, c.ID)
			if k, ok := e.cfg.Tasks.(task.Killer); ok && c.Kill {
				k.Kill(l.arn, c.ID)
			} else {
				e.cfg.Tasks.Cancel(l.arn, c.ID)
			}
			e.gates.release(l.arn, c.ID)
		}
	}
	if len(l.direct) > 0 {
		e.unclaim(l) // not run after all
	}
	if !running {
		row := l.row
		e.childEnded(&row)
		for id := range l.timers {
			e.timers.remove(l.arn, id)
		}
		for id := range l.tasks {
			e.work.taskEnded(l.arn, id)
			e.cfg.Tasks.Cancel(l.arn, id)
			e.gates.release(l.arn, id)
		}
		l.timers, l.tasks = map[string]time.Time{}, map[string]*interp.TaskRequest{}
	}
}

// dispatch hands a task to the task runner; its result becomes a step.
// The token calls of a .waitForTaskToken task are held back until the
// runner's first result is applied (or the task is cancelled). submitted
// is the service's answer the task's TaskSubmitted recorded before a
// restart (nil when none); resumed says the task is dispatched again
// after a restart or a takeover (Task.Resumed).
func (e *Engine) dispatch(row *store.Execution, id string, req *interp.TaskRequest, submitted any, resumed bool) {
	arn := row.Arn
	if isCallback(req) {
		e.gates.hold(arn, id)
	}
	tk := &task.Task{ExecutionArn: arn, ID: id, Request: req, StateMachineArn: row.StateMachineArn, TestCase: row.TestCase, Submitted: submitted, Resumed: resumed,
		ExecutionStart: row.StartDate.Truncate(time.Millisecond)}
	if e.cfg.TaskTrace != nil {
		tk.TraceParent = e.cfg.TaskTrace(row, req)
	}
	// The TaskStarted step of a request being sent, applied before the
	// task's result (which waits for it) so the history keeps its order.
	var (
		startMu sync.Mutex
		started chan struct{}
	)
	tk.Started = func() {
		startMu.Lock()
		defer startMu.Unlock()
		if started != nil {
			return
		}
		started = make(chan struct{})
		go func(ch chan struct{}) {
			defer close(ch)
			if _, err := e.apply(e.ctx, arn, interp.Event{Kind: interp.TaskStarted, ID: id}); err != nil && !errors.Is(err, errStopped) {
				e.log.ErrorContext(e.ctx, "engine: task started step failed", "execution_arn", arn, "task_id", id, "error", err)
			}
		}(started)
	}
	startedStep := func() chan struct{} {
		startMu.Lock()
		defer startMu.Unlock()
		return started
	}
	e.cfg.Tasks.Run(e.ctx, tk, func(r task.Result) {
		if r.Waiting {
			e.gates.release(arn, id)
			return
		}
		ev := interp.Event{Kind: interp.TaskSucceeded, ID: id, Output: r.Output}
		switch {
		case r.Failure != nil:
			ev = interp.Event{Kind: interp.TaskFailed, ID: id, Error: r.Failure.Name, Cause: r.Failure.Cause}
		case r.Submitted:
			ev.Kind = interp.TaskSubmitted
		}
		if !r.Submitted {
			e.work.taskAnswered(arn, id)
		}
		go func() {
			if ch := startedStep(); ch != nil {
				<-ch
			}
			_, err := e.apply(e.ctx, arn, ev)
			if r.Recorded != nil {
				r.Recorded(err)
			}
			e.gates.release(arn, id)
			if err != nil && !errors.Is(err, errStopped) {
				e.log.ErrorContext(e.ctx, "engine: task result step failed", "execution_arn", arn, "task_id", id, "error", err)
			}
		}()
	})
}
