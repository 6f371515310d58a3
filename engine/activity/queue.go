package activity

import (
	"context"
	"slices"
	"sync"
	"time"

	"stepwise/engine/task"
)

// Queue holds the activity tasks waiting for a worker on a single node
// (a cluster's wait in the store), per activity ARN, and the pollers
// waiting for one. A task is queued at most once: a task queued again
// (its execution reloaded while a hand-out put it back) keeps its place.
type Queue struct {
	mu      sync.Mutex
	pending map[string][]*task.Task    // activity ARN → tasks, oldest first
	queued  map[taskKey]bool           // the tasks in pending
	waiters map[string][]chan struct{} // activity ARN → pollers to wake
	handed  map[chan struct{}]Handed   // pollers of a cluster's queue woken with a task of their own (GiveShared)
	seen    map[string][]WorkerSeen    // activity ARN → recent workers, latest first
	// direct are the waiting pollers (Poll's) a step may hand a task to
	// as it schedules it, by their wake-up channel (see Claim).
	direct map[chan struct{}]*Direct
}

// Direct is a poller waiting for a task of an activity, which a step that
// schedules a task of the activity may claim (Claim): the step records
// the hand-out with the scheduling, then gives the poller the task (Give)
// once that is committed, or lets it wait on (Unclaim).
type Direct struct {
	// Worker is the poller's worker name.
	Worker string
	ctx    context.Context
	ch     chan struct{} // its wake-up, in waiters while it waits
	state  directState
	task   *task.Task    // given
	settle chan struct{} // closed when a claim is settled (given or unclaimed)
}

type directState int

const (
	directWaiting directState = iota
	directClaimed
	directGiven
)

// maxWorkersSeen is how many recent workers an activity remembers.
const maxWorkersSeen = 20

// WorkerSeen is a worker that polled an activity: its name (as it gave it
// to GetActivityTask) and when it last polled.
type WorkerSeen struct {
	Name     string
	LastPoll time.Time
}

// Status is what an activity has now: the tasks waiting for a
// worker, and the workers that polled it lately (latest first).
type Status struct {
	Waiting int
	Workers []WorkerSeen
}

// Polled remembers a worker polling an activity.
func (q *Queue) Polled(arn, worker string, at time.Time) {
	q.mu.Lock()
	defer q.mu.Unlock()
	list := q.seen[arn]
	for i, w := range list {
		if w.Name == worker {
			list = append(list[:i:i], list[i+1:]...)
			break
		}
	}
	list = append([]WorkerSeen{{Name: worker, LastPoll: at}}, list...)
	if len(list) > maxWorkersSeen {
		list = list[:maxWorkersSeen]
	}
	q.seen[arn] = list
}

// taskKey names a task: its execution's ARN and its id.
type taskKey struct{ arn, id string }

// NewQueue returns an empty queue.
func NewQueue() *Queue {
	return &Queue{pending: map[string][]*task.Task{}, queued: map[taskKey]bool{}, waiters: map[string][]chan struct{}{}, seen: map[string][]WorkerSeen{}, handed: map[chan struct{}]Handed{},
		direct: map[chan struct{}]*Direct{}}
}

// Add queues a task behind the others, or with front ahead of them: one
// a poller took and gave back, which was waiting longest.
func (q *Queue) Add(t *task.Task, front bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	k := taskKey{t.ExecutionArn, t.ID}
	if q.queued[k] {
		return
	}
	q.queued[k] = true
	arn := t.Request.Resource
	if front {
		q.pending[arn] = append([]*task.Task{t}, q.pending[arn]...)
	} else {
		q.pending[arn] = append(q.pending[arn], t)
	}
	if w := q.waiters[arn]; len(w) > 0 {
		close(w[0])
		q.waiters[arn] = w[1:]
	}
}

