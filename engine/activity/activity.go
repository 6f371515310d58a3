// Package activity is the task runner of activities: a Task state whose
// resource is an activity's ARN waits in a queue until a worker takes it
// (GetActivityTask) and completes it with its task token (SendTask*).
//
// The package holds what an activity's task is apart from the steps of
// its execution: the runner the engine's chooser picks (Runner), which
// owns the queue its tasks wait in: the in-memory queue of a single node
// and its pollers (Queue), or a cluster's in the store (Shared), the pollers'
// loops (Poll on one node, PollShared over the store's queue a cluster's
// nodes share), and the task tokens (Tokens). The hand-out itself, which
// records ActivityStarted as a step of the task's execution before the
// worker gets the task, is the engine's (engine/activity.go), handed to
// the loops as a function.
//
//	Run ─► Runner.Add ─► (a poller) take ─► hand-out: a step ─► the worker has the token
//	                                                                   │
//	                                          SendTask* with the token ◄┘ ─► a step: the task's result
package activity

import (
	"context"

	"stepwise/engine/task"
	"stepwise/interp"
)

// Shared is a cluster's queue of activity tasks, in the store: any
// node's pollers take from it (PollShared).
type Shared interface {
	// Enqueue queues a task; front puts it ahead of the others.
	Enqueue(t *task.Task, front bool)
	// Dequeue drops a task that is no longer wanted.
	Dequeue(executionArn, taskID string)
}

// Runner carries out activity tasks (a task.KindRunner): it queues them,
// on its Queue on a single node, on the Shared queue in a cluster; a
// worker's SendTask* completes them.
type Runner struct {
	Queue  *Queue
	Shared Shared // nil on a single node
}

var _ task.KindRunner = (*Runner)(nil)

// Takes reports whether a task is an activity's.
func (*Runner) Takes(t *task.Task) bool { return interp.IsActivity(t.Request.Resource) }

// Run queues the task; done is never called: the result comes with the
// task's token.
func (r *Runner) Run(_ context.Context, t *task.Task, _ func(task.Result)) { r.Add(t, false) }

// Cancel drops the task from the queue.
func (r *Runner) Cancel(executionArn, taskID string) {
	if r.Shared != nil {
		r.Shared.Dequeue(executionArn, taskID)
		return
	}
	r.Queue.Remove(executionArn, taskID)
}

// Add queues a task for the workers; front puts it ahead of the others
// (one a poller took and gave back).
func (r *Runner) Add(t *task.Task, front bool) {
	if r.Shared != nil {
		r.Shared.Enqueue(t, front)
		return
	}
	r.Queue.Add(t, front)
}
