package engine

import (
	"context"
	"strings"
	"time"

	"stepwise/stepwisetype"
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
func (e *Engine) throttle(ctx context.Context, l *liveExecution, events []*stepwisetype.HistoryEvent) error {
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

// transitions counts the state transitions in a step's history events as
// AWS counts them for ExecutionThrottled: every state entered, and every
// retry of a task (a task scheduled again, not right after its state was
// entered).
func transitions(events []*stepwisetype.HistoryEvent) int {
	n := 0
	for i, ev := range events {
		switch ev.Type {
		case stepwisetype.EventTaskScheduled, stepwisetype.EventActivityScheduled, stepwisetype.EventLambdaFunctionScheduled:
			if prev := previousIn(events, i); prev == nil || !isStateEntered(prev.Type) {
				n++
			}
		default:
			if isStateEntered(ev.Type) {
				n++
			}
		}
	}
	return n
}

// previousIn returns the event events[i] follows (PreviousEventID), when
// it is in events. A step's events have consecutive ids.
func previousIn(events []*stepwisetype.HistoryEvent, i int) *stepwisetype.HistoryEvent {
	j := int(events[i].PreviousEventID - events[0].ID)
	if j >= 0 && j < i && events[j].ID == events[i].PreviousEventID {
		return events[j]
	}
	return nil
}

func isStateEntered(t stepwisetype.EventType) bool {
	return strings.HasSuffix(string(t), "StateEntered")
}
