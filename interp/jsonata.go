package interp

import (
	"fmt"
	"time"

	"stepwise/asl"
	"stepwise/asl/jsonata"
	"stepwise/asl/jsonatafn"
	"stepwise/asl/payload"
	"stepwise/failure"
	"stepwise/history"
	"stepwise/jsonvalue"
)

// jenv returns the JSONata environment of frame f's state: $states.input
// is the state's input, $states.context the context object (with mapCtx as
// its Map member), and extra, when set, adds $states.result or
// $states.errorOutput.
func (x *Execution) jenv(f *frame, mapCtx *jsonvalue.Object, extra string, extraVal any) *payload.JSONataEnv {
	env := &payload.JSONataEnv{
		Input:      f.rawInput,
		Context:    f.contextFunc(x, mapCtx),
		ResultName: extra,
		Result:     extraVal,
		Vars:       f.varsFunc(),
		Now:        x.clockFunc(),
		Funcs:      x.jsonataFuncs(),
		BudgetFunc: x.meterFunc(),
		Shared:     &x.jshared,
	}
	return env
}

// clockFunc returns the clock of JSONata's $now and $millis, the time of
// the step, made once.
func (x *Execution) clockFunc() func() time.Time {
	if x.clock == nil {
		x.clock = func() time.Time { return x.now }
	}
	return x.clock
}

// jsonataFuncs returns the Step Functions functions of JSONata mode
// ($partition, $uuid, $random, ...), drawing on the execution's
// deterministic random source so a replay draws the same numbers.
func (x *Execution) jsonataFuncs() map[string]*jsonata.Func {
	if x.jfuncs == nil {
		x.jfuncs = jsonatafn.Funcs(jsonatafn.Env{Rand: func() float64 { return x.rand().Float64() }})
	}
	return x.jfuncs
}

// execJSONata runs the current state of a JSONata frame from its start.
func (f *frame) execJSONata(x *Execution) {
	s := f.state
	f.effInput = f.rawInput
	switch s.Type {
	case asl.TypePass, asl.TypeSucceed:
		f.exitJSONata(x, s.JSONata, nil, false, s.Next)
	case asl.TypeFail:
		f.execFailJSONata(x)
	case asl.TypeChoice:
		f.execChoiceJSONata(x)
	case asl.TypeWait:
		f.execWaitJSONata(x)
	case asl.TypeTask:
		f.execTask(x, nil)
	case asl.TypeParallel, asl.TypeMap:
		f.execChildren(x, nil)
	default:
		f.stateFailed(x, asFailure(fmt.Errorf("unsupported state type %q", s.Type), s, f.enteredID))
	}
}

// exitJSONata completes a JSONata state: Assign and Output are evaluated
// against the same variables (those before the state), with
// $states.result bound when the state has a result. Without Output the
// state's output is its result, or its input when it has none.
func (f *frame) exitJSONata(x *Execution, j *asl.JSONataFields, result any, hasResult bool, next string) {
	s := f.state
	var env *payload.JSONataEnv
	if hasResult {
		env = x.jenv(f, nil, "result", result)
	} else {
		env = x.jenv(f, nil, "", nil)
	}
	assigned, err := jsonataAssign(j, env)
	if err != nil {
		f.stateFailed(x, asFailure(err, s, f.enteredID))
		return
	}
	out := f.rawInput
	if hasResult {
		out = result
	}
	if j != nil && j.Output != nil {
		if out, err = j.Output.Eval(env, "Output"); err != nil {
			f.stateFailed(x, asFailure(err, s, f.enteredID))
			return
		}
	}
	f.exitWithOutput(x, out, assigned, next)
}

// jsonataAssign evaluates the Assign of j, if any.
func jsonataAssign(j *asl.JSONataFields, env *payload.JSONataEnv) (*jsonvalue.Object, error) {
	if j == nil || j.Assign == nil {
		return nil, nil
	}
	v, err := j.Assign.Eval(env, "Assign")
	if err != nil {
		return nil, err
	}
	obj, _ := v.(*jsonvalue.Object)
	return obj, nil
}

func (f *frame) execFailJSONata(x *Execution) {
	s := f.state
	fl, err := jsonataFailure(s, x.jenv(f, nil, "", nil))
	if err != nil {
		f.stateFailed(x, asFailure(err, s, f.enteredID))
		return
	}
	f.finishFailure(x, fl)
}

