package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"stepwise/interp"
	"stepwise/jsonvalue"
)

// Operator controls of a running execution: Hold, Release, Suspend,
// Resume, Skip and Kill, each an interp.Event applied through the step
// loop as a task's result is (cluster forwarding included). Its step
// commits the event in the replay log with its effects, so a restart or
// a takeover replays it; the commit is the acknowledgment. The operator
// log (Actions) is read back from the replay log: the controls, the
// reruns, and the redrives an operator asked for (those whose caller is
// known: WithActor).

// ControlRefusedError is a control the execution refused (a skip of a
// state that is not running, held or waiting to retry; a kill of a state
// whose task is not running): nothing changed.
type ControlRefusedError struct{ Msg string }

func (e *ControlRefusedError) Error() string { return e.Msg }

// NotRunningError is a control of an execution that has ended.
type NotRunningError struct {
	Arn    string
	Status string
}

func (e *NotRunningError) Error() string {
	return fmt.Sprintf("execution %s is %s: only a RUNNING execution takes operator controls", e.Arn, e.Status)
}

// Hold makes execution arn hold state: a frame about to enter it waits
// (parked, writing nothing) until Release. by names who did it.
func (e *Engine) Hold(ctx context.Context, arn, state, by string) error {
	return e.control(ctx, arn, interp.Event{Kind: interp.Hold, State: state, By: by})
}

// Release lets the frames of execution arn parked before state enter it.
func (e *Engine) Release(ctx context.Context, arn, state, by string) error {
	return e.control(ctx, arn, interp.Event{Kind: interp.Release, State: state, By: by})
}

// Suspend parks every frame of execution arn about to enter a state;
// what runs goes on to its end.
func (e *Engine) Suspend(ctx context.Context, arn, by string) error {
	return e.control(ctx, arn, interp.Event{Kind: interp.Suspend, By: by})
}

// Resume lets the parked frames of execution arn go on (but those before
// a held state).
func (e *Engine) Resume(ctx context.Context, arn, by string) error {
	return e.control(ctx, arn, interp.Event{Kind: interp.Resume, By: by})
}

// Skip ends the Task state of execution arn as succeeded with output
// (JSON text) as its output: a running task is cancelled (its result
// dropped), a retry's wait cancelled, a parked frame enters it.
func (e *Engine) Skip(ctx context.Context, arn, state, output, by string) error {
	out, err := jsonvalue.ParseString(output)
	if err != nil {
		return &InvalidOutputError{Err: err}
	}
	return e.control(ctx, arn, interp.Event{Kind: interp.Skip, State: state, Output: out, By: by})
}

// Kill fails the running task of the Task state of execution arn with
// errName and cause (Retry and Catch apply) and has its runner stop the
// work.
func (e *Engine) Kill(ctx context.Context, arn, state, errName, cause, by string) error {
	return e.control(ctx, arn, interp.Event{Kind: interp.Kill, State: state, Error: errName, Cause: cause, By: by})
}

func (e *Engine) control(ctx context.Context, arn string, ev interp.Event) error {
	row, applied, err := e.step(ctx, arn, ev)
	var refused *interp.ControlError
	if errors.As(err, &refused) {
		return &ControlRefusedError{Msg: refused.Msg}
	}
	if err != nil {
		return err
	}
	if !applied && row != nil {
		return &NotRunningError{Arn: arn, Status: string(row.Status)}
	}
	return nil
}

// WithActor is ctx naming who asks, through it, for a redrive or a rerun
// (RedriveExecution, RerunExecution): the replay log entry of the step
// keeps it, and the operator log (Actions) lists the step by it.
func WithActor(ctx context.Context, by string) context.Context {
	return context.WithValue(ctx, actorKey{}, by)
}

type actorKey struct{}

// actorOf is who asks through ctx ("" when ctx does not say).
func actorOf(ctx context.Context) string {
	by, _ := ctx.Value(actorKey{}).(string)
	return by
}

// Action is one operator action of an execution, from its replay log.
type Action struct {
	At    time.Time
	By    string
	Kind  string // Hold, Release, Suspend, Resume, Skip, Kill, Rerun, Redrive
	State string // the state a control names, or a STATE rerun starts at
	// Output is a skip's output or a NEXT rerun's (JSON text); Error and
	// Cause a kill's.
	Output       string
	Error, Cause string
	// Mode is a rerun's (FAILED, NEXT, STATE, TOP, WARNINGS), Definition
	// the corrected definition it runs on ("" for its own).
	Mode, Definition string
}

// Actions lists the operator controls of execution arn in the order they
// were applied.
func (e *Engine) Actions(ctx context.Context, arn string) ([]Action, error) {
	ex := e.store.Executor()
	if _, err := ex.ExecutionGet(ctx, arn); err != nil {
		return nil, err
	}
	inputs, err := ex.InputList(ctx, arn)
	if err != nil {
		return nil, err
	}
	var out []Action
	for _, in := range inputs {
		en, err := decodeEntry(in.Body)
		if err != nil {
			return nil, fmt.Errorf("execution %s: replay log entry %d: %w", arn, in.Seq, err)
		}
		ev := en.Event
		var a Action
		switch {
		case interp.IsOperator(ev.Kind):
			a = Action{Kind: interp.OperatorKindName(ev.Kind), State: ev.State, Error: ev.Error, Cause: ev.Cause}
			if ev.Kind == interp.Skip {
				a.Output = jsonvalue.String(ev.Output)
			}
		case ev.Kind == interp.RerunKind && ev.Rerun != nil:
			r := ev.Rerun
			a = Action{Kind: "Rerun", Mode: string(r.Mode), State: r.State, Definition: r.Definition}
			if r.Mode == interp.RerunNext {
				a.Output = jsonvalue.String(r.Output)
			}
		case ev.Kind == interp.Redrive && ev.By != "":
			// A redrive with no caller is the engine's own (a parent's
			// redrive reaching its children, or a step of the execution).
			a = Action{Kind: "Redrive"}
		default:
			continue
		}
		a.At, a.By = in.At, ev.By
		out = append(out, a)
	}
	return out, nil
}
