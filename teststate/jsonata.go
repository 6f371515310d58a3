package teststate

import (
	"context"

	"stepwise/asl"
	"stepwise/asl/payload"
	"stepwise/interp"
	"stepwise/jsonvalue"
	"stepwise/stepwisetype"
)

// stateJSONata runs a JSONata state as the interpreter runs it (see
// package interp's JSONata semantics): expressions read $states.input (the
// raw input), $states.context, the variables, and $states.result or
// $states.errorOutput where the state has them. AWS reports the input, a
// Task's afterArguments and result, a Map's counts and the variables.
func (x *exec) stateJSONata(ctx context.Context) error {
	st := x.st
	switch st.Type {
	case asl.TypePass, asl.TypeSucceed:
		x.exitJSONata(st.JSONata, nil, false, st.Next)
	case asl.TypeTask:
		return x.taskJSONata(ctx)
	case asl.TypeChoice:
		x.choiceJSONata()
	case asl.TypeWait:
		x.waitJSONata()
	case asl.TypeFail:
		fl, err := interp.JSONataFailure(st, x.jenv("", nil))
		if err != nil {
			x.failed(err)
			return nil
		}
		x.fail(fl)
	case asl.TypeParallel:
		x.parallelJSONata()
	case asl.TypeMap:
		x.mapJSONata()
	}
	return nil
}

// jenv is the JSONata environment of the state; extra, when set, adds
// $states.result or $states.errorOutput.
func (x *exec) jenv(extra string, extraVal any) *payload.JSONataEnv {
	return x.jenvIn(x.t.context, extra, extraVal)
}

// jenvIn is the JSONata environment with context as $states.context.
func (x *exec) jenvIn(context any, extra string, extraVal any) *payload.JSONataEnv {
	return &payload.JSONataEnv{
		Input:      x.t.input,
		Context:    func() any { return context },
		ResultName: extra,
		Result:     extraVal,
		Vars:       x.t.vars.Get,
		Funcs:      x.r.funcs,
		Now:        x.r.cfg.Now,
	}
}

// exitJSONata completes a JSONata state: Assign and Output read the
// variables the test started with, and $states.result when the state has
// a result. Without Output the output is the result, or the input.
func (x *exec) exitJSONata(j *asl.JSONataFields, result any, hasResult bool, next string) {
	env := x.jenv("", nil)
	if hasResult {
		env = x.jenv("result", result)
	}
	assigned, err := interp.JSONataAssign(j, env)
	if err != nil {
		x.failed(err)
		return
	}
	out := x.t.input
	if hasResult {
		out = result
	}
	if j != nil && j.Output != nil {
		if out, err = j.Output.Eval(env, "Output"); err != nil {
			x.failed(err)
			return
		}
	}
	x.exitWith(out, assigned, next)
}

func (x *exec) taskJSONata(ctx context.Context) error {
	st, j := x.st, x.st.JSONata
	env := x.jenv("", nil)
	params := x.t.input
	if j.Arguments != nil {
		var err error
		if params, err = j.Arguments.Eval(env, "Arguments"); err != nil {
			x.failed(err)
			return nil
		}
	}
	x.note(stageAfterArguments, params)
	timeout, _, err := interp.JSONataInt(st.Timeout, j.Timeout, "TimeoutSeconds", 1, env)
	if err != nil {
		x.failed(err)
		return nil
	}
	heartbeat, _, err := interp.JSONataInt(st.Heartbeat, j.Heartbeat, "HeartbeatSeconds", 1, env)
	if err != nil {
		x.failed(err)
		return nil
	}
	result, ok, err := x.call(ctx, params, timeout, heartbeat)
	if ok {
		x.exitJSONata(j, result, true, st.Next)
	}
	return err
}

func (x *exec) choiceJSONata() {
	st := x.st
	j, next, matched, err := interp.JSONataChoice(st, x.jenv("", nil))
	switch {
	case err != nil:
		x.failed(err)
	case !matched:
		x.fail(stepwisetype.Failuref(stepwisetype.ErrorNoChoiceMatched, "No Matches! (at state '%s')", st.Name))
	default:
		x.exitJSONata(j, nil, false, next)
	}
}

