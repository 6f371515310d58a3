package teststate

import (
	"context"
	"errors"
	"strings"
	"time"

	"stepwise/asl"
	"stepwise/asl/dataflow"
	"stepwise/asl/jsonpath"
	"stepwise/asl/payload"
	"stepwise/interp"
	"stepwise/jsonvalue"
	"stepwise/service"
	"stepwise/stepwisetype"
)

// Test statuses.
const (
	StatusSucceeded   = "SUCCEEDED"
	StatusFailed      = "FAILED"
	StatusRetriable   = "RETRIABLE"
	StatusCaughtError = "CAUGHT_ERROR"
)

// enteredEventID is the id of the StateEntered event of the tested state
// in the one-state execution it runs in, as States.Runtime causes cite it.
const enteredEventID = 2

// exec runs one state.
type exec struct {
	r   *Runner
	t   *test
	st  *asl.State
	env *jsonpath.Env
	out *service.TestStateOutput
	// insp collects the inspection data; nil at INFO.
	insp *service.InspectionData
}

func (r *Runner) run(ctx context.Context, t *test) (*service.TestStateOutput, error) {
	x := &exec{r: r, t: t, st: t.state, out: &service.TestStateOutput{}}
	x.env = &jsonpath.Env{Input: t.input, Context: t.context, Vars: t.vars.Get}
	if t.inspect {
		x.insp = &service.InspectionData{}
		x.out.InspectionData = x.insp
	}
	x.note(stageInput, t.input)
	if err := x.state(ctx); err != nil {
		return nil, err
	}
	return x.out, nil
}

// stage names a data-flow step reported in the inspection data.
type stage int

const (
	stageInput stage = iota
	stageAfterInputPath
	stageAfterParameters
	stageAfterArguments
	stageResult
	stageAfterResultSelector
	stageAfterResultPath
	stageAfterItemsPath
	stageAfterItemSelector
	stageVariables
)

// note reports what a step produced: the JSON text of v. It does nothing
// at INFO.
func (x *exec) note(s stage, v any) {
	d := x.insp
	if d == nil {
		return
	}
	var dst **string
	switch s {
	case stageInput:
		dst = &d.Input
	case stageAfterInputPath:
		dst = &d.AfterInputPath
	case stageAfterParameters:
		dst = &d.AfterParameters
	case stageAfterArguments:
		dst = &d.AfterArguments
	case stageResult:
		dst = &d.Result
	case stageAfterResultSelector:
		dst = &d.AfterResultSelector
	case stageAfterResultPath:
		dst = &d.AfterResultPath
	case stageAfterItemsPath:
		dst = &d.AfterItemsPath
	case stageAfterItemSelector:
		dst = &d.AfterItemSelector
	case stageVariables:
		dst = &d.Variables
	default:
		return
	}
	*dst = ptr(jsonvalue.String(v))
}

// state runs the state. Failures of the state become the response; only
// errors of the request (or of Config.Invoke) are returned.
func (x *exec) state(ctx context.Context) error {
	st := x.st
	if st.QueryLanguage == asl.JSONata {
		return x.stateJSONata(ctx)
	}
	switch st.Type {
	case asl.TypePass:
		x.pass()
	case asl.TypeTask:
		return x.task(ctx)
	case asl.TypeChoice:
		x.choice()
	case asl.TypeWait:
		x.wait()
	case asl.TypeSucceed:
		if eff, ok := x.inputPath(); ok {
			x.exitWith(eff, nil, "")
		}
	case asl.TypeFail:
		x.failState()
	case asl.TypeParallel:
		x.parallel()
	case asl.TypeMap:
		x.mapState()
	}
	return nil
}

// inputPath applies InputPath to the raw input and records it.
func (x *exec) inputPath() (any, bool) {
	eff, err := dataflow.Select(x.st.InputPath, x.t.input, x.env)
	if err != nil {
		x.failed(err)
		return nil, false
	}
	x.note(stageAfterInputPath, eff)
	return eff, true
}

