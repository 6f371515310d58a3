package engine

import (
	"context"
	"stepwise/history"
	"time"
)

// TransitionLimiter holds back the state transitions of STANDARD
// executions, as AWS's StateTransition quota does: a token bucket for the
// account (Config.Transitions; package quota has one).
type TransitionLimiter interface {
	// ReserveTransitions takes n state transitions of an execution of
	// stateMachineArn from the quota and returns how long the caller must
	// wait before they go ahead: 0 at once.
	ReserveTransitions(stateMachineArn string, n int) time.Duration
}

// throttle holds a step of l, whose history events the interpreter has
// just written, back as long as the transition quota says, before it is
// committed: a throttled execution is delayed, not failed.
//
// A step runs every state that needs no outside world at once, so how
// many transitions it makes is known only once it has run: the
// interpreter runs, the step's transitions are counted and reserved, and
// the step waits before its commit (its events keep the time it ran).
// The wait holds the execution's own lock only, never one other
// executions need, and ends at once when the engine halts (the step is
// then committed, as every step in flight is on a stop) or when ctx ends
// (the step is not committed: the caller drops the execution). EXPRESS
// executions are not throttled, nor is StartSyncExecution, which does not
// commit its steps, nor TestState, which does not run in the engine.
func (e *Engine) throttle(ctx context.Context, l *liveExecution, events []*history.Event) error {
	if e.cfg.Transitions == nil || isExpressArn(l.arn) {
		return nil
	}
	n := transitions(events)
	if n == 0 {
		return nil
	}
	wait := e.cfg.Transitions.ReserveTransitions(l.row.StateMachineArn, n)
	if wait <= 0 {
		return nil
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
	case <-e.halted:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// transitions counts the state transitions of a step's events.
func transitions(events []*history.Event) int {
	return history.StateTransitions(events)
}