// Remove drops a task that is no longer wanted.
func (q *Queue) Remove(executionArn, id string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	k := taskKey{executionArn, id}
	if !q.queued[k] {
		return
	}
	delete(q.queued, k)
	for arn, ts := range q.pending {
		for i, t := range ts {
			if t.ExecutionArn == executionArn && t.ID == id {
				q.pending[arn] = append(ts[:i:i], ts[i+1:]...)
				return
			}
		}
	}
}

// Pop takes the oldest task of an activity, or returns a channel closed
// when one may have arrived.
func (q *Queue) Pop(arn string) (*task.Task, <-chan struct{}) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.popLocked(arn)
}

// popDirect is Pop for a poller a step may claim: worker and ctx are the
// poller's.
func (q *Queue) popDirect(arn, worker string, ctx context.Context) (*task.Task, chan struct{}) {
	q.mu.Lock()
	defer q.mu.Unlock()
	t, ch := q.popLocked(arn)
	if ch != nil {
		q.direct[ch] = &Direct{Worker: worker, ctx: ctx, ch: ch}
	}
	return t, ch
}

// popLocked is Pop with q.mu held.
func (q *Queue) popLocked(arn string) (*task.Task, chan struct{}) {
	if ts := q.pending[arn]; len(ts) > 0 {
		q.pending[arn] = ts[1:]
		delete(q.queued, taskKey{ts[0].ExecutionArn, ts[0].ID})
		return ts[0], nil
	}
	ch := make(chan struct{})
	q.waiters[arn] = append(q.waiters[arn], ch)
	return nil, ch
}

// Claim takes the poller of activity arn that has waited longest and is
// still there, for a step that schedules a task of the activity to hand
// it out; nil when none waits. The claimed poller waits until Give or
// Unclaim settles the claim.
func (q *Queue) Claim(arn string) *Direct {
	q.mu.Lock()
	defer q.mu.Unlock()
	w := q.waiters[arn]
	for i, ch := range w {
		d := q.direct[ch]
		if d == nil || d.state != directWaiting || d.ctx.Err() != nil {
			continue
		}
		q.waiters[arn] = append(w[:i:i], w[i+1:]...)
		d.state, d.settle = directClaimed, make(chan struct{})
		return d
	}
	return nil
}

// Give hands a claimed poller its task, whose hand-out is committed.
func (q *Queue) Give(d *Direct, t *task.Task) {
	q.mu.Lock()
	defer q.mu.Unlock()
	d.state, d.task = directGiven, t
	close(d.ch)
	close(d.settle)
}

// Unclaim lets a claimed poller wait on (its step failed), ahead of the
// others; a task queued meanwhile wakes it.
func (q *Queue) Unclaim(arn string, d *Direct) {
	q.mu.Lock()
	defer q.mu.Unlock()
	d.state = directWaiting
	close(d.settle)
	if len(q.pending[arn]) > 0 {
		delete(q.direct, d.ch)
		close(d.ch)
		return
	}
	q.waiters[arn] = append([]chan struct{}{d.ch}, q.waiters[arn]...)
}

// given is the task a step gave the poller woken on ch, if any; the
// poller stops being one a step may claim.
func (q *Queue) given(ch chan struct{}) *task.Task {
	q.mu.Lock()
	defer q.mu.Unlock()
	d := q.direct[ch]
	delete(q.direct, ch)
	if d != nil && d.state == directGiven {
		return d.task
	}
	return nil
}

// unwaitDirect is Unwait for a poller of popDirect: one a step claimed
// waits for the claim to be settled, and gets the task it was given.
func (q *Queue) unwaitDirect(arn string, ch chan struct{}) *task.Task {
	q.mu.Lock()
	if d := q.direct[ch]; d != nil && d.state == directClaimed {
		settle := d.settle
		q.mu.Unlock()
		<-settle
		q.mu.Lock()
	}
	d := q.direct[ch]
	delete(q.direct, ch)
	q.mu.Unlock()
	if d != nil && d.state == directGiven {
		return d.task
	}
	q.Unwait(arn, ch)
	return nil
}

