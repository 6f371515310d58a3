package service

import (
	"context"
	"slices"

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
	if ps, err := interp.ParsePolicies(row.Policies); err == nil {
		for st := range ps {
			if ps.Has(st, interp.PolicyHeld) {
				held[st] = true
			}
		}
	}
	out := &OperatorStatus{Actions: log.Actions}
	for _, a := range log.Actions {
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
