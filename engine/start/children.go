package start

import (
	"context"

	"stepwise/store"
)

// Children is what a task runner whose tasks start executions of their
// own (a states:startExecution Task's child, a map run's children) asks
// of the engine: the one host of package nested and package maprun (engine/maprun).
//
//	Start ─► the child runs ─► the engine's ChildEnded ─► the runner answers the parent's task
//	  │                                       ▲
//	  └─ WaitOn: the parent's task waits on   └─ Ended: a child the runner found ended already
//	     the child's work, not the outside
type Children interface {
	// Executor reads the store: a child is found by its name (its ARN,
	// ExecutionGet), a map run's by its map run (ExecutionList).
	Executor() store.Executor
	// Start starts a child through the Starter, durably (its first step
	// committed), and returns its row: an *ExistsError when its ARN is
	// taken; task.ErrStopped when the engine is stopping.
	Start(ctx context.Context, r *Request) (*store.Execution, error)
	// Redrive redrives a child that did not succeed.
	Redrive(ctx context.Context, arn string) (*store.Execution, error)
	// Stop stops a child with cause.
	Stop(ctx context.Context, arn, cause string) error
	// WaitOn says the parent's task waits on a child's work now (not on
	// the outside), and reports whether the task is still wanted.
	WaitOn(parentArn, taskID, childArn string) bool
	// Ended says a child the parent's task waited on no longer works for
	// it (it ended before it was watched, or the run is over): the task
	// waits on the outside until its result is applied.
	Ended(childArn string)
	// Go runs fn on a goroutine of its own as work the clock waits for
	// (a start, a stop, a row's write): it does not skip ahead meanwhile.
	// fn's context is the engine's, done when it stops.
	Go(fn func(ctx context.Context))
}