// jsonataFailure is the failure a JSONata Fail state raises: its Error and
// Cause, given literally or as expressions that must yield strings.
func jsonataFailure(s *asl.State, env *payload.JSONataEnv) (*failure.Failure, error) {
	fl := &failure.Failure{Name: s.Error, Cause: s.Cause, HasCause: s.HasCause}
	for _, fld := range []struct {
		t     *payload.JSONata
		name  string
		apply func(string)
	}{
		{s.JSONata.Error, "Error", func(v string) { fl.Name = v }},
		{s.JSONata.Cause, "Cause", func(v string) { fl.Cause, fl.HasCause = v, true }},
	} {
		if fld.t == nil {
			continue
		}
		v, err := fld.t.Eval(env, fld.name)
		if err != nil {
			return nil, err
		}
		str, ok := v.(string)
		if !ok {
			return nil, unexpectedType(fld.t, fld.name, "string", v)
		}
		fld.apply(str)
	}
	return fl, nil
}

func (f *frame) execChoiceJSONata(x *Execution) {
	s := f.state
	j, next, matched, err := jsonataChoice(s, x.jenv(f, nil, "", nil))
	if err != nil {
		f.stateFailed(x, asFailure(err, s, f.enteredID))
		return
	}
	if !matched {
		f.stateFailed(x, failure.New(failure.NoChoiceMatched,
			fmt.Sprintf("No Matches! (at state '%s')", s.Name)))
		return
	}
	f.exitJSONata(x, j, nil, false, next)
}

// jsonataChoice evaluates the Conditions of a JSONata Choice state in
// order and returns the fields the state exits with (the state's, with
// the matching rule's Assign and Output) and the next state: the first
// matching rule's, or the Default. matched is false when no rule matches
// and there is no Default.
func jsonataChoice(s *asl.State, env *payload.JSONataEnv) (j *asl.JSONataFields, next string, matched bool, err error) {
	for _, r := range s.Choices {
		v, err := r.JSONata.Condition.Eval(env, "Condition")
		if err != nil {
			return nil, "", false, err
		}
		b, ok := v.(bool)
		if !ok {
			return nil, "", false, unexpectedType(r.JSONata.Condition, "Condition", "boolean", v)
		}
		if b {
			j := *s.JSONata
			if r.JSONata.Assign != nil {
				j.Assign = r.JSONata.Assign
			}
			if r.JSONata.Output != nil {
				j.Output = r.JSONata.Output
			}
			return &j, r.Next, true, nil
		}
	}
	return s.JSONata, s.Default, s.Default != "", nil
}

func (f *frame) execWaitJSONata(x *Execution) {
	s := f.state
	var until time.Time
	switch {
	case s.Seconds != nil:
		until = x.now.Add(seconds(*s.Seconds))
	case s.Timestamp != nil:
		until = *s.Timestamp
	case s.JSONata.Wait != nil:
		t := s.JSONata.Wait
		v, err := t.Eval(x.jenv(f, nil, "", nil), s.WaitExprField)
		if err != nil {
			f.stateFailed(x, asFailure(err, s, f.enteredID))
			return
		}
		if s.WaitExprField == "Timestamp" {
			ts, err := jsonataTimestamp(v)
			if err != nil {
				f.stateFailed(x, asFailure(err, s, f.enteredID))
				return
			}
			until = ts
		} else {
			n, err := jsonataCount(t, "Seconds", v, 0)
			if err != nil {
				f.stateFailed(x, asFailure(err, s, f.enteredID))
				return
			}
			until = x.now.Add(seconds(n))
		}
	}
	if !until.After(x.now) {
		f.waitDone(x)
		return
	}
	id := x.newID("wait")
	f.block(x, waitTimer, id)
	x.cmds = append(x.cmds, Command{Kind: StartTimer, ID: id, At: until})
}

// jsonataTimestamp reads v, the value of a Wait state's Timestamp
// expression, as a time.
func jsonataTimestamp(v any) (time.Time, error) {
	str, _ := v.(string)
	ts, ok := ParseTimestamp(str)
	if !ok {
		fl := failure.Newf(failure.QueryEvaluationError,
			"The Timestamp field cannot be parsed as an ISO-8601 extended offset date-time format string: %s", scalarText(v))
		fl.Location = "Timestamp"
		return time.Time{}, fl
	}
	return ts, nil
}