func (x *exec) pass() {
	st := x.st
	eff, err := dataflow.Select(st.InputPath, x.t.input, x.env)
	if err != nil {
		x.failed(err)
		return
	}
	if st.HasResult {
		// AWS reports neither afterInputPath nor afterParameters here.
		x.note(stageResult, st.Result)
		x.exit(st.Result, false)
		return
	}
	x.note(stageAfterInputPath, eff)
	result, err := dataflow.Template(st.Parameters, eff, x.env)
	if err != nil {
		x.failed(err)
		return
	}
	x.note(stageAfterParameters, result)
	x.exit(result, false)
}

func (x *exec) task(ctx context.Context) error {
	st := x.st
	eff, ok := x.inputPath()
	if !ok {
		return nil
	}
	params, err := dataflow.Template(st.Parameters, eff, x.env)
	if err != nil {
		x.failed(err)
		return nil
	}
	x.note(stageAfterParameters, params)
	env := x.envWith(eff)
	timeout, _, err := interp.ResolveIntField(&interp.IntFieldSpec{Field: st.Timeout, Name: "TimeoutSecondsPath"}, env)
	if err != nil {
		x.failed(err)
		return nil
	}
	heartbeat, _, err := interp.ResolveIntField(&interp.IntFieldSpec{Field: st.Heartbeat, Name: "HeartbeatSecondsPath"}, env)
	if err != nil {
		x.failed(err)
		return nil
	}
	result, ok, err := x.call(ctx, params, timeout, heartbeat)
	if ok {
		x.exit(result, true)
	}
	return err
}

// call calls a Task state's resource with its effective parameters: the
// mock stands for the call, or Config.Invoke makes it. The result is
// reported; ok is false when the state failed (the failure is handled)
// or the request is refused (err).
func (x *exec) call(ctx context.Context, params any, timeout, heartbeat int64) (result any, ok bool, err error) {
	st := x.st
	switch m := x.t.mock; {
	case m != nil && m.failure != nil:
		x.handle(m.failure)
		return nil, false, nil
	case m != nil:
		result = m.result
	case x.r.cfg.Invoke == nil:
		return nil, false, errNoIntegration(st.Resource)
	default:
		call := &Call{StateName: st.Name, Resource: st.Resource, Parameters: params,
			TimeoutSeconds: timeout, HeartbeatSeconds: heartbeat}
		if x.t.in.RoleArn != nil {
			call.RoleArn = *x.t.in.RoleArn
		}
		result, err = x.r.cfg.Invoke(ctx, call)
		var fl *stepwisetype.Failure
		switch {
		case errors.As(err, &fl):
			x.handle(fl)
			return nil, false, nil
		case err != nil:
			return nil, false, err
		}
	}
	x.note(stageResult, result)
	if dataflow.Size(result) > x.r.cfg.PayloadLimit {
		x.handle(x.dataLimit())
		return nil, false, nil
	}
	return result, true, nil
}

func (x *exec) choice() {
	st := x.st
	eff, ok := x.inputPath()
	if !ok {
		return
	}
	env := x.envWith(eff)
	next, assign, matched := st.Default, st.Assign, false
	for _, rule := range st.Choices {
		ok, err := interp.EvalChoiceRule(rule, env)
		if err != nil {
			x.failed(err)
			return
		}
		if ok {
			next, matched = rule.Next, true
			if rule.Assign != nil {
				assign = rule.Assign
			}
			break
		}
	}
	if !matched && st.Default == "" {
		x.fail(stepwisetype.Failuref(stepwisetype.ErrorNoChoiceMatched, "No Matches! (at state '%s')", st.Name))
		return
	}
	x.exitWithInput(eff, assign, next)
}

