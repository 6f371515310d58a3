package engine

import (
	"context"

	"stepwise/engine/maprun"
	"stepwise/engine/nested"
	"stepwise/engine/start"
	"stepwise/engine/task"
	"stepwise/interp"
	"stepwise/store"
)

// childHost is the engine as the host of the runners whose tasks start
// executions of their own: a states:startExecution Task's child (package
// nested) and a distributed Map's map runs (package maprun (engine/maprun)). Both
// start, redrive, stop and find their children through it
// (start.Children); the engine says when a child ends (childEnded).
type childHost struct{ e *Engine }

var (
	_ nested.Host    = childHost{}
	_ maprun.Host    = childHost{}
	_ start.Children = childHost{}
)

func (h childHost) Executor() store.Executor { return h.e.store.Executor() }

// Start starts a child through the Starter, as StartExecution starts an
// execution.
func (h childHost) Start(ctx context.Context, r *start.Request) (*store.Execution, error) {
	return h.e.starter.Start(ctx, r)
}

func (h childHost) Redrive(ctx context.Context, arn string) (*store.Execution, error) {
	return h.e.starter.Redrive(ctx, arn)
}

func (h childHost) Stop(ctx context.Context, arn, cause string) error {
	_, err := h.e.StopExecution(ctx, arn, "", cause)
	return err
}

func (h childHost) WaitOn(parentArn, taskID, childArn string) bool {
	h.e.work.taskOnChild(parentArn, taskID, childArn)
	return h.e.work.has(parentArn, taskID)
}

func (h childHost) Ended(childArn string) { h.e.work.childEnded(childArn) }

func (h childHost) Go(fn func(ctx context.Context)) {
	e := h.e
	e.work.stepBegan()
	go func() {
		defer e.work.stepEnded()
		fn(e.ctx)
	}()
}

// Submitted records a parent task's TaskSubmitted (package nested).
func (h childHost) Submitted(ctx context.Context, t *task.Task, output any) {
	_, _ = h.e.applyEvent(ctx, t.ExecutionArn, interp.Event{Kind: interp.TaskSubmitted, ID: t.ID, Output: output})
}

// Context, Tasks and Live are what a map run needs beside its children
// (package maprun (engine/maprun)).
func (h childHost) Context() context.Context { return h.e.ctx }
func (h childHost) Tasks() task.Runner       { return h.e.cfg.Tasks }

// Live says whether an execution runs on this node.
func (h childHost) Live(arn string) bool {
	e := h.e
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.live[arn] != nil
}

// childEnded tells what waits for an execution that ended: its map run,
// the clock's count of work, and the parents of package nested.
func (e *Engine) childEnded(row *store.Execution) {
	if row.MapRunArn != "" {
		e.mapRuns.ChildEnded(row)
	}
	e.work.childEnded(row.Arn)
	e.nested.ChildEnded(row)
	e.waiters.nudge()
}
