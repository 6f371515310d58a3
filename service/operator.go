package service

import (
	"context"
	"errors"
	"strings"
	"time"

	"stepwise/asl"
	"stepwise/awsarn"
	"stepwise/engine"
	"stepwise/history"
	"stepwise/interp"
	"stepwise/jsonvalue"
	"stepwise/sfnapi"
	"stepwise/store"
)

// Operator controls of running executions (Stepwise's own operations,
// beside the Step Functions API): hold and release a state, suspend and
// resume an execution, skip or kill a Task state, and the operator log.
// A hold or release of a state machine's state tags the state machine
// (stepwise:hold/<state> = <by>): every execution started while the tag
// is there starts with the state held, and the executions running when
// the hold is placed or released are held or released too. In Parallel
// branches and Map iterations a control applies to every instance of the
// named state.

// Operator is the part of the engine the operator controls use.
type Operator interface {
	Hold(ctx context.Context, arn, state, by string) error
	Release(ctx context.Context, arn, state, by string) error
	Suspend(ctx context.Context, arn, by string) error
	Resume(ctx context.Context, arn, by string) error
	Skip(ctx context.Context, arn, state, output, by string) error
	Kill(ctx context.Context, arn, state, errName, cause, by string) error
	Actions(ctx context.Context, arn string) ([]engine.Action, error)
}

var _ Operator = (*engine.Engine)(nil)

// HoldStateInput holds a state: of an execution (Arn an execution's) or
// of every execution of a state machine (Arn a state machine's).
type HoldStateInput struct {
	Arn   string `json:"arn"`
	State string `json:"stateName"`
	By    string `json:"by,omitempty"` // who: the signed-in user, "cli", ...
}

// HoldStateOutput is the response of HoldState and ReleaseState: the
// executions the control was applied to.
type HoldStateOutput struct {
	Executions []string `json:"executionArns"`
}

// ReleaseStateInput releases a state HoldState held.
type ReleaseStateInput = HoldStateInput

// ExecutionControlInput names an execution to suspend or resume.
type ExecutionControlInput struct {
	ExecutionArn string `json:"executionArn"`
	By           string `json:"by,omitempty"`
}

// ExecutionControlOutput is the (empty) response of SuspendExecution,
// ResumeExecution, SkipState and KillState.
type ExecutionControlOutput struct{}

// SkipStateInput skips a Task state of an execution with Output (JSON
// text, "{}" when empty) as its output.
type SkipStateInput struct {
	ExecutionArn string `json:"executionArn"`
	State        string `json:"stateName"`
	Output       string `json:"output,omitempty"`
	By           string `json:"by,omitempty"`
}

// KillStateInput fails the running task of a Task state of an execution
// with Error and Cause.
type KillStateInput struct {
	ExecutionArn string `json:"executionArn"`
	State        string `json:"stateName"`
	Error        string `json:"error,omitempty"`
	Cause        string `json:"cause,omitempty"`
	By           string `json:"by,omitempty"`
}

// ListOperatorActionsInput names an execution.
type ListOperatorActionsInput struct {
	ExecutionArn string `json:"executionArn"`
}

// OperatorAction is one control of the operator log.
type OperatorAction struct {
	Date   history.EpochTime `json:"date"`
	By     string            `json:"by,omitempty"`
	Action string            `json:"action"` // Hold, Release, Suspend, Resume, Skip, Kill, Rerun, Redrive
	State  string            `json:"stateName,omitempty"`
	Output string            `json:"output,omitempty"`
	Error  string            `json:"error,omitempty"`
	Cause  string            `json:"cause,omitempty"`
	// Mode is a rerun's, Definition the corrected definition it runs on.
	Mode       string `json:"mode,omitempty"`
	Definition string `json:"definition,omitempty"`
}

// ListOperatorActionsOutput is the operator log of an execution, oldest
// first.
type ListOperatorActionsOutput struct {
	Actions []OperatorAction `json:"actions"`
}

// DefaultKillError is the error of a kill that names none.
const DefaultKillError = "Stepwise.Killed"