// wait checks the Wait state's time, without waiting for it.
func (x *exec) wait() {
	st := x.st
	eff, ok := x.inputPath()
	if !ok {
		return
	}
	env := x.envWith(eff)
	switch {
	case st.SecondsPath != nil:
		v, err := st.SecondsPath.Eval(env)
		if err != nil {
			x.failed(dataflow.InvalidPath(st.SecondsPath, err))
			return
		}
		n, ok := v.(jsonvalue.Number)
		i, isInt := n.Int64()
		switch {
		case !ok || !isInt || !n.IsInteger() || strings.ContainsAny(string(n), ".eE"):
			x.failed(stepwisetype.Failuref(stepwisetype.ErrorRuntime,
				"The SecondsPath parameter cannot be parsed as a long value: %s == %s", st.SecondsPath, interp.ScalarText(v)))
			return
		case i < 0:
			x.failed(stepwisetype.Failuref(stepwisetype.ErrorRuntime,
				"The SecondsPath parameter references a negative value: %s == %s", st.SecondsPath, interp.ScalarText(v)))
			return
		}
	case st.TimestampPath != nil:
		v, err := st.TimestampPath.Eval(env)
		if err != nil {
			x.failed(dataflow.InvalidPath(st.TimestampPath, err))
			return
		}
		s, _ := v.(string)
		if _, ok := interp.ParseTimestamp(s); !ok {
			x.failed(stepwisetype.Failuref(stepwisetype.ErrorRuntime,
				"The TimestampPath parameter does not reference a valid ISO-8601 extended offset date-time format string: %s == %s", st.TimestampPath, interp.ScalarText(v)))
			return
		}
	}
	x.exitWithInput(eff, st.Assign, st.Next)
}

func (x *exec) failState() {
	st := x.st
	// A Fail state has no InputPath; AWS reports the input as its result.
	x.note(stageAfterInputPath, x.t.input)
	fl := &stepwisetype.Failure{Name: st.Error, Cause: st.Cause, HasCause: st.HasCause}
	env := x.envWith(x.t.input)
	if st.ErrorPath != nil {
		v, err := st.ErrorPath.Eval(env, "ErrorPath")
		if err != nil {
			x.failed(pathFieldError(st.ErrorPath, "ErrorPath", env, err))
			return
		}
		fl.Name = interp.ScalarText(v)
	}
	if st.CausePath != nil {
		v, err := st.CausePath.Eval(env, "CausePath")
		if err != nil {
			x.failed(pathFieldError(st.CausePath, "CausePath", env, err))
			return
		}
		fl.Cause, fl.HasCause = interp.ScalarText(v), true
	}
	x.fail(fl)
}

// pathFieldError reports a path field (ErrorPath, CausePath) that selects
// nothing the way AWS does: naming the field.
func pathFieldError(e *payload.Expr, field string, env *jsonpath.Env, err error) error {
	if e.Path == nil {
		return err
	}
	return payload.PathError(e.Path, field, env, err)
}

// parallel runs a Parallel state on its mocked result: AWS reports neither
// afterInputPath nor afterParameters for it.
func (x *exec) parallel() {
	st := x.st
	eff, err := dataflow.Select(st.InputPath, x.t.input, x.env)
	if err == nil {
		_, err = dataflow.Template(st.Parameters, eff, x.env)
	}
	if err != nil {
		x.failed(err)
		return
	}
	if x.t.mock.failure != nil {
		x.handle(x.t.mock.failure)
		return
	}
	x.exit(x.t.mock.result, true)
}

// mapState runs a Map state on its mocked result: the items are worked
// out and reported, and the mocked result stands for the iterations'.
func (x *exec) mapState() {
	st := x.st
	eff, ok := x.inputPath()
	if !ok {
		return
	}
	env := x.envWith(eff)
	items, ok := x.items(eff, env)
	if !ok {
		return
	}
	mc, _, err := interp.ResolveIntField(&interp.IntFieldSpec{Field: st.MaxConcurrency, Name: "MaxConcurrencyPath"}, env)
	if err != nil {
		x.failed(err)
		return
	}
	x.noteMaxConcurrency(mc)
	var tol tolerance
	tol.count, tol.hasCount, err = interp.ResolveIntField(&interp.IntFieldSpec{Field: st.ToleratedCount, Name: "ToleratedFailureCountPath"}, env)
	if err != nil {
		x.failed(err)
		return
	}
	if tol.percent, err = interp.ResolvePercentField(st.TolerancePercent, env); err != nil {
		x.failed(err)
		return
	}
	if result, ok := x.mapResult(items, tol); ok {
		x.exit(result, true)
	}
}

