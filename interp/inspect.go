package interp

import (
	"time"

	"stepwise/asl"
	"stepwise/failure"
	"stepwise/interp/maprun"
	"stepwise/jsonvalue"
)

// Inspection runs an execution the way the TestState operation runs one
// state: an Inspector is told what each step of the data flow produced and
// how failures were handled, and stands in for the branches and
// iterations of Parallel and Map states; the context object, the
// variables and the retries already made are given rather than worked
// out. Tasks still run as commands: the caller answers them (with a mock
// or by calling the resource).
type Inspection struct {
	Inspector Inspector
	// Context, when set, is the context object ("$$", $states.context)
	// of every state; a Map's ItemSelector sees it with its Map member.
	Context any
	// Variables are the variables the execution starts with.
	Variables *jsonvalue.Object
	// RetriesMade is how many times the first state has been retried
	// already: each of its retriers has used that many attempts.
	RetriesMade int64
	// FailedIterations is how many iterations of a Map state failed: past
	// its tolerated failure count or percentage, the state fails with
	// States.ExceedToleratedFailureThreshold (a state with neither is not
	// tested).
	FailedIterations int
	// ReaderItems are the items a Map state's ItemReader reads; nil when
	// they are not known.
	ReaderItems []any
}

// Inspector observes states run under an Inspection.
type Inspector interface {
	// Note is told what a step of state s's data flow produced.
	Note(s *asl.State, stage Stage, v any)
	// Retry is told that s failed with fl and that its retrier i matched
	// the error: it retries the state after delay, or (retrying false)
	// has no attempts left.
	Retry(s *asl.State, fl *failure.Failure, i int, delay time.Duration, retrying bool)
	// Catch is told that s failed with fl and that its catcher i caught it.
	Catch(s *asl.State, fl *failure.Failure, i int)
	// Exit is told that s exits with output (its JSON text), having
	// assigned variables, to next ("" when s ends its branch).
	Exit(s *asl.State, output string, assigned *jsonvalue.Object, next string)
	// Children stands for the branches of a Parallel state or the
	// iterations of a Map state s, once its inputs are worked out: it
	// returns their results, or the failure that ends the state.
	Children(s *asl.State) (result any, fl *failure.Failure)
}

// Stage names a step of a state's data flow, as an Inspector is told it.
type Stage int

// The stages, in the order a state goes through them.
const (
	AfterInputPath             Stage = iota + 1 // the effective input
	AfterParameters                             // a Pass or Task state's Parameters
	AfterArguments                              // a JSONata Task state's Arguments
	AfterItemsPath                              // a Map state's items
	AfterItemSelector                           // a Map state's items after ItemSelector, as an array
	MaxConcurrency                              // a Map state's MaxConcurrency, a number
	ToleratedFailureCount                       // a Map state's, a number, when it has one
	ToleratedFailurePercentage                  // a Map state's, a number, when it has one
	Result                                      // a Task's result, a Pass state's Result
	AfterResultSelector                         // the result after ResultSelector
	AfterResultPath                             // the output before OutputPath
)

// note tells the inspector, if any, what a stage of the frame's state
// produced.
func (f *frame) note(x *Execution, stage Stage, v any) {
	if in := x.Opts.Inspect; in != nil && in.Inspector != nil {
		in.Inspector.Note(f.state, stage, v)
	}
}

// inspector returns the inspector of the execution, or nil.
func (x *Execution) inspector() Inspector {
	if in := x.Opts.Inspect; in != nil {
		return in.Inspector
	}
	return nil
}

// standInChildren completes a Parallel or Map state whose inputs are
// worked out with the Inspector's stand-in for its children. It reports
// false when the execution has no Inspector: the children run.
func (f *frame) standInChildren(x *Execution) bool {
	ins := x.inspector()
	if ins == nil {
		return false
	}
	s := f.state
	result, fl := ins.Children(s)
	// FailedIterations tests the state's tolerated failure threshold
	// (maprun.Tolerance's rule): a state that sets none is not tested, and
	// answers with its children's results, as AWS's TestState does.
	if fl == nil && s.Type == asl.TypeMap && f.tol.IsSet() {
		if n := x.Opts.Inspect.FailedIterations; n > 0 {
			total := len(f.items)
			if arr, ok := result.([]any); ok && f.items == nil {
				total = len(arr)
			}
			if f.tol.Exceeded(n, total) {
				fl = maprun.Failure()
			}
		}
	}
	f.children, f.items, f.results = nil, nil, nil
	f.wait = waitNone
	if fl != nil {
		f.stateFailed(x, fl)
	} else {
		f.exit(x, result, true)
	}
	return true
}

// inspectItems tells the inspector a Map state's items, and their inputs
// after ItemSelector when the state has one. The error is the
// ItemSelector's.
func (f *frame) inspectItems(x *Execution) error {
	s := f.state
	if s.QueryLanguage != asl.JSONata && f.items != nil {
		f.note(x, AfterItemsPath, f.items)
	}
	if f.items == nil || (s.ItemSelector == nil && (s.JSONata == nil || s.JSONata.ItemSelector == nil)) {
		return nil
	}
	selected := make([]any, len(f.items))
	for i := range f.items {
		in, _, err := f.itemInput(x, i)
		if err != nil {
			return err
		}
		selected[i] = in
	}
	f.note(x, AfterItemSelector, selected)
	return nil
}