// operator returns the engine's operator controls.
func (s *Service) operator() (Operator, error) {
	op, ok := s.engine.(Operator)
	if !ok {
		return nil, apiErr(sfnapi.CodeValidation, "This server runs no operator controls")
	}
	return op, nil
}

// HoldState holds a state of an execution, or of a state machine's
// executions.
func (s *Service) HoldState(ctx context.Context, in *HoldStateInput) (*HoldStateOutput, error) {
	return s.holdOrRelease(ctx, in, true)
}

// ReleaseState releases a held state of an execution, or of a state
// machine's executions (its hold tag removed).
func (s *Service) ReleaseState(ctx context.Context, in *ReleaseStateInput) (*HoldStateOutput, error) {
	return s.holdOrRelease(ctx, in, false)
}

func (s *Service) holdOrRelease(ctx context.Context, in *HoldStateInput, hold bool) (*HoldStateOutput, error) {
	v := newValidator()
	if v.required("arn", in.Arn) {
		v.length("arn", in.Arn, 1, maxArnLength)
	}
	if v.required("stateName", in.State) {
		v.length("stateName", in.State, 1, maxNameLength)
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	op, err := s.operator()
	if err != nil {
		return nil, err
	}
	a, err := parseArn(in.Arn)
	if err != nil {
		return nil, err
	}
	if a.Resource == awsarn.StateMachine {
		return s.holdStateMachine(ctx, op, in, hold)
	}
	row, _, err := s.controlled(ctx, in.Arn, in.State)
	if err != nil {
		return nil, err
	}
	if err := s.applyHold(ctx, op, row.Arn, in.State, in.By, hold); err != nil {
		return nil, err
	}
	return &HoldStateOutput{Executions: []string{row.Arn}}, nil
}

func (s *Service) applyHold(ctx context.Context, op Operator, arn, state, by string, hold bool) error {
	var err error
	if hold {
		err = op.Hold(ctx, arn, state, by)
	} else {
		err = op.Release(ctx, arn, state, by)
	}
	return controlError(arn, err)
}

// holdStateMachine tags a state machine with a hold (or removes it) and
// applies it to its running executions.
func (s *Service) holdStateMachine(ctx context.Context, op Operator, in *HoldStateInput, hold bool) (*HoldStateOutput, error) {
	ref, err := s.parseStateMachineArn(in.Arn)
	if err != nil {
		return nil, err
	}
	if ref.qualifier != "" || !ref.local {
		return nil, errStateMachineDoesNotExist(in.Arn)
	}
	sm, err := s.db().StateMachineGet(ctx, in.Arn)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errStateMachineDoesNotExist(in.Arn)
	}
	if err != nil {
		return nil, storeError("get state machine", err)
	}
	m, err := s.parseDefinition(sm.Definition, sm.Type)
	if err != nil {
		return nil, err
	}
	if m.Find(in.State) == nil {
		return nil, errNoSuchState(in.State)
	}
	key := interp.HoldTagPrefix + in.State
	var arns []string
	if hold {
		by := in.By
		if by == "" {
			by = "-"
		}
		arns, err = s.tagResource(ctx, &TagResourceInput{ResourceArn: in.Arn, Tags: []Tag{{Key: &key, Value: &by}}}, in.By)
	} else {
		arns, err = s.untagResource(ctx, &UntagResourceInput{ResourceArn: in.Arn, TagKeys: []string{key}}, in.By)
	}
	if err != nil {
		return nil, err
	}
	return &HoldStateOutput{Executions: arns}, nil
}

// holdTagStates returns the states hold tags name, among tag keys.
func holdTagStates(keys []string) []string {
	var out []string
	for _, k := range keys {
		if st, ok := strings.CutPrefix(k, interp.HoldTagPrefix); ok && st != "" {
			out = append(out, st)
		}
	}
	return out
}

// applyHoldTagsOf applies the hold tags among keys, placed (hold) or
// removed, to the running executions of state machine smArn; a server
// without operator controls has none to apply.
func (s *Service) applyHoldTagsOf(ctx context.Context, smArn string, keys []string, by string, hold bool) ([]string, error) {
	states := holdTagStates(keys)
	if len(states) == 0 {
		return nil, nil
	}
	op, ok := s.engine.(Operator)
	if !ok {
		return nil, nil
	}
	if by == "" {
		by = "tags"
	}
	return s.applyHoldTags(ctx, op, smArn, states, by, hold)
}