// Unwait withdraws a poller that stops waiting on ch. If it was woken
// already, the wake-up passes to the next poller while a task is pending,
// so a task is never left for a poller that is gone.
func (q *Queue) Unwait(arn string, ch <-chan struct{}) {
	q.mu.Lock()
	defer q.mu.Unlock()
	w := q.waiters[arn]
	for i, c := range w {
		if c == ch {
			q.waiters[arn] = append(w[:i:i], w[i+1:]...)
			return
		}
	}
	if len(q.pending[arn]) > 0 && len(w) > 0 {
		close(w[0])
		q.waiters[arn] = w[1:]
	}
}

// Listen registers a poller of a cluster's queue (where tasks are not
// in the queue): the channel is closed by a wake-up for the activity.
func (q *Queue) Listen(arn string) chan struct{} {
	q.mu.Lock()
	defer q.mu.Unlock()
	ch := make(chan struct{})
	q.waiters[arn] = append(q.waiters[arn], ch)
	return ch
}

// Unlisten withdraws a poller registered with Listen. A wake-up it got
// and did not use passes to the next poller; a task it was given is
// returned, for the poller to hand out or give back.
func (q *Queue) Unlisten(arn string, ch chan struct{}) (Handed, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	w := q.waiters[arn]
	for i, c := range w {
		if c == ch {
			q.waiters[arn] = append(w[:i:i], w[i+1:]...)
			return Handed{}, false
		}
	}
	if h, ok := q.handed[ch]; ok {
		delete(q.handed, ch)
		return h, true
	}
	select {
	case <-ch:
		if len(w) > 0 {
			close(w[0])
			q.waiters[arn] = w[1:]
		}
	default:
	}
	return Handed{}, false
}

// Waiting counts the pollers of an activity waiting here.
func (q *Queue) Waiting(arn string) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.waiters[arn])
}

// Handed is a task of a cluster's queue handed to one of this node's
// pollers without going through the store's queue (GiveShared).
type Handed struct{ ExecutionArn, TaskID string }

// GiveShared hands a task of activity arn to the poller of a cluster's
// queue that has waited longest here, if one waits: it wakes up with the
// task (Unlisten or Received returns it). false when none waits.
func (q *Queue) GiveShared(arn, executionArn, taskID string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	w := q.waiters[arn]
	if len(w) == 0 {
		return false
	}
	q.waiters[arn] = w[1:]
	q.handed[w[0]] = Handed{executionArn, taskID}
	close(w[0])
	return true
}

// Received returns the task given to a poller of a cluster's queue that
// was woken on ch, if it was given one.
func (q *Queue) Received(ch chan struct{}) (Handed, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	h, ok := q.handed[ch]
	delete(q.handed, ch)
	return h, ok
}

// Wake wakes up to n pollers of an activity: tasks were queued.
func (q *Queue) Wake(arn string, n int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	w := q.waiters[arn]
	n = min(n, len(w))
	for _, ch := range w[:n] {
		close(ch)
	}
	q.waiters[arn] = w[n:]
}

// WakeAll wakes every poller: wake-ups may have been missed.
func (q *Queue) WakeAll() {
	q.mu.Lock()
	defer q.mu.Unlock()
	for arn, w := range q.waiters {
		for _, ch := range w {
			close(ch)
		}
		delete(q.waiters, arn)
	}
}

// Status is what an activity has in the queue: the tasks waiting for a
// worker, and the workers that polled it lately (latest first).
func (q *Queue) Status(arn string) Status {
	q.mu.Lock()
	defer q.mu.Unlock()
	return Status{Waiting: len(q.pending[arn]), Workers: slices.Clone(q.seen[arn])}
}

// Workers is the workers that polled an activity lately (latest first).
func (q *Queue) Workers(arn string) []WorkerSeen {
	q.mu.Lock()
	defer q.mu.Unlock()
	return slices.Clone(q.seen[arn])
}

// Pollers is how many pollers wait for a task of an activity.
func (q *Queue) Pollers(arn string) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.waiters[arn])
}
