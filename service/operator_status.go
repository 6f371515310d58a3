package service

import (
	"context"
	"slices"

	"stepwise/engine/start"
	"stepwise/interp"
)

// OperatorStatus is what the operators' controls leave an execution in:
// the states held in it (those its state machine's hold tags held from
// its start, and the holds placed since, less those released), whether
// it is suspended, and its operator log.
type OperatorStatus struct {
	Held      []string
	Suspended bool
	Actions   []OperatorAction
	// WaitingFor is, for a RUNNING execution of an exclusive group that
	// waits its turn, the execution it waits for ("" for none).
	WaitingFor string
}

// ExecutionOperatorStatus reads the operator status of an execution from
// the policies it started with and its operator log.
func (s *Service) ExecutionOperatorStatus(ctx context.Context, arn string) (*OperatorStatus, error) {
	ref, err := s.executionArnInput(arn)
	if err != nil {
		return nil, err
	}
	row, err := s.getExecution(ctx, ref)
	if err != nil {
		return nil, err
	}
	log, err := s.ListOperatorActions(ctx, &ListOperatorActionsInput{ExecutionArn: ref.arn})
	if err != nil {
		return nil, err
	}
	held := map[string]bool{}
	waiting := ""
	if ps, err := interp.ParsePolicies(row.Policies); err == nil {
		waiting = start.WaitingState(ps)
		for st := range ps {
			if ps.Has(st, interp.PolicyHeld) && !ps.Has(st, start.PolicyWaiting) {
				held[st] = true
			}
		}
	}
	out := &OperatorStatus{Actions: log.Actions}
	if waiting != "" && row.Status == "RUNNING" {
		if out.WaitingFor, err = s.starter.WaitingFor(ctx, ref.arn); err != nil {
			return nil, err
		}
	}
	for _, a := range log.Actions {
		if a.By == start.WaitBy {
			continue // the group's turn, not an operator's
		}
		switch a.Action {
		case "Hold":
			held[a.State] = true
		case "Release":
			delete(held, a.State)
		case "Suspend":
			out.Suspended = true
		case "Resume":
			out.Suspended = false
		}
	}
	for st := range held {
		out.Held = append(out.Held, st)
	}
	slices.Sort(out.Held)
	return out, nil
}