// applyHoldTags applies holds placed (or removed) on a state machine to
// its running executions (those of its versions and aliases among them).
func (s *Service) applyHoldTags(ctx context.Context, op Operator, smArn string, states []string, by string, hold bool) ([]string, error) {
	arns := []string{}
	p := &store.ExecutionListParams{StateMachineArn: smArn, Status: history.StatusRunning, Limit: 1000}
	for {
		rows, err := s.db().ExecutionList(ctx, p)
		if err != nil {
			return nil, storeError("list executions", err)
		}
		for _, row := range rows {
			for _, st := range states {
				var err error
				if hold {
					err = op.Hold(ctx, row.Arn, st, by)
				} else {
					err = op.Release(ctx, row.Arn, st, by)
				}
				var ended *engine.NotRunningError
				if errors.As(err, &ended) || errors.Is(err, store.ErrNotFound) {
					continue
				}
				if err != nil {
					return nil, controlError(row.Arn, err)
				}
			}
			arns = append(arns, row.Arn)
		}
		if len(rows) < p.Limit {
			return arns, nil
		}
		last := rows[len(rows)-1]
		p.AfterStartDate, p.AfterArn = last.StartDate, last.Arn
	}
}

// SuspendExecution suspends an execution: every state it is about to
// enter waits; what runs goes on to its end.
func (s *Service) SuspendExecution(ctx context.Context, in *ExecutionControlInput) (*ExecutionControlOutput, error) {
	return s.suspendOrResume(ctx, in, true)
}

// ResumeExecution resumes a suspended execution.
func (s *Service) ResumeExecution(ctx context.Context, in *ExecutionControlInput) (*ExecutionControlOutput, error) {
	return s.suspendOrResume(ctx, in, false)
}

func (s *Service) suspendOrResume(ctx context.Context, in *ExecutionControlInput, suspend bool) (*ExecutionControlOutput, error) {
	op, err := s.operator()
	if err != nil {
		return nil, err
	}
	row, _, err := s.controlled(ctx, in.ExecutionArn, "")
	if err != nil {
		return nil, err
	}
	if suspend {
		err = op.Suspend(ctx, row.Arn, in.By)
	} else {
		err = op.Resume(ctx, row.Arn, in.By)
	}
	if err := controlError(row.Arn, err); err != nil {
		return nil, err
	}
	return &ExecutionControlOutput{}, nil
}

// SkipState ends a Task state of an execution (running, waiting to retry
// or held) as succeeded with the given output.
func (s *Service) SkipState(ctx context.Context, in *SkipStateInput) (*ExecutionControlOutput, error) {
	op, err := s.operator()
	if err != nil {
		return nil, err
	}
	out := in.Output
	if out == "" {
		out = "{}"
	}
	if _, err := jsonvalue.ParseString(out); err != nil {
		return nil, apiErr(sfnapi.CodeInvalidOutput, "Invalid Output: '%v'", err)
	}
	row, m, err := s.controlled(ctx, in.ExecutionArn, in.State)
	if err != nil {
		return nil, err
	}
	if st := m.Find(in.State); st.Type != asl.TypeTask {
		return nil, apiErr(sfnapi.CodeValidation, "The state '%s' is a %s state: only a Task state can be skipped", in.State, st.Type)
	}
	if err := controlError(row.Arn, op.Skip(ctx, row.Arn, in.State, out, in.By)); err != nil {
		return nil, err
	}
	return &ExecutionControlOutput{}, nil
}

