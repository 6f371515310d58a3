package engine

import (
	"context"
	"strings"
	"sync"
	"time"

	"stepwise/interp"
)

// callGates hold back the SendTask* calls of a .waitForTaskToken task
// while its request is being made. The request carries the token, so a
// worker can answer before the service's answer is back; held, the answer
// lands after TaskSubmitted, as on AWS, instead of ending the task before
// the request it answers is recorded.
//
// A call is held at most gateBound: the request may be the one waiting
// for the call (a function invoked with lambda:invoke.waitForTaskToken
// that calls SendTaskSuccess with its own token before it returns, as
// AWS lets it). After that the answer goes through, and ends the task
// before its TaskSubmitted; the request's own answer, when it comes,
// finds the task ended and is dropped.
type callGates struct {
	mu sync.Mutex
	m  map[string]chan struct{} // "arn\x00task id" → closed on release
	// bound is how long a call is held (0: gateBound).
	bound time.Duration
}

// gateBound is how long a token call waits for its task's request.
const gateBound = 2 * time.Second

// isCallback says whether a task's result comes through its token after a
// request is made: a .waitForTaskToken task.
func isCallback(req *interp.TaskRequest) bool {
	return strings.HasSuffix(req.Resource, ".waitForTaskToken") && !interp.IsActivity(req.Resource)
}

func gateKey(arn, id string) string { return arn + "\x00" + id }

// hold holds back the token calls of a task until release.
func (g *callGates) hold(arn, id string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.m == nil {
		g.m = map[string]chan struct{}{}
	}
	if _, held := g.m[gateKey(arn, id)]; !held {
		g.m[gateKey(arn, id)] = make(chan struct{})
	}
}

// release lets a task's token calls through; releasing a task that is
// not held does nothing.
func (g *callGates) release(arn, id string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if ch, held := g.m[gateKey(arn, id)]; held {
		close(ch)
		delete(g.m, gateKey(arn, id))
	}
}

// wait returns once a task's token calls may go through, or with the
// error of whichever context ends first.
func (g *callGates) wait(ctx, engineCtx context.Context, arn, id string) error {
	g.mu.Lock()
	ch := g.m[gateKey(arn, id)]
	g.mu.Unlock()
	if ch == nil {
		return nil
	}
	bound := g.bound
	if bound <= 0 {
		bound = gateBound
	}
	t := time.NewTimer(bound)
	defer t.Stop()
	select {
	case <-ch:
		return nil
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-engineCtx.Done():
		return errStopped
	}
}