// tolerance is a Map state's tolerated failures: at most count iterations
// (when hasCount), at most percent % of them (when percent ≥ 0).
type tolerance struct {
	count    int64
	hasCount bool
	percent  float64
}

// noteMaxConcurrency reports a Map state's MaxConcurrency.
func (x *exec) noteMaxConcurrency(mc int64) {
	if x.insp != nil {
		x.insp.MaxConcurrency = ptr(int(mc))
	}
}

// mapResult reports a Map state's tolerated failures and returns the
// mocked result of its iterations. ok is false when the state failed:
// the mock is an error, or stateConfiguration.mapIterationFailureCount
// exceeds the tolerance (the failure is handled).
func (x *exec) mapResult(items []any, tol tolerance) (result any, ok bool) {
	if x.insp != nil {
		if tol.hasCount {
			x.insp.ToleratedFailureCount = ptr(int(tol.count))
		}
		if tol.percent >= 0 {
			x.insp.ToleratedFailurePercentage = ptr(tol.percent)
		}
	}
	m := x.t.mock
	if m.failure != nil {
		x.handle(m.failure)
		return nil, false
	}
	if n := x.t.failures; n != nil && *n > 0 {
		total := len(items)
		if arr, ok := m.result.([]any); ok && items == nil {
			total = len(arr)
		}
		exceeded := tol.hasCount && int64(*n) > tol.count
		if tol.percent >= 0 && total > 0 && float64(*n)*100/float64(total) > tol.percent {
			exceeded = true
		}
		if exceeded {
			x.handle(stepwisetype.NewFailure(stepwisetype.ErrorExceedToleratedFailure,
				"The specified tolerated failure threshold was exceeded"))
			return nil, false
		}
	}
	return m.result, true
}