// KillState fails the running task of a Task state of an execution with
// the given error (DefaultKillError when none) and cause, and stops its
// work; Retry and Catch apply.
func (s *Service) KillState(ctx context.Context, in *KillStateInput) (*ExecutionControlOutput, error) {
	v := newValidator()
	v.sensitiveLength("error", in.Error, 0, maxErrorLength)
	v.sensitiveLength("cause", in.Cause, 0, maxCauseLength)
	if err := v.err(); err != nil {
		return nil, err
	}
	op, err := s.operator()
	if err != nil {
		return nil, err
	}
	row, m, err := s.controlled(ctx, in.ExecutionArn, in.State)
	if err != nil {
		return nil, err
	}
	if st := m.Find(in.State); st.Type != asl.TypeTask {
		return nil, apiErr(sfnapi.CodeValidation, "The state '%s' is a %s state: only a Task state's task can be killed", in.State, st.Type)
	}
	errName := in.Error
	if errName == "" {
		errName = DefaultKillError
	}
	if err := controlError(row.Arn, op.Kill(ctx, row.Arn, in.State, errName, in.Cause, in.By)); err != nil {
		return nil, err
	}
	return &ExecutionControlOutput{}, nil
}

// ListOperatorActions lists the operator controls of an execution.
func (s *Service) ListOperatorActions(ctx context.Context, in *ListOperatorActionsInput) (*ListOperatorActionsOutput, error) {
	op, err := s.operator()
	if err != nil {
		return nil, err
	}
	ref, err := s.executionArnInput(in.ExecutionArn)
	if err != nil {
		return nil, err
	}
	if _, err := s.getExecution(ctx, ref); err != nil {
		return nil, err
	}
	acts, err := op.Actions(ctx, ref.arn)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errExecutionDoesNotExist(ref.arn)
	}
	if err != nil {
		return nil, storeError("list operator actions", err)
	}
	out := &ListOperatorActionsOutput{Actions: make([]OperatorAction, 0, len(acts))}
	for _, a := range acts {
		out.Actions = append(out.Actions, OperatorAction{Date: history.EpochTime(a.At.Truncate(time.Millisecond)), By: a.By,
			Action: a.Kind, State: a.State, Output: a.Output, Error: a.Error, Cause: a.Cause, Mode: a.Mode, Definition: a.Definition})
	}
	return out, nil
}

// controlled checks the execution a control names (it exists, it is a
// STANDARD execution that is RUNNING) and, when state is set, that its
// definition has that state; it returns its row and definition.
func (s *Service) controlled(ctx context.Context, arn, state string) (*store.Execution, *asl.StateMachine, error) {
	ref, err := s.executionArnInput(arn)
	if err != nil {
		return nil, nil, err
	}
	if ref.express {
		return nil, nil, apiErr(sfnapi.CodeValidation, "An EXPRESS execution takes no operator controls: '%s'", arn)
	}
	row, err := s.getExecution(ctx, ref)
	if err != nil {
		return nil, nil, err
	}
	if row.Status != history.StatusRunning {
		return nil, nil, errNotRunning(row.Arn, string(row.Status))
	}
	rev, err := s.db().RevisionGet(ctx, row.StateMachineArn, row.RevisionID)
	if err != nil {
		return nil, nil, storeError("get definition", err)
	}
	m, diags := asl.ParseWith([]byte(rev.Definition), asl.Options{Type: asl.TypeStandard})
	if m == nil {
		return nil, nil, apiErr(sfnapi.CodeInvalidDefinition, "%s", asl.InvalidDefinitionMessage(diags))
	}
	if state != "" && m.Find(state) == nil {
		return nil, nil, errNoSuchState(state)
	}
	return row, m, nil
}

// controlError words an engine's answer to a control.
func controlError(arn string, err error) error {
	var (
		refused *engine.ControlRefusedError
		ended   *engine.NotRunningError
	)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, store.ErrNotFound):
		return errExecutionDoesNotExist(arn)
	case errors.As(err, &refused):
		return apiErr(sfnapi.CodeValidation, "%s", refused.Msg)
	case errors.As(err, &ended):
		return errNotRunning(arn, ended.Status)
	}
	return engineError("operator control", err)
}

// errNoSuchState: a control names a state the definition lacks (wording
// ours).
func errNoSuchState(state string) error {
	return apiErr(sfnapi.CodeValidation, "Invalid state name: the definition has no state '%s'", state)
}

// errNotRunning: a control of an execution that has ended (wording ours).
func errNotRunning(arn, status string) error {
	return apiErr(sfnapi.CodeValidation, "Execution '%s' is %s: only a RUNNING execution takes operator controls", arn, status)
}
