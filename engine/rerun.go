package engine

import (
	"context"
	"fmt"

	"stepwise/asl"
	"stepwise/history"
	"stepwise/internal/warnrule"
	"stepwise/interp"
	"stepwise/jsonvalue"
	"stepwise/store"
)

// RerunExecution runs a FAILED, TIMED_OUT or ABORTED execution again as r
// says (interp.Rerun): r.Definition, when set, is the corrected definition
// it runs on from there (r.Machine is parsed from it here). With dryRun
// it only answers what the rerun would do. A rerun that does not fit the
// execution is an *interp.RerunError and changes nothing. The replay log
// entry of the rerun keeps the definition, so that an engine started
// again rebuilds the execution on it, and who asked for it (WithActor).
func (e *Engine) RerunExecution(ctx context.Context, arn string, r *interp.Rerun, dryRun bool) (*store.Execution, *interp.RerunPlan, error) {
	if err := e.beginStep(); err != nil {
		return nil, nil, err
	}
	defer e.endStep()
	ex := e.store.Executor()
	row, err := ex.ExecutionGet(ctx, arn)
	if err != nil {
		return nil, nil, err
	}
	if err := Redrivable(row, e.now()); err != nil {
		return nil, nil, err
	}
	rr := *r
	if rr.Definition != "" {
		if rr.Machine, err = rerunMachine(rr.Definition); err != nil {
			return nil, nil, &interp.RerunError{Msg: err.Error()}
		}
	}
	if rr.Mode == interp.RerunWarnings {
		if rr.Warned, err = warnedStates(ctx, ex, row); err != nil {
			return nil, nil, err
		}
		if len(rr.Warned) == 0 {
			return nil, nil, &interp.RerunError{Msg: "no state of the execution ended with warning"}
		}
	}
	if dryRun {
		l := &liveExecution{arn: arn}
		l.mu.Lock()
		defer l.mu.Unlock()
		if err := e.fill(ctx, l, true); err != nil {
			return nil, nil, err
		}
		plan, err := l.x.PlanRerun(&rr)
		if err != nil {
			return nil, nil, err
		}
		return row, plan, nil
	}
	if e.cl != nil {
		claimed, err := e.cl.Store().ExecutionClaimOne(ctx, e.cl.Fence(), arn)
		if err != nil {
			return nil, nil, err
		}
		if !claimed {
			return nil, nil, &NotRedrivableError{Arn: arn, Status: history.StatusRunning}
		}
	}
	l := &liveExecution{arn: arn}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := e.fill(ctx, l, true); err != nil {
		return nil, nil, err
	}
	plan, err := l.x.PlanRerun(&rr)
	if err != nil {
		return nil, nil, err
	}
	out, _, err := e.stepLocked(ctx, l, interp.Event{Kind: interp.RerunKind, Rerun: &rr, By: actorOf(ctx)})
	if err != nil {
		return nil, nil, err
	}
	if !l.gone && l.x.Status == history.StatusRunning {
		e.mu.Lock()
		if e.live[arn] == nil {
			e.live[arn] = l
		}
		e.mu.Unlock()
	}
	return out, plan, nil
}

// rerunMachine parses the definition a rerun runs on.
func rerunMachine(def string) (*asl.StateMachine, error) {
	m, diags := asl.Parse([]byte(def))
	if m == nil || asl.HasErrors(diags) {
		return nil, fmt.Errorf("the definition is not valid: %s", asl.InvalidDefinitionMessage(diags))
	}
	return m, nil
}

// warnedStates are the states of the execution that ended with warning,
// each with the input it was entered with, in the order of their results.
func warnedStates(ctx context.Context, ex store.Executor, row *store.Execution) ([]interp.WarnedState, error) {
	rs, err := warnrule.FromPolicies(row.Policies)
	if err != nil || len(rs) == 0 {
		return nil, err
	}
	events, err := storedHistory(ctx, ex, row.Arn)
	if err != nil {
		return nil, err
	}
	byID := make(map[int64]*history.Event, len(events))
	for _, ev := range events {
		byID[ev.ID] = ev
	}
	var out []interp.WarnedState
	for _, w := range JudgeHistory(rs, events) {
		ev := byID[w.EventID]
		for ev != nil && (ev.StateEnteredEventDetails == nil || ev.StateEnteredEventDetails.Name != w.State) {
			ev = byID[ev.PreviousEventID]
		}
		if ev == nil {
			return nil, fmt.Errorf("the state %s ended with warning at event %d, but its entered event is not in the history", w.State, w.EventID)
		}
		in, err := jsonvalue.ParseString(ev.StateEnteredEventDetails.Input)
		if err != nil {
			return nil, fmt.Errorf("history event %d: input: %w", ev.ID, err)
		}
		out = append(out, interp.WarnedState{Name: w.State, Input: in})
	}
	return out, nil
}
