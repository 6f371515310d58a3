package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"stepwise/engine/activity"
	"stepwise/engine/internal/node"
	"stepwise/engine/task"
	"stepwise/store"
)

// Activity tasks in a cluster: queued in the store, taken by any node's
// pollers, handed out by their execution's owner.

// queueActivity queues an activity task for a worker, front ahead of
// the others (one a poller took and gave back): on the activity runner's
// queue.
func (e *Engine) queueActivity(t *task.Task, front bool) { e.activity.Add(t, front) }

// sharedQueue is a cluster's queue of activity tasks, in the store (see
// node.EnqueueLoop): the activity runner's queue in a cluster.
//
// A task of this node's executions (the node queues only those) goes
// straight to a poller of this node that waits for the activity, when
// one does: no other node can take it then, as it is not in the store's
// queue, and the hand-out, the execution's step, is written as any
// other before the worker gets the task. Should the node die first, the
// task is in no queue, as one not yet written to it: the execution's
// next owner queues the tasks no worker holds as it loads it.
type sharedQueue struct {
	cl    *node.Node
	local *activity.Queue // this node's pollers
	log   *slog.Logger
	ctx   func() context.Context // the engine's
}

func (q sharedQueue) Enqueue(t *task.Task, front bool) {
	q.put(t.Request.Resource, t.ExecutionArn, t.ID, front)
}

// put gives a task to a poller of this node waiting for its activity, or
// queues it in the store.
func (q sharedQueue) put(activityArn, arn, id string, front bool) {
	if q.local.GiveShared(activityArn, arn, id) {
		return
	}
	q.cl.Enqueue(store.QueuedTask{ActivityArn: activityArn, ExecutionArn: arn, TaskID: id, Owner: q.cl.ID(), Front: front})
}

// Dequeue removes a task that is no longer wanted from the queue.
func (q sharedQueue) Dequeue(arn, id string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(q.ctx()), 5*time.Second)
	defer cancel()
	// One left behind is taken by a poller, and found ended.
	if err := q.cl.Store().ActivityDequeue(ctx, arn, id); err != nil {
		q.log.Warn("engine: an ended activity task was not removed from the queue", "execution_arn", arn, "task_id", id, "error", err)
	}
}

// pollCluster is PollActivity in a cluster: tasks come from the store's
// queue, whichever node's execution they are of.
func (e *Engine) pollCluster(ctx context.Context, activityArn, worker string, wait time.Duration) (*activity.Handout, error) {
	take := func() (string, string, bool) {
		// The take is not cut short by the poller leaving: a row
		// deleted while the poller's call was cancelled would be a task
		// no one has (the sweep would queue it again, but later).
		tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		return e.takes.take(activityArn, func(n int) []store.QueuedTask {
			tasks, err := e.cl.Store().ActivityTakeMany(tctx, activityArn, e.cl.ID(), n)
			if err != nil && ctx.Err() == nil {
				e.log.Warn("engine: taking an activity task failed", "activity_arn", activityArn, "error", err)
			}
			return tasks
		})
	}
	return e.activities.PollShared(ctx, activityArn, wait, e.cl.ActivityPoll(), e.releasePolls, take,
		func(arn, id string) (*activity.Handout, error) {
			return e.handOutAnywhere(ctx, activityArn, arn, id, worker)
		},
		func(arn, id string) { e.activity.Shared.(sharedQueue).put(activityArn, arn, id, true) })
}

// handOutAnywhere hands a task taken from the store's queue to the poller
// of ctx: here when this node owns its execution, through its owner
// otherwise. nil when the task ended meanwhile, or the poller left.
func (e *Engine) handOutAnywhere(ctx context.Context, activityArn, arn, id, worker string) (*activity.Handout, error) {
	if err := e.beginStep(); err != nil {
		e.requeue(activityArn, arn, id)
		return nil, err
	}
	defer e.endStep()
	stepCtx := context.WithoutCancel(ctx)
	for try := range maxReroutes {
		if try > 0 && !e.rerouteWait(try) {
			break
		}
		l, err := e.get(stepCtx, arn)
		var ended *errEnded
		var elsewhere *ownedElsewhere
		switch {
		case errors.As(err, &ended) || errors.Is(err, store.ErrNotFound):
			return nil, nil
		case errors.As(err, &elsewhere):
			a, err := e.ask(stepCtx, elsewhere.node, &node.Request{Kind: node.ReqHandOut, Arn: arn, Task: id, Worker: worker})
			if errors.Is(err, errMoved) {
				continue
			}
			if err != nil {
				e.requeue(activityArn, arn, id)
				return nil, err
			}
			if !a.Handed {
				return nil, nil
			}
			if ctx.Err() != nil {
				e.releaseAnywhere(stepCtx, arn, id)
				return nil, nil
			}
			return &activity.Handout{Token: a.Token, Input: a.Input}, nil
		case err != nil:
			e.requeue(activityArn, arn, id)
			return nil, err
		}
		l.mu.Lock()
		if l.gone {
			l.mu.Unlock()
			continue
		}
		r := l.tasks[id]
		if r == nil {
			l.mu.Unlock()
			return nil, nil
		}
		t := l.task(id, r)
		task, err := e.handOutLocked(ctx, stepCtx, l, t, worker)
		l.mu.Unlock()
		return task, err
	}
	e.requeue(activityArn, arn, id)
	return nil, fmt.Errorf("execution %s: its owner could not be reached", arn)
}

