// Package activity is the task runner of activities: a Task state whose
// resource is an activity's ARN waits in a queue until a worker takes it
// (GetActivityTask) and completes it with its task token (SendTask*).
//
// The package holds what an activity's task is apart from the steps of
// its execution: the runner the engine's chooser picks (Runner), the
// in-memory queue of a single node and its pollers (Queue), the pollers'
// loops (Poll on one node, PollShared over the store's queue a cluster's
// nodes share), and the task tokens (Tokens). The hand-out itself, which
// records ActivityStarted as a step of the task's execution before the
// worker gets the task, is the engine's (engine/activity.go), handed to
// the loops as a function.
//
//	Run ─► Backlog.Add ─► (a poller) take ─► hand-out: a step ─► the worker has the token
//	                                                                   │
//	                                          SendTask* with the token ◄┘ ─► a step: the task's result
package activity

import (
	"context"

	"stepwise/engine/task"
	"stepwise/interp"
)

// Backlog is where a runner queues its tasks for the workers: the Queue
// of a single node, or the store's queue of a cluster.
type Backlog interface {
	// Add queues a task; front puts it ahead of the others.
	Add(t *task.Task, front bool)
	// Remove drops a task that is no longer wanted.
	Remove(executionArn, taskID string)
}

// Runner carries out activity tasks (a task.KindRunner): it queues them;
// a worker's SendTask* completes them.
type Runner struct{ Backlog Backlog }

var _ task.KindRunner = Runner{}

// Takes reports whether a task is an activity's.
func (Runner) Takes(t *task.Task) bool { return interp.IsActivity(t.Request.Resource) }

// Run queues the task; done is never called: the result comes with the
// task's token.
func (r Runner) Run(_ context.Context, t *task.Task, _ func(task.Result)) { r.Backlog.Add(t, false) }

// Cancel drops the task from the queue.
func (r Runner) Cancel(executionArn, taskID string) { r.Backlog.Remove(executionArn, taskID) }