// items works out a Map state's items: read by the ItemReader (from the
// stateConfiguration's mapItemReaderData), or selected by ItemsPath, then
// shaped by ItemSelector. It returns nil items when they are not known.
func (x *exec) items(eff any, env *jsonpath.Env) ([]any, bool) {
	st := x.st
	var items []any
	if st.ItemReader != nil {
		if items = x.readerItems(); items == nil {
			return nil, true
		}
	} else {
		v, path := eff, "$"
		if st.ItemsPath != nil {
			var err error
			if v, err = st.ItemsPath.Eval(env); err != nil {
				x.failed(dataflow.InvalidPath(st.ItemsPath, err))
				return nil, false
			}
			path = st.ItemsPath.String()
			if strings.HasPrefix(path, "$$") {
				path = path[1:]
			}
		}
		arr, ok := v.([]any)
		if !ok {
			x.fail(stepwisetype.Failuref(stepwisetype.ErrorRuntime, "Reference path \"%s\" must point to array.", path))
			return nil, false
		}
		items = arr
		x.note(stageAfterItemsPath, items)
	}
	if st.ItemSelector != nil {
		selected := make([]any, len(items))
		for i, item := range items {
			e := *env
			e.Context = mapContext(x.t.context, i, item)
			v, err := st.ItemSelector.Eval(&e)
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

// readerItems are the items a Map state's ItemReader reads: the
// stateConfiguration's mapItemReaderData, nil when it gives none.
func (x *exec) readerItems() []any {
	data := x.t.in.StateConfiguration
	if data == nil || data.MapItemReaderData == nil {
		return nil
	}
	v, err := jsonvalue.ParseString(*data.MapItemReaderData)
	arr, ok := v.([]any)
	if err != nil || !ok {
		return nil
	}
	return arr
}

// mapContext is the context object of a Map iteration: the state's, with
// Map.Item.Index and Map.Item.Value.
func mapContext(base any, index int, value any) any {
	c := jsonvalue.NewObject(5)
	if obj, ok := base.(*jsonvalue.Object); ok {
		c = obj.Clone()
	}
	item := jsonvalue.NewObject(2)
	item.Set("Index", jsonvalue.NumberFromInt(int64(index)))
	item.Set("Value", value)
	m := jsonvalue.NewObject(1)
	m.Set("Item", item)
	c.Set("Map", m)
	return c
}

// exit completes a state with its result: ResultSelector (when selector),
// Assign, ResultPath and OutputPath.
func (x *exec) exit(result any, selector bool) {
	st := x.st
	if selector && st.ResultSelector != nil {
		var err error
		if result, err = dataflow.Template(st.ResultSelector, result, x.env); err != nil {
			x.failed(err)
			return
		}
	}
	x.note(stageAfterResultSelector, result)
	assigned, err := x.assign(st.Assign, result)
	if err != nil {
		x.failed(err)
		return
	}
	out, err := dataflow.Merge(st.ResultPath, x.t.input, result)
	if err != nil {
		x.failed(err)
		return
	}
	x.note(stageAfterResultPath, out)
	if out, err = dataflow.Select(st.OutputPath, out, x.env); err != nil {
		x.failed(err)
		return
	}
	x.exitWith(out, assigned, st.Next)
}

// exitWithInput completes a state that has no result (Choice, Wait):
// Assign and OutputPath read the effective input.
func (x *exec) exitWithInput(eff any, assign *payload.Template, next string) {
	assigned, err := x.assign(assign, eff)
	if err != nil {
		x.failed(err)
		return
	}
	out, err := dataflow.Select(x.st.OutputPath, eff, x.env)
	if err != nil {
		x.failed(err)
		return
	}
	x.exitWith(out, assigned, next)
}

// exitWith ends the test with the state's output.
func (x *exec) exitWith(out any, assigned *jsonvalue.Object, next string) {
	text := jsonvalue.String(out)
	if len(text) > x.r.cfg.PayloadLimit {
		x.handle(x.dataLimit())
		return
	}
	x.out.Status = StatusSucceeded
	x.out.Output = &text
	if next != "" {
		x.out.NextState = &next
	}
	x.setVariables(assigned)
}

// assign evaluates an Assign template with "$" bound to value.
func (x *exec) assign(t *payload.Template, value any) (*jsonvalue.Object, error) {
	if t == nil {
		return nil, nil
	}
	v, err := t.Eval(x.envWith(value))
	if err != nil {
		return nil, err
	}
	obj, _ := v.(*jsonvalue.Object)
	return obj, nil
}

// setVariables reports the variables after the state: those the test
// started with, updated by the state's assignments.
func (x *exec) setVariables(assigned *jsonvalue.Object) {
	vars := x.t.vars
	if assigned.Len() > 0 {
		vars = vars.Clone()
		for k, v := range assigned.All() {
			vars.Set(k, v)
		}
	}
	if vars.Len() > 0 {
		x.note(stageVariables, vars)
	}
}

// envWith is the environment with "$" bound to v.
func (x *exec) envWith(v any) *jsonpath.Env {
	e := *x.env
	e.Input = v
	return &e
}

// fail ends the test with a failure no Retry or Catch sees.
func (x *exec) fail(fl *stepwisetype.Failure) {
	x.out.Status = StatusFailed
	x.out.Error, x.out.Cause = nil, nil
	if fl.Name != "" {
		x.out.Error = ptr(fl.Name)
	}
	if fl.HasCause {
		x.out.Cause = ptr(fl.Cause)
	}
	x.out.Output, x.out.NextState = nil, nil
	x.setVariables(nil)
}

// failed handles an evaluation error of the state (see asFailure).
func (x *exec) failed(err error) { x.handle(asFailure(err, x.st)) }

// handle handles a failure of the state: the first retrier that matches
// its error retries it while it has attempts left (RETRIABLE); otherwise
// the first catcher that matches catches it (CAUGHT_ERROR); otherwise the
// state FAILED. States.Runtime is never retried or caught.
func (x *exec) handle(fl *stepwisetype.Failure) {
	x.fail(fl)
	if fl.Name == stepwisetype.ErrorRuntime {
		return
	}
	st := x.st
	for i, r := range st.Retry {
		if !interp.ErrorMatches(r.ErrorEquals, fl.Name) {
			continue
		}
		details := x.errorDetails()
		details.RetryIndex = ptr(i)
		if x.t.retries < r.MaxAttempts {
			x.out.Status = StatusRetriable
			delay := interp.Backoff(r, x.t.retries, "", st.Name, int(x.t.retries))
			details.RetryBackoffIntervalSeconds = ptr(int(delay / time.Second))
			return
		}
		break
	}
	for i, c := range st.Catch {
		if !interp.ErrorMatches(c.ErrorEquals, fl.Name) {
			continue
		}
		x.errorDetails().CatchIndex = ptr(i)
		errOut := interp.ErrorOutput(fl)
		out, assigned, err := x.caught(c, errOut)
		if err != nil {
			x.fail(asFailure(err, st))
			return
		}
		text := jsonvalue.String(out)
		if len(text) > x.r.cfg.PayloadLimit {
			x.fail(x.dataLimit())
			return
		}
		x.out.Status = StatusCaughtError
		x.out.Output = &text
		x.out.NextState = ptr(c.Next)
		x.setVariables(assigned)
		return
	}
}

// caught works out the output and the assignments of a state whose error
// catcher c caught. In JSONPath, Assign reads the error output as "$" and
// ResultPath puts it into the input; in JSONata, Assign and Output read it
// as $states.errorOutput, and it is the output when the catcher has no
// Output.
func (x *exec) caught(c *asl.Catcher, errOut *jsonvalue.Object) (out any, assigned *jsonvalue.Object, err error) {
	if x.st.QueryLanguage == asl.JSONata {
		env := x.jenv("errorOutput", errOut)
		if assigned, err = interp.JSONataAssign(c.JSONata, env); err != nil {
			return nil, nil, err
		}
		out = errOut
		if c.JSONata != nil && c.JSONata.Output != nil {
			if out, err = c.JSONata.Output.Eval(env, "Output"); err != nil {
				return nil, nil, err
			}
		}
		return out, assigned, nil
	}
	if assigned, err = x.assign(c.Assign, errOut); err != nil {
		return nil, nil, err
	}
	if out, err = dataflow.Merge(c.ResultPath, x.t.input, errOut); err != nil {
		return nil, nil, err
	}
	return out, assigned, nil
}

// errorDetails returns the inspection's error details, a scratch value at
// INFO.
func (x *exec) errorDetails() *service.InspectionErrorDetails {
	if x.insp == nil {
		return &service.InspectionErrorDetails{}
	}
	if x.insp.ErrorDetails == nil {
		x.insp.ErrorDetails = &service.InspectionErrorDetails{}
	}
	return x.insp.ErrorDetails
}

// dataLimit is the failure of a state whose result or output is too big.
func (x *exec) dataLimit() *stepwisetype.Failure {
	return stepwisetype.Failuref(stepwisetype.ErrorDataLimitExceeded,
		"The state/task '%s' returned a result with a size exceeding the maximum number of bytes service limit.", x.st.Name)
}

// asFailure turns an evaluation error into the failure AWS reports:
// States.Runtime causes name the state, as in an execution.
func asFailure(err error, st *asl.State) *stepwisetype.Failure {
	return interp.StateFailure(err, st, enteredEventID)
}

func ptr[T any](v T) *T { return &v }
