package engine

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"hash"
	"sync"
	"time"

	"stepwise/interp"
	"stepwise/jsonvalue"
	"stepwise/service"
	"stepwise/stepwisetype"
)

// Task tokens name a task (execution ARN and task id) and carry a keyed
// hash of both, so they cannot be guessed or forged, and they are the same
// after a restart or a replay: a worker that took a task before a crash can
// still complete it.

const tokenMACSize = 16

// token returns the token of a task.
func (e *Engine) token(arn, id string) string {
	var b []byte
	b = append(b, arn...)
	b = append(b, 0)
	b = append(b, id...)
	b = append(b, 0)
	b = append(b, e.mac(arn, id)...)
	return base64.RawURLEncoding.EncodeToString(b)
}

func (e *Engine) mac(arn, id string) []byte {
	h, _ := e.macs.Get().(hash.Hash)
	if h == nil {
		h = hmac.New(sha256.New, e.cfg.TokenKey)
	}
	h.Reset()
	h.Write([]byte(arn))
	h.Write([]byte{0})
	h.Write([]byte(id))
	sum := h.Sum(nil)[:tokenMACSize]
	e.macs.Put(h)
	return sum
}

// parseToken returns the task a token names, if it is genuine.
func (e *Engine) parseToken(tok string) (arn, id string, ok bool) {
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		return "", "", false
	}
	parts := bytes.SplitN(b, []byte{0}, 3)
	if len(parts) != 3 || len(parts[2]) != tokenMACSize {
		return "", "", false
	}
	arn, id = string(parts[0]), string(parts[1])
	return arn, id, hmac.Equal(parts[2], e.mac(arn, id))
}

// errInvalidToken and errTaskTimedOut are the answers AWS gives to a
// token it does not know and to one whose task is over.
func errInvalidToken() error {
	return stepwisetype.NewAPIError(stepwisetype.CodeInvalidToken, "Invalid Token: 'Invalid token'")
}

func errTaskTimedOut() error {
	return stepwisetype.NewAPIError(stepwisetype.CodeTaskTimedOut, "Task Timed Out: 'Provided task does not exist anymore'")
}

// SendTaskSuccess completes the task of token with output (JSON text).
func (e *Engine) SendTaskSuccess(ctx context.Context, token, output string) error {
	out, err := jsonvalue.ParseString(output)
	if err != nil {
		return stepwisetype.NewAPIError(stepwisetype.CodeInvalidOutput, "Invalid Output: '%v'", err)
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
	arn, id, ok := e.parseToken(token)
	if !ok {
		return errInvalidToken()
	}
	ev.ID = id
	if err := e.gates.wait(ctx, e.ctx, arn, id); err != nil {
		return err
	}
	applied, err := e.applyEvent(ctx, arn, ev)
	if err != nil {
		return err
	}
	if !applied {
		return errTaskTimedOut()
	}
	return nil
}

// activityQueue holds the activity tasks waiting for a worker, per
// activity ARN, and the workers waiting for one.
type activityQueue struct {
	mu      sync.Mutex
	pending map[string][]*Task         // activity ARN → tasks, oldest first
	waiters map[string][]chan struct{} // activity ARN → pollers to wake
}

func newActivityQueue() *activityQueue {
	return &activityQueue{pending: map[string][]*Task{}, waiters: map[string][]chan struct{}{}}
}

func (q *activityQueue) push(t *Task) {
	q.mu.Lock()
	defer q.mu.Unlock()
	arn := t.Request.Resource
	q.pending[arn] = append(q.pending[arn], t)
	if w := q.waiters[arn]; len(w) > 0 {
		close(w[0])
		q.waiters[arn] = w[1:]
	}
}

// remove drops a task that is no longer wanted.
func (q *activityQueue) remove(executionArn, id string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for arn, ts := range q.pending {
		for i, t := range ts {
			if t.ExecutionArn == executionArn && t.ID == id {
				q.pending[arn] = append(ts[:i:i], ts[i+1:]...)
				return
			}
		}
	}
}

// pop takes the oldest task of an activity, or returns a channel closed
// when one may have arrived.
func (q *activityQueue) pop(arn string) (*Task, <-chan struct{}) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if ts := q.pending[arn]; len(ts) > 0 {
		q.pending[arn] = ts[1:]
		return ts[0], nil
	}
	ch := make(chan struct{})
	q.waiters[arn] = append(q.waiters[arn], ch)
	return nil, ch
}

// unwait withdraws a poller that stops waiting on ch. If it was woken
// already, the wake-up passes to the next poller while a task is pending,
// so a task is never left for a poller that is gone.
func (q *activityQueue) unwait(arn string, ch <-chan struct{}) {
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

// DefaultActivityPoll is how long GetActivityTask waits, as on AWS.
const DefaultActivityPoll = 60 * time.Second

// GetActivityTask hands the oldest task of an activity to one worker,
// waiting up to DefaultActivityPoll for one.
func (e *Engine) GetActivityTask(ctx context.Context, activityArn, worker string) (*service.ActivityTask, error) {
	return e.PollActivity(ctx, activityArn, worker, DefaultActivityPoll)
}

// PollActivity hands the oldest task of an activity to one worker, waiting
// up to wait (or until ctx ends) for one; nil when none came. Each task
// goes to exactly one worker; the execution records the worker's name in
// ActivityStarted.
func (e *Engine) PollActivity(ctx context.Context, activityArn, worker string, wait time.Duration) (*service.ActivityTask, error) {
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	for {
		t, ready := e.activities.pop(activityArn)
		if t == nil {
			select {
			case <-ready:
				continue
			case <-deadline.C:
			case <-ctx.Done():
			case <-e.releasePolls:
			}
			e.activities.unwait(activityArn, ready)
			return nil, nil
		}
		applied, err := e.applyEvent(ctx, t.ExecutionArn, interp.Event{Kind: interp.TaskStarted, ID: t.ID, WorkerName: worker})
		if err != nil {
			return nil, err
		}
		if !applied {
			continue // the task ended meanwhile (its execution was stopped, or it timed out)
		}
		return &service.ActivityTask{Token: t.Request.Token, Input: jsonvalue.String(t.Request.Parameters)}, nil
	}
}

// ReleasePolls answers every GetActivityTask poll waiting now, and every
// later one that finds no task at once, with no task, as a poll that timed
// out is answered. A server calls it when it shuts down: its workers are
// not held until their polls time out, and poll again (reaching the
// server once it is back).
func (e *Engine) ReleasePolls() {
	e.releasePollsOnce.Do(func() { close(e.releasePolls) })
}

// builtinRunner carries out the tasks the engine does itself (activities,
// states:startExecution) and sends the rest to the configured runner.
type builtinRunner struct {
	e    *Engine
	next TaskRunner
}

func (r *builtinRunner) Run(ctx context.Context, t *Task, done func(TaskResult)) {
	switch {
	case interp.IsActivity(t.Request.Resource):
		r.e.activities.push(t) // completed through SendTask*
	case isStartExecution(t.Request.Resource):
		go r.e.startChild(ctx, t, done)
	default:
		r.next.Run(ctx, t, done)
	}
}

func (r *builtinRunner) Cancel(arn, id string) {
	r.e.activities.remove(arn, id)
	r.e.cancelChild(arn, id)
	r.next.Cancel(arn, id)
}
