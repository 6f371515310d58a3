package interp

import (
	"fmt"
	"sort"

	"stepwise/asl"
	"stepwise/history"
	"stepwise/jsonvalue"
)

// Operator controls: what an operator does to a running execution, as
// events of their own (Hold, Release, Suspend, Resume, Skip, Kill). They
// write no history event of a type AWS lacks: a frame about to enter a
// held state, or any state while the execution is suspended, parks (it
// writes nothing, runs no task, arms no timer) until a Release or Resume
// lets it enter; a Skip ends a Task state as succeeded with the
// operator's output, a Kill fails its running task as a TaskFailed would.
// A control names a state; in Parallel branches and Map iterations it
// applies to every instance of that state (every frame in it, or parked
// before it). The held set and the suspension are part of the execution,
// so a replay of its events rebuilds them.

// IsOperator reports whether an event kind is an operator's control.
func IsOperator(k EventKind) bool { return k >= Hold && k <= Kill }

// OperatorKindName names an operator event kind ("" for another kind).
func OperatorKindName(k EventKind) string {
	switch k {
	case Hold:
		return "Hold"
	case Release:
		return "Release"
	case Suspend:
		return "Suspend"
	case Resume:
		return "Resume"
	case Skip:
		return "Skip"
	case Kill:
		return "Kill"
	}
	return ""
}

// ControlError is an operator's control the execution refuses: nothing
// changed.
type ControlError struct{ Msg string }

func (e *ControlError) Error() string { return e.Msg }

func refuse(format string, args ...any) error {
	return &ControlError{Msg: fmt.Sprintf(format, args...)}
}

// HeldStates returns the states held in the execution, sorted.
func (x *Execution) HeldStates() []string {
	out := make([]string, 0, len(x.held))
	for n := range x.held {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Suspended reports whether the execution is suspended.
func (x *Execution) Suspended() bool { return x.suspended }

// Parked returns the states the execution's parked frames wait to enter,
// one entry a frame, in the order they parked.
func (x *Execution) Parked() []string {
	var out []string
	for _, f := range x.parked {
		if f.parked && !f.done && !f.aborted {
			out = append(out, f.next)
		}
	}
	return out
}

// park stops f before it enters its next state when that state is held
// or the execution is suspended; it reports whether it did.
func (x *Execution) park(f *frame) bool {
	if !x.suspended && !x.held[f.next] {
		return false
	}
	if !f.parked {
		f.parked = true
		x.parked = append(x.parked, f)
	}
	return true
}

// unpark lets the parked frames that may now enter their state go on, in
// the order they parked.
func (x *Execution) unpark() {
	var go_ []*frame
	keep := x.parked[:0]
	for _, f := range x.parked {
		switch {
		case !f.parked || f.done || f.aborted:
			continue
		case x.suspended || x.held[f.next]:
			keep = append(keep, f)
		default:
			f.parked = false
			go_ = append(go_, f)
		}
	}
	clear(x.parked[len(keep):])
	x.parked = keep
	for i := len(go_) - 1; i >= 0; i-- {
		f := go_[i]
		x.push(func() { f.run(x) })
	}
}

// control applies an operator's event.
func (x *Execution) control(ev Event) error {
	switch ev.Kind {
	case Hold:
		if ev.State == "" {
			return refuse("a hold names a state")
		}
		if x.held == nil {
			x.held = map[string]bool{}
		}
		x.held[ev.State] = true
	case Release:
		delete(x.held, ev.State)
		if len(x.held) == 0 {
			x.held = nil
		}
		x.unpark()
	case Suspend:
		x.suspended = true
	case Resume:
		x.suspended = false
		x.unpark()
	case Skip:
		return x.skip(ev)
	case Kill:
		return x.kill(ev)
	}
	return nil
}

// frames returns every live frame of the execution, parents first.
func (x *Execution) frames() []*frame {
	var out []*frame
	var walk func(f *frame)
	walk = func(f *frame) {
		if f == nil || f.done || f.aborted {
			return
		}
		out = append(out, f)
		for _, c := range f.children {
			walk(c)
		}
	}
	walk(x.root)
	return out
}

// skip ends every instance of the named Task state that runs its task,
// waits to retry it or is parked before it, as succeeded with the
// operator's output.
func (x *Execution) skip(ev Event) error {
	var running, parked []*frame
	for _, f := range x.frames() {
		switch {
		case f.parked && f.next == ev.State:
			if s := f.machine.States[ev.State]; s != nil && s.Type == asl.TypeTask {
				parked = append(parked, f)
			}
		case !f.parked && f.state != nil && f.state.Name == ev.State && f.state.Type == asl.TypeTask &&
			(f.wait == waitTask || f.wait == waitRetry):
			running = append(running, f)
		}
	}
	if len(running) == 0 && len(parked) == 0 {
		return refuse("the state '%s' is not a Task state that is running, waiting to retry or held", ev.State)
	}
	if _, ok := x.textLimit(ev.Output, x.Opts.PayloadLimit); !ok {
		return refuse("the output is larger than %d bytes", x.Opts.PayloadLimit)
	}
	for _, f := range running {
		f.cancelWaits(x)
		f.skipped(x, ev.Output)
		x.push(func() { f.run(x) })
	}
	for _, f := range parked {
		f.parked = false
		name, input := f.next, f.nextInput
		f.next, f.nextInput = "", nil
		if !f.enter(x, name, input) {
			return nil // the history is full: the execution failed
		}
		f.skipped(x, ev.Output)
		x.push(func() { f.run(x) })
	}
	x.unpark() // drop the skipped frames from the parked ones
	return nil
}

// skipped writes the success of the current Task state with the
// operator's output and exits it with that output.
func (f *frame) skipped(x *Execution, output any) {
	s := f.state
	out := jsonvalue.String(output)
	switch {
	case IsActivity(s.Resource):
		x.emit(f, history.Event{Type: history.EventActivitySucceeded,
			ActivitySucceededEventDetails: &history.OutputEventDetails{Output: out}})
	case IsLambdaFunction(s.Resource):
		x.emit(f, history.Event{Type: history.EventLambdaFunctionSucceeded,
			LambdaFunctionSucceededEventDetails: &history.OutputEventDetails{Output: out}})
	default:
		resType, res := splitResource(s.Resource)
		x.emit(f, history.Event{Type: history.EventTaskSucceeded, TaskSucceededEventDetails: &history.TaskEventDetails{
			ResourceType: resType, Resource: res, Output: &out, OutputDetails: &history.DataDetails{},
		}})
	}
	f.exitWithOutput(x, output, nil, s.Next)
}

// kill fails the running task of every instance of the named Task state
// with the operator's error and cause, as a TaskFailed would: Retry and
// Catch apply. The task is cancelled (CancelTask with Kill set): the
// runner stops its work.
func (x *Execution) kill(ev Event) error {
	var running []*frame
	for _, f := range x.frames() {
		if !f.parked && f.state != nil && f.state.Name == ev.State && f.state.Type == asl.TypeTask && f.wait == waitTask {
			running = append(running, f)
		}
	}
	if len(running) == 0 {
		return refuse("the state '%s' is not a Task state whose task is running", ev.State)
	}
	for _, f := range running {
		id := f.waitID
		f.cancelWaits(x)
		for i := len(x.cmds) - 1; i >= 0; i-- {
			if c := &x.cmds[i]; c.Kind == CancelTask && c.ID == id {
				c.Kill = true
				break
			}
		}
		f.taskDone(x, Event{Kind: TaskFailed, ID: id, Error: ev.Error, Cause: ev.Cause})
		x.push(func() { f.run(x) })
	}
	return nil
}