// releaseAnywhere undoes the hand-out of a task whose poller left before
// it got it, on the task's owner wherever that is now.
func (e *Engine) releaseAnywhere(ctx context.Context, arn, id string) {
	var err error
	for try := range maxReroutes {
		if try > 0 && !e.rerouteWait(try) {
			break
		}
		l, gerr := e.get(ctx, arn)
		var elsewhere *ownedElsewhere
		switch {
		case errors.As(gerr, &elsewhere):
			_, err = e.ask(ctx, elsewhere.node, &node.Request{Kind: node.ReqRelease, Arn: arn, Task: id})
			if errors.Is(err, errMoved) {
				continue
			}
		case gerr != nil:
			err = gerr
		default:
			l.mu.Lock()
			if r := l.tasks[id]; r != nil && !l.gone {
				e.release(ctx, l, l.task(id, r))
			}
			gone := l.gone
			l.mu.Unlock()
			if gone {
				continue
			}
		}
		break
	}
	var ended *errEnded
	if err != nil && !errors.As(err, &ended) && !errors.Is(err, store.ErrNotFound) {
		// The task is left to its timeouts, as one whose worker crashed.
		e.log.Warn("engine: release of an activity task not recorded", "execution_arn", arn, "task_id", id, "error", err)
	}
}

// requeue puts a task whose hand-out failed back in the store's queue,
// ahead of the others.
func (e *Engine) requeue(activityArn, arn, id string) {
	e.cl.Enqueue(store.QueuedTask{ActivityArn: activityArn, ExecutionArn: arn, TaskID: id, Owner: e.cl.ID(), Front: true})
}

// takeGroups gathers the takes of a node's pollers of each activity: a
// take asked for while another is in flight waits for it, then all those
// that waited are taken together, a task for each in one transaction
// (one WAL flush where each take would wait for its own).
type takeGroups struct {
	mu sync.Mutex
	by map[string]*takeGroup // activity ARN → takes waiting, while one is in flight
}

type takeGroup struct {
	waiting []chan takeResult // the first leads the next take
}

// takeResult is a poller's share of a take: a task (ok), none, or lead:
// the poller is to take for those waiting, itself among them.
type takeResult struct {
	arn, id  string
	ok, lead bool
}

// take takes a task of activity for one poller, with the next take of
// the activity's pollers: takeMany(n) takes up to n tasks.
func (g *takeGroups) take(activity string, takeMany func(n int) []store.QueuedTask) (string, string, bool) {
	ch := make(chan takeResult, 1)
	g.mu.Lock()
	if g.by == nil {
		g.by = map[string]*takeGroup{}
	}
	grp := g.by[activity]
	lead := grp == nil
	if lead {
		grp = &takeGroup{}
		g.by[activity] = grp
	}
	grp.waiting = append(grp.waiting, ch)
	g.mu.Unlock()
	if !lead {
		// Every take waiting gets an answer: a task taken for a poller
		// that left is the hand-out's to put back.
		if r := <-ch; !r.lead {
			return r.arn, r.id, r.ok
		}
	}
	g.mu.Lock()
	batch := grp.waiting
	grp.waiting = nil
	g.mu.Unlock()
	tasks := takeMany(len(batch))
	g.mu.Lock()
	if len(grp.waiting) > 0 {
		grp.waiting[0] <- takeResult{lead: true} // those that came meanwhile
	} else {
		delete(g.by, activity)
	}
	g.mu.Unlock()
	for i, c := range batch {
		if i < len(tasks) {
			c <- takeResult{arn: tasks[i].ExecutionArn, id: tasks[i].TaskID, ok: true}
		} else {
			c <- takeResult{}
		}
	}
	r := <-ch
	return r.arn, r.id, r.ok
}