// jsonataCount checks that v, the value of a count field's expression, is
// an integer of at least min.
func jsonataCount(t *payload.JSONata, field string, v any, min int64) (int64, error) {
	n, ok := v.(jsonvalue.Number)
	i, isInt := n.Int64()
	if !ok || !isInt || !n.IsInteger() {
		return 0, unexpectedType(t, field, "integer", v)
	}
	if i < min {
		return 0, failure.Newf(failure.QueryEvaluationError,
			"The JSONata expression '%s' specified for the field '%s' returned a value below %d: %s", t.Source(), field, min, jsonvalue.String(v))
	}
	return i, nil
}

// jsonataInt evaluates an optional count field of a JSONata state: a
// literal, or an expression.
func jsonataInt(f *asl.IntField, t *payload.JSONata, field string, min int64, env *payload.JSONataEnv) (int64, bool, error) {
	if f == nil {
		return 0, false, nil
	}
	if f.Value != nil {
		return *f.Value, true, nil
	}
	if t == nil {
		return 0, false, nil
	}
	v, err := t.Eval(env, field)
	if err != nil {
		return 0, false, err
	}
	n, err := jsonataCount(t, field, v, min)
	return n, err == nil, err
}

// unexpectedType is the failure of an expression whose value has the wrong
// type for its field, worded as AWS words it.
func unexpectedType(t *payload.JSONata, field, want string, v any) error {
	src := t.Source()
	if src == "" {
		src = jsonvalue.String(v)
	}
	fl := failure.Newf(failure.QueryEvaluationError,
		"The JSONata expression '%s' specified for the field '%s' returned an unexpected result type. Expected '%s', but was '%s' for value: %s",
		src, field, want, jsonvalue.TypeName(v), jsonvalue.String(v))
	fl.Location = field
	return fl
}

// catchJSONata works out what catcher c of a JSONata state assigns and
// outputs: its Assign and Output see $states.errorOutput, which is also the
// output when the catcher has no Output.
func (f *frame) catchJSONata(x *Execution, c *asl.Catcher, errOut *jsonvalue.Object) (*jsonvalue.Object, any, error) {
	env := x.jenv(f, nil, "errorOutput", errOut)
	assigned, err := jsonataAssign(c.JSONata, env)
	if err != nil {
		return nil, nil, err
	}
	if c.JSONata == nil || c.JSONata.Output == nil {
		return assigned, errOut, nil
	}
	out, err := c.JSONata.Output.Eval(env, "Output")
	return assigned, out, err
}

// startFailedJSONata fails a JSONata Parallel or Map state whose start
// (Arguments, Items, ItemSelector, counts) cannot be evaluated: AWS writes
// the EvaluationFailed event, then the state's failed event.
func (f *frame) startFailedJSONata(x *Execution, err error) {
	s := f.state
	fl := asFailure(err, s, f.enteredID)
	f.evalReported = f.reportEvaluation(x, fl)
	typ := history.EventParallelStateFailed
	if s.Type == asl.TypeMap {
		typ = history.EventMapStateFailed
	}
	x.emit(f, history.Event{Type: typ})
	f.stateFailed(x, fl)
	f.evalReported = false
}

// reportEvaluation writes the EvaluationFailed event of a JSONata
// evaluation failure, and reports whether it did. A failure while the
// state is being entered (nothing written since its entered event) is
// linked, as AWS links it, to the event before the entered event; a Wait
// state's to its entered event.
func (f *frame) reportEvaluation(x *Execution, fl *failure.Failure) bool {
	if fl.Name != failure.QueryEvaluationError {
		return false
	}
	d := &history.EvaluationFailedEventDetails{Error: ptr(fl.Name), State: f.state.Name, Location: fl.Location}
	if fl.HasCause {
		d.Cause = ptr(fl.Cause)
	}
	ev := history.Event{Type: history.EventEvaluationFailed, EvaluationFailedEventDetails: d}
	if f.last == f.enteredID && f.state.Type != asl.TypeWait {
		ev.PreviousEventID = f.enteredPrev
		f.last = x.emitLinked(f, ev)
		return true
	}
	x.emit(f, ev)
	return true
}
