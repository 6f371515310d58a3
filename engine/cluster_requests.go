package engine

import (
	"context"
	"errors"
	"fmt"

	"stepwise/engine/activity"
	"stepwise/engine/internal/node"
	"stepwise/store"
)

// The requests of other nodes, carried out here as the owner of their
// executions, and this node's requests to the owners of others (see
// package node for their way over the store).

// sendKey marks the context of a step with a worker's answer (SendTask*).
type sendKey struct{}

// nodeHandler carries out the requests other nodes send this one.
type nodeHandler struct{ e *Engine }

// Begin counts a request being carried out, which Stop waits for before
// the node lets its executions go; false once the engine stops.
func (h nodeHandler) Begin() bool {
	e := h.e
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopped {
		return false
	}
	e.handlers.Add(1)
	return true
}

func (h nodeHandler) End() { h.e.handlers.Done() }

func (h nodeHandler) Stopped() bool {
	e := h.e
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.stopped
}

func (h nodeHandler) CarryOut(req *node.Request) node.Answer { return h.e.carryOut(req) }

// answerError is the Error of an answer: what the asking node makes of
// the error the request met here.
func answerError(err error) string {
	var elsewhere *ownedElsewhere
	switch {
	case err == nil:
		return ""
	case errors.Is(err, errMoved), errors.As(err, &elsewhere), errors.Is(err, store.ErrFenced):
		return node.ErrorMoved
	case errors.Is(err, errStopped):
		return node.ErrorStopped
	case errors.Is(err, store.ErrNotFound):
		return node.ErrorNotFound
	}
	return err.Error()
}

// ask sends a request to node to, the owner of execution req.Arn, and
// waits for its answer: errMoved when the node turns out not to own the
// execution, errStopped when the engine halts meanwhile.
func (e *Engine) ask(ctx context.Context, to string, req *node.Request) (*node.Answer, error) {
	a, err := e.cl.Ask(ctx, e.halted, to, req)
	if errors.Is(err, node.ErrHalted) {
		return nil, errStopped
	}
	return a, err
}

// carryOut does what a request asks, as the execution's owner.
func (e *Engine) carryOut(req *node.Request) node.Answer {
	ctx := e.ctx
	switch req.Kind {
	case node.ReqStep, node.ReqSend:
		en, err := decodeEntry(req.Event)
		if err != nil {
			return node.Answer{Error: fmt.Sprintf("bad request: %v", err)}
		}
		ev := en.Event
		if req.Kind == node.ReqSend {
			if err := e.gates.wait(ctx, e.ctx, req.Arn, ev.ID); err != nil {
				return node.Answer{Error: answerError(err)}
			}
		}
		_, applied, err := e.stepVia(ctx, req.Arn, ev, false)
		if errors.Is(err, store.ErrNotFound) && req.Kind == node.ReqStep {
			err = nil
		}
		return node.Answer{Applied: applied, Error: answerError(err)}
	case node.ReqHandOut, node.ReqRelease:
		task, err := e.handOutHere(ctx, req)
		a := node.Answer{Error: answerError(err)}
		if task != nil {
			a.Handed, a.Token, a.Input = true, task.Token, task.Input
		}
		return a
	}
	return node.Answer{Error: fmt.Sprintf("bad request: kind %q", req.Kind)}
}

// handOutHere hands an activity task out for a poller on another node
// (node.ReqHandOut), or undoes that (node.ReqRelease), as the task's owner.
func (e *Engine) handOutHere(ctx context.Context, req *node.Request) (*activity.Handout, error) {
	if err := e.beginStep(); err != nil {
		return nil, err
	}
	defer e.endStep()
	for range 3 {
		l, err := e.get(ctx, req.Arn)
		var ended *errEnded
		if errors.As(err, &ended) || errors.Is(err, store.ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		l.mu.Lock()
		if l.gone {
			l.mu.Unlock()
			continue
		}
		r := l.tasks[req.Task]
		if r == nil {
			l.mu.Unlock()
			return nil, nil // the task ended
		}
		t := l.task(req.Task, r)
		var task *activity.Handout
		if req.Kind == node.ReqRelease {
			e.release(ctx, l, t)
		} else {
			// The poller is on the asking node, which undoes the hand-out
			// should it have left.
			task, err = e.handOutLocked(context.WithoutCancel(ctx), ctx, l, t, req.Worker)
		}
		l.mu.Unlock()
		return task, err
	}
	return nil, fmt.Errorf("execution %s: could not be loaded", req.Arn)
}