// waitJSONata checks the Wait state's Seconds or Timestamp expression,
// without waiting.
func (x *exec) waitJSONata() {
	st := x.st
	if t := st.JSONata.Wait; t != nil {
		v, err := t.Eval(x.jenv("", nil), st.WaitExprField)
		if err == nil {
			if st.WaitExprField == "Timestamp" {
				_, err = interp.JSONataTimestamp(v)
			} else {
				_, err = interp.JSONataCount(t, "Seconds", v, 0)
			}
		}
		if err != nil {
			x.failed(err)
			return
		}
	}
	x.exitJSONata(st.JSONata, nil, false, st.Next)
}

// parallelJSONata runs a Parallel state on its mocked result: its
// Arguments are evaluated, and AWS reports no afterArguments for it.
func (x *exec) parallelJSONata() {
	st := x.st
	if t := st.JSONata.Arguments; t != nil {
		if _, err := t.Eval(x.jenv("", nil), "Arguments"); err != nil {
			x.failed(err)
			return
		}
	}
	if x.t.mock.failure != nil {
		x.handle(x.t.mock.failure)
		return
	}
	x.exitJSONata(st.JSONata, x.t.mock.result, true, st.Next)
}

// mapJSONata runs a Map state on its mocked result: its items (read by
// the ItemReader or given by Items, the input by default) are worked out
// and shaped by ItemSelector, and its counts are evaluated and reported.
// AWS reports neither the items nor afterArguments for it.
func (x *exec) mapJSONata() {
	st, j := x.st, x.st.JSONata
	env := x.jenv("", nil)
	items, ok := x.itemsJSONata(env)
	if !ok {
		return
	}
	mc, _, err := interp.JSONataInt(st.MaxConcurrency, j.MaxConcurrency, "MaxConcurrency", 0, env)
	if err != nil {
		x.failed(err)
		return
	}
	x.noteMaxConcurrency(mc)
	var tol tolerance
	if tol.count, tol.hasCount, err = interp.JSONataInt(st.ToleratedCount, j.ToleratedCount, "ToleratedFailureCount", 0, env); err != nil {
		x.failed(err)
		return
	}
	if tol.percent, err = interp.JSONataPercent(st, env); err != nil {
		x.failed(err)
		return
	}
	if result, ok := x.mapResult(items, tol); ok {
		x.exitJSONata(j, result, true, st.Next)
	}
}

// itemsJSONata works out a JSONata Map state's items, as items does for
// JSONPath. It returns nil items when they are not known.
func (x *exec) itemsJSONata(env *payload.JSONataEnv) ([]any, bool) {
	st, j := x.st, x.st.JSONata
	var items []any
	switch {
	case st.ItemReader != nil:
		if items = x.readerItems(); items == nil {
			return nil, true
		}
	case j.Items != nil:
		v, err := j.Items.Eval(env, "Items")
		if err != nil {
			x.failed(err)
			return nil, false
		}
		arr, ok := v.([]any)
		if !ok {
			x.failed(interp.UnexpectedType(j.Items, "Items", "array", v))
			return nil, false
		}
		items = arr
	default:
		arr, ok := x.t.input.([]any)
		if !ok {
			x.failed(stepwisetype.Failuref(stepwisetype.ErrorQueryEvaluationError,
				"Map state input must be an array but was: %s", jsonvalue.String(x.t.input)))
			return nil, false
		}
		items = arr
	}
	if j.ItemSelector != nil {
		selected := make([]any, len(items))
		for i, item := range items {
			v, err := j.ItemSelector.Eval(x.jenvIn(mapContext(x.t.context, i, item), "", nil), "ItemSelector")
			if err != nil {
				x.failed(err)
				return nil, false
			}
			selected[i] = v
		}
		x.note(stageAfterItemSelector, selected)
	}
	return items, true
}
