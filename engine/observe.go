package engine

import (
	"time"

	"stepwise/engine/maprun"
	"stepwise/history"
	"stepwise/interp"
	"stepwise/store"
)

// Observer learns what the engine does, for metrics and execution logs.
// Its methods are called on the engine's own paths (StepCommitted with the
// execution's lock held): they must be quick, must not block, and must not
// call back into the engine.
type Observer interface {
	// StepCommitted tells of a step of an execution once it is committed
	// (a synchronous EXPRESS execution's steps are never stored: each is
	// told of as it is taken).
	StepCommitted(s *CommittedStep)
	// BatchCommitted tells of one transaction of steps, before any of
	// its steps is told of: committed when err is nil, and then with the
	// IDs the store gave their outbox notices. The slice is the engine's
	// (its elements, and their notices, may be kept).
	BatchCommitted(steps []*store.Step, took time.Duration, err error)
	// Resumed tells of an execution rebuilt from the store when the
	// engine started, and how long its replay took.
	Resumed(executionArn string, took time.Duration)
}

// CommittedStep is a step an Observer is told of. Nothing in it may be
// kept or changed after StepCommitted returns.
type CommittedStep struct {
	// Execution is the execution's row after the step.
	Execution *store.Execution
	// Previous is its status before the step; "" for the start.
	Previous history.ExecutionStatus
	// Redriven says the step is a redrive.
	Redriven bool
	// Express says the execution is an EXPRESS one.
	Express bool
	// Events are the history events the step added.
	Events []*history.Event
	// Task is the task whose start, heartbeat or result the step took,
	// if any.
	Task *interp.TaskRequest
}

// observe tells the observer of a committed step.
func (e *Engine) observe(row *store.Execution, previous history.ExecutionStatus, ev *interp.Event, events []*history.Event, task *interp.TaskRequest) {
	if e.cfg.Observer == nil {
		return
	}
	e.cfg.Observer.StepCommitted(&CommittedStep{
		Execution: row, Previous: previous, Redriven: ev != nil && interp.IsRedrive(ev.Kind),
		Express: isExpressArn(row.Arn), Events: events, Task: task,
	})
}

// Load is what the engine holds now.
type Load struct {
	// Running is the number of executions in memory (running ones whose
	// steps are being taken or awaited).
	Running int
	// PendingTimers is the number of timers armed (Wait states, retry
	// back-offs, timeouts).
	PendingTimers int
	// MapRuns are the distributed Maps' map runs open on this node, the
	// most that may be (AWS's quota) and those waiting for one to end.
	MapRuns maprun.Gauges
}

// Load says what the engine holds now.
func (e *Engine) Load() Load {
	e.mu.Lock()
	running := len(e.live)
	e.mu.Unlock()
	return Load{Running: running, PendingTimers: e.timers.len(), MapRuns: e.mapRuns.Gauges()}
}
