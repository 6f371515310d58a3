package interp

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"stepwise/asl"
	"stepwise/asl/dataflow"
	"stepwise/asl/jsonpath"
	"stepwise/asl/payload"
	"stepwise/failure"
	"stepwise/history"
	"stepwise/jsonvalue"
)

// exec runs the current state from its start.
func (f *frame) exec(x *Execution) {
	s := f.state
	if s.QueryLanguage == asl.JSONata {
		f.execJSONata(x)
		return
	}
	env := x.env(f, nil)
	eff, err := dataflow.Select(s.InputPath, f.rawInput, env)
	if err != nil {
		f.stateFailed(x, asFailure(err, s, f.enteredID))
		return
	}
	f.effInput = eff
	f.note(x, AfterInputPath, eff)
	switch s.Type {
	case asl.TypePass:
		result := eff
		if s.HasResult {
			result = s.Result
			f.note(x, Result, result)
		} else if result, err = dataflow.Template(s.Parameters, eff, env); err != nil {
			f.stateFailed(x, asFailure(err, s, f.enteredID))
			return
		} else {
			f.note(x, AfterParameters, result)
		}
		f.exit(x, result, false)
	case asl.TypeSucceed:
		out, err := dataflow.Select(s.OutputPath, eff, env)
		if err != nil {
			f.stateFailed(x, asFailure(err, s, f.enteredID))
			return
		}
		f.exitWithOutput(x, out, nil, "")
	case asl.TypeFail:
		f.execFail(x, env)
	case asl.TypeChoice:
		f.execChoice(x, env)
	case asl.TypeWait:
		f.execWait(x, env)
	case asl.TypeTask:
		f.execTask(x, env)
	case asl.TypeParallel, asl.TypeMap:
		f.execChildren(x, env)
	default:
		f.stateFailed(x, asFailure(fmt.Errorf("unsupported state type %q", s.Type), s, f.enteredID))
	}
}

func (f *frame) execFail(x *Execution, env *jsonpath.Env) {
	s := f.state
	fl := &failure.Failure{Name: s.Error, Cause: s.Cause, HasCause: s.HasCause}
	env.Input = f.effInput
	if s.ErrorPath != nil {
		v, err := s.ErrorPath.Eval(env, "ErrorPath")
		if err != nil {
			f.stateFailed(x, asFailure(pathFieldError(s.ErrorPath, "ErrorPath", env, err), s, f.enteredID))
			return
		}
		fl.Name = scalarText(v)
	}
	if s.CausePath != nil {
		v, err := s.CausePath.Eval(env, "CausePath")
		if err != nil {
			f.stateFailed(x, asFailure(pathFieldError(s.CausePath, "CausePath", env, err), s, f.enteredID))
			return
		}
		fl.Cause, fl.HasCause = scalarText(v), true
	}
	// A Fail state writes no exit event.
	f.finishFailure(x, fl)
}

// pathFieldError reports a path field (ErrorPath, CausePath) that selects
// nothing the way AWS does: naming the field.
func pathFieldError(e *payload.Expr, field string, env *jsonpath.Env, err error) error {
	if e.Path == nil {
		return err
	}
	return payload.PathError(e.Path, field, env, err)
}

func scalarText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return jsonvalue.String(v)
}

func (f *frame) execChoice(x *Execution, env *jsonpath.Env) {
	s := f.state
	env.Input = f.effInput
	next := s.Default
	assignT := s.Assign
	matched := false
	for _, r := range s.Choices {
		ok, err := evalRule(r, env)
		if err != nil {
			f.stateFailed(x, asFailure(err, s, f.enteredID))
			return
		}
		if ok {
			next, matched = r.Next, true
			if r.Assign != nil {
				assignT = r.Assign
			}
			break
		}
	}
	if !matched && s.Default == "" {
		f.stateFailed(x, failure.New(failure.NoChoiceMatched,
			fmt.Sprintf("No Matches! (at state '%s')", s.Name)))
		return
	}
	f.exitWithInput(x, assignT, next)
}

func (f *frame) execWait(x *Execution, env *jsonpath.Env) {
	s := f.state
	env.Input = f.effInput
	var until time.Time
	switch {
	case s.Seconds != nil:
		until = x.now.Add(seconds(*s.Seconds))
	case s.Timestamp != nil:
		until = *s.Timestamp
	case s.SecondsPath != nil:
		v, err := s.SecondsPath.Eval(env)
		if err != nil {
			var fl *failure.Failure
			if !errors.As(err, &fl) {
				fl = failure.Newf(failure.Runtime, "The SecondsPath parameter does not reference an input value: %s", s.SecondsPath)
			}
			f.stateFailed(x, asFailure(fl, s, f.enteredID))
			return
		}
		n, ok := v.(jsonvalue.Number)
		i, isInt := n.Int64()
		switch {
		case !ok || !isInt || !n.IsInteger() || strings.ContainsAny(string(n), ".eE"):
			f.stateFailed(x, asFailure(failure.Newf(failure.Runtime,
				"The SecondsPath parameter cannot be parsed as a long value: %s == %s", s.SecondsPath, scalarText(v)), s, f.enteredID))
			return
		case i < 0:
			f.stateFailed(x, asFailure(failure.Newf(failure.Runtime,
				"The SecondsPath parameter references a negative value: %s == %s", s.SecondsPath, scalarText(v)), s, f.enteredID))
			return
		}
		until = x.now.Add(seconds(i))
	case s.TimestampPath != nil:
		v, err := s.TimestampPath.Eval(env)
		if err != nil {
			f.stateFailed(x, asFailure(dataflow.InvalidPath(s.TimestampPath, err), s, f.enteredID))
			return
		}
		str, _ := v.(string)
		t, ok := ParseTimestamp(str)
		if !ok {
			f.stateFailed(x, asFailure(failure.Newf(failure.Runtime,
				"The TimestampPath parameter does not reference a valid ISO-8601 extended offset date-time format string: %s == %s", s.TimestampPath, scalarText(v)), s, f.enteredID))
			return
		}
		until = t
	}
	if !until.After(x.now) {
		f.waitDone(x)
		return
	}
	id := x.newID("wait")
	f.block(x, waitTimer, id)
	x.cmds = append(x.cmds, Command{Kind: StartTimer, ID: id, At: until})
}

// waitDone completes a Wait state once its time has come.
func (f *frame) waitDone(x *Execution) {
	if f.state.QueryLanguage == asl.JSONata {
		f.exitJSONata(x, f.state.JSONata, nil, false, f.state.Next)
		return
	}
	f.exitWithInput(x, f.state.Assign, f.state.Next)
}

// exitWithInput completes a state that produces no result (Choice, Wait):
// Assign and OutputPath read the effective input.
func (f *frame) exitWithInput(x *Execution, assign *payload.Template, next string) {
	s := f.state
	assigned, err := f.assign(x, assign, f.effInput)
	if err != nil {
		f.stateFailed(x, asFailure(err, s, f.enteredID))
		return
	}
	out, err := dataflow.Select(s.OutputPath, f.effInput, x.env(f, nil))
	if err != nil {
		f.stateFailed(x, asFailure(err, s, f.enteredID))
		return
	}
	f.exitWithOutput(x, out, assigned, next)
}

// ParseTimestamp parses an ISO-8601 extended offset date-time, the only
// timestamp form ASL accepts (a "T" separator and a zone are required).
func ParseTimestamp(s string) (time.Time, bool) {
	if len(s) < 20 || s[10] != 'T' {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, false
	}
	return t, true
}

// intField resolves a count given literally or by a path.
func intField(f *IntFieldSpec, env *jsonpath.Env) (int64, bool, error) {
	if f.Field == nil {
		return 0, false, nil
	}
	if f.Field.Value != nil {
		return *f.Field.Value, true, nil
	}
	if f.Field.Path == nil {
		return 0, false, nil
	}
	v, err := f.Field.Path.Eval(env)
	if err != nil {
		return 0, false, dataflow.InvalidPath(f.Field.Path, err)
	}
	n, ok := numberValue(v)
	i, isInt := n.Int64()
	if !ok || !isInt || !n.IsInteger() {
		return 0, false, failure.Newf(failure.Runtime,
			"The %s field refers to value %q which is not a valid integer: %s", f.Name, scalarText(v), f.Field.Path)
	}
	return i, true, nil
}

// numberValue returns v as a number: a JSON number, or a string holding
// one (AWS accepts "1" where a count is read through a path).
func numberValue(v any) (jsonvalue.Number, bool) {
	switch t := v.(type) {
	case jsonvalue.Number:
		return t, true
	case string:
		if n, err := jsonvalue.ParseString(t); err == nil && t == strings.TrimSpace(t) {
			num, ok := n.(jsonvalue.Number)
			return num, ok
		}
	}
	return "", false
}

// IntFieldSpec names an IntField for error messages.
type IntFieldSpec struct {
	Field *asl.IntField
	Name  string // e.g. "MaxConcurrencyPath"
}

func (f *frame) execTask(x *Execution, env *jsonpath.Env) {
	s := f.state
	id := x.newID("task")
	f.token = x.Opts.TaskToken(x.Info.ExecutionArn, id)
	params, timeout, hasTimeout, heartbeat, hasHeartbeat, err := f.taskRequest(x, env)
	if err != nil {
		f.stateFailed(x, asFailure(err, s, f.enteredID))
		return
	}
	role, err := f.taskRole(x, env)
	if err != nil {
		f.stateFailed(x, asFailure(err, s, f.enteredID))
		return
	}
	paramsText, ok := x.textLimit(params, x.Opts.PayloadLimit)
	if !ok {
		f.stateFailed(x, dataLimit(s))
		return
	}
	var timeoutPtr, heartbeatPtr *int64
	if hasTimeout {
		timeoutPtr = ptr(timeout)
	}
	if hasHeartbeat {
		heartbeatPtr = ptr(heartbeat)
	}
	if IsActivity(s.Resource) && !x.activityExists(s.Resource) {
		f.stateFailed(x, asFailure(failure.Newf(failure.Runtime, "The activity %s does not exist.", s.Resource), s, f.enteredID))
		return
	}
	f.started, f.submitted = false, false
	if IsActivity(s.Resource) {
		x.emit(f, history.Event{Type: history.EventActivityScheduled, ActivityScheduledEventDetails: &history.ActivityScheduledEventDetails{
			Resource: s.Resource, Input: paramsText, TimeoutInSeconds: timeoutPtr, HeartbeatInSeconds: heartbeatPtr,
		}})
	} else if IsLambdaFunction(s.Resource) {
		var creds *history.TaskCredentials
		if role != "" {
			creds = &history.TaskCredentials{RoleArn: role}
		}
		x.emit(f, history.Event{Type: history.EventLambdaFunctionScheduled, LambdaFunctionScheduledEventDetails: &history.LambdaFunctionScheduledEventDetails{
			Resource: s.Resource, Input: paramsText, TimeoutInSeconds: timeoutPtr, TaskCredentials: creds,
		}})
	} else {
		resType, res := splitResource(s.Resource)
		var creds *history.TaskCredentials
		if role != "" {
			creds = &history.TaskCredentials{RoleArn: role}
		}
		x.emit(f, history.Event{Type: history.EventTaskScheduled, TaskScheduledEventDetails: &history.TaskScheduledEventDetails{
			ResourceType: resType, Resource: res, Region: x.Info.Region, Parameters: paramsText,
			TimeoutInSeconds: timeoutPtr, HeartbeatInSeconds: heartbeatPtr, TaskCredentials: creds,
		}})
	}
	f.block(x, waitTask, id)
	x.cmds = append(x.cmds, Command{Kind: RunTask, ID: id, Task: &TaskRequest{
		StateName: s.Name, Resource: s.Resource, Parameters: params, Token: f.token,
		TimeoutSeconds: timeout, HeartbeatSeconds: heartbeat, RetryCount: f.retryCount, RoleArn: role,
		Invocation: x.invoke(s.Name),
	}})
	if hasTimeout && timeout > 0 {
		f.timeoutID = x.newID("task-timeout")
		x.waiting[f.timeoutID] = f
		x.cmds = append(x.cmds, Command{Kind: StartTimer, ID: f.timeoutID, At: x.now.Add(seconds(timeout))})
	}
	f.beatSecs = 0
	if hasHeartbeat && heartbeat > 0 {
		f.beatSecs = heartbeat
		// An activity's heartbeat clock starts when a worker takes the
		// task: a task waiting in the queue times out only by
		// TimeoutSeconds.
		if !IsActivity(s.Resource) {
			f.armHeartbeat(x)
		}
	}
}

// taskRequest works out a task's parameters, timeout and heartbeat: from
// Parameters and the ...Path fields in JSONPath (env), from Arguments and
// expressions in JSONata (env nil).
func (f *frame) taskRequest(x *Execution, env *jsonpath.Env) (params any, timeout int64, hasTimeout bool, heartbeat int64, hasHeartbeat bool, err error) {
	s := f.state
	params = f.effInput
	if env == nil {
		j := s.JSONata
		jenv := x.jenv(f, nil, "", nil)
		if j.Arguments != nil {
			if params, err = j.Arguments.Eval(jenv, "Arguments"); err != nil {
				return
			}
		}
		f.note(x, AfterArguments, params)
		if timeout, hasTimeout, err = jsonataInt(s.Timeout, j.Timeout, "TimeoutSeconds", 1, jenv); err != nil {
			return
		}
		heartbeat, hasHeartbeat, err = jsonataInt(s.Heartbeat, j.Heartbeat, "HeartbeatSeconds", 1, jenv)
		return
	}
	env.Input = f.effInput
	if s.Parameters != nil {
		if params, err = s.Parameters.Eval(env); err != nil {
			return
		}
	}
	f.note(x, AfterParameters, params)
	if timeout, hasTimeout, err = intField(&IntFieldSpec{s.Timeout, "TimeoutSecondsPath"}, env); err != nil {
		return
	}
	heartbeat, hasHeartbeat, err = intField(&IntFieldSpec{s.Heartbeat, "HeartbeatSecondsPath"}, env)
	return
}

// taskRole works out the role a task's Credentials name, from the same
// input as its parameters: "" when it has none.
func (f *frame) taskRole(x *Execution, env *jsonpath.Env) (string, error) {
	s := f.state
	var v any
	if env == nil {
		t := s.JSONata.Credentials
		if t == nil {
			return "", nil
		}
		var err error
		if v, err = t.Eval(x.jenv(f, nil, "", nil), "RoleArn"); err != nil {
			return "", err
		}
		if role, ok := v.(string); ok {
			return role, nil
		}
		return "", unexpectedType(t, "RoleArn", "string", v)
	}
	if s.CredentialsTemplate == nil {
		return "", nil
	}
	creds, err := s.CredentialsTemplate.Eval(env)
	if err != nil {
		return "", err
	}
	if o, ok := creds.(*jsonvalue.Object); ok {
		v, _ = o.Get("RoleArn")
	}
	if role, ok := v.(string); ok {
		return role, nil
	}
	return "", failure.Newf(failure.Runtime,
		"The value for the field 'RoleArn' must be a string, but was %s: %s", jsonTypeName(v), jsonvalue.String(v))
}

// armHeartbeat (re)starts the task's heartbeat timer.
func (f *frame) armHeartbeat(x *Execution) {
	f.cancelTimer(x, &f.beatID)
	if f.beatSecs <= 0 {
		return
	}
	f.beatID = x.newID("task-heartbeat")
	x.waiting[f.beatID] = f
	x.cmds = append(x.cmds, Command{Kind: StartTimer, ID: f.beatID, At: x.now.Add(seconds(f.beatSecs))})
}

// splitResource splits a service integration ARN into the resourceType and
// resource of TaskScheduled: arn:aws:states:::lambda:invoke → lambda, invoke;
// arn:aws:states:::states:startExecution.sync:2 → states, startExecution.sync:2.
func splitResource(arn string) (string, string) {
	parts := strings.SplitN(arn, ":", 6)
	if len(parts) < 6 {
		return "", arn
	}
	rest := parts[5]
	if parts[2] == "states" && parts[3] == "" && parts[4] == "" {
		if i := strings.LastIndex(strings.TrimSuffix(rest, ".sync:2"), ":"); i >= 0 {
			return rest[:i], rest[i+1:]
		}
	}
	return parts[2], rest
}

// IsActivity reports whether a Task resource is an activity ARN, whose
// work is done by workers polling GetActivityTask.
func IsActivity(resource string) bool {
	parts := strings.SplitN(resource, ":", 7)
	return len(parts) == 7 && parts[0] == "arn" && parts[2] == "states" && parts[5] == "activity"
}

// IsLambdaFunction reports whether a Task resource is a Lambda function's
// ARN (arn:<partition>:lambda:<region>:<account>:function:<name>[:<qualifier>]),
// whose history uses the LambdaFunction* events and whose result is the
// function's payload.
func IsLambdaFunction(resource string) bool {
	parts := strings.SplitN(resource, ":", 8)
	return len(parts) >= 7 && parts[0] == "arn" && parts[2] == "lambda" && parts[5] == "function" && parts[6] != ""
}

// taskStarted writes the running task's started event, once. An
// activity handed out again after a release gets its heartbeat clock back.
func (f *frame) taskStarted(x *Execution, worker string) {
	if f.started {
		if IsActivity(f.state.Resource) && f.beatID == "" {
			f.armHeartbeat(x)
		}
		return
	}
	f.started = true
	s := f.state
	if IsActivity(s.Resource) {
		x.emit(f, history.Event{Type: history.EventActivityStarted,
			ActivityStartedEventDetails: &history.ActivityStartedEventDetails{WorkerName: worker}})
		f.armHeartbeat(x)
		return
	}
	if IsLambdaFunction(s.Resource) {
		x.emit(f, history.Event{Type: history.EventLambdaFunctionStarted})
		return
	}
	resType, res := splitResource(s.Resource)
	x.emit(f, history.Event{Type: history.EventTaskStarted,
		TaskStartedEventDetails: &history.TaskEventDetails{ResourceType: resType, Resource: res}})
}

// taskReleased takes back the hand-out of a started activity: the task
// waits for a worker again, without a heartbeat clock, as before its
// first hand-out.
func (f *frame) taskReleased(x *Execution) {
	if f.started && IsActivity(f.state.Resource) {
		f.cancelTimer(x, &f.beatID)
	}
}

// taskSubmitted writes the running task's submitted event, once, after
// its started event.
func (f *frame) taskSubmitted(x *Execution, output any) {
	if f.submitted || IsActivity(f.state.Resource) {
		return
	}
	f.taskStarted(x, "")
	f.submitted = true
	resType, res := splitResource(f.state.Resource)
	out := jsonvalue.String(output)
	x.emit(f, history.Event{Type: history.EventTaskSubmitted, TaskSubmittedEventDetails: &history.TaskEventDetails{
		ResourceType: resType, Resource: res, Output: &out, OutputDetails: &history.DataDetails{}}})
}

func (f *frame) taskDone(x *Execution, ev Event) {
	s := f.state
	f.cancelTimer(x, &f.timeoutID)
	f.cancelTimer(x, &f.beatID)
	f.taskStarted(x, "")
	activity := IsActivity(s.Resource)
	resType, res := splitResource(s.Resource)
	if ev.Kind == TaskFailed {
		fl := &failure.Failure{Name: ev.Error, Cause: ev.Cause, HasCause: ev.Cause != ""}
		var errPtr, causePtr *string
		if ev.Error != "" {
			errPtr = ptr(ev.Error)
		}
		if ev.Cause != "" {
			causePtr = ptr(ev.Cause)
		}
		switch {
		case activity:
			x.emit(f, history.Event{Type: history.EventActivityFailed,
				ActivityFailedEventDetails: &history.FailureEventDetails{Error: errPtr, Cause: causePtr}})
		case IsLambdaFunction(s.Resource):
			x.emit(f, history.Event{Type: history.EventLambdaFunctionFailed,
				LambdaFunctionFailedEventDetails: &history.FailureEventDetails{Error: errPtr, Cause: causePtr}})
		default:
			x.emit(f, history.Event{Type: history.EventTaskFailed, TaskFailedEventDetails: &history.TaskEventDetails{
				ResourceType: resType, Resource: res, Error: errPtr, Cause: causePtr}})
		}
		f.taskFailure = true
		f.stateFailed(x, fl)
		f.taskFailure = false
		return
	}
	out := jsonvalue.String(ev.Output)
	if len(out) > x.Opts.PayloadLimit {
		// AWS records the oversized result as the task's failure, naming
		// the task by what it called.
		fl := taskDataLimit(s)
		f.taskDone(x, Event{Kind: TaskFailed, ID: ev.ID, Error: fl.Name, Cause: fl.Cause})
		return
	}
	switch {
	case activity:
		x.emit(f, history.Event{Type: history.EventActivitySucceeded,
			ActivitySucceededEventDetails: &history.OutputEventDetails{Output: out}})
	case IsLambdaFunction(s.Resource):
		x.emit(f, history.Event{Type: history.EventLambdaFunctionSucceeded,
			LambdaFunctionSucceededEventDetails: &history.OutputEventDetails{Output: out}})
	default:
		x.emit(f, history.Event{Type: history.EventTaskSucceeded, TaskSucceededEventDetails: &history.TaskEventDetails{
			ResourceType: resType, Resource: res, Output: &out, OutputDetails: &history.DataDetails{},
		}})
	}
	f.note(x, Result, ev.Output)
	f.exit(x, ev.Output, true)
}

// taskTimedOut fails the running task with States.Timeout or (an
// activity's missed heartbeat) States.HeartbeatTimeout; the task's result
// is no longer wanted.
func (f *frame) taskTimedOut(x *Execution, name string) {
	s := f.state
	f.cancelWaits(x)
	if !IsActivity(s.Resource) {
		// A call was made as soon as the task was scheduled: it started.
		f.taskStarted(x, "")
	}
	switch {
	case IsActivity(s.Resource):
		x.emit(f, history.Event{Type: history.EventActivityTimedOut,
			ActivityTimedOutEventDetails: &history.FailureEventDetails{Error: ptr(name)}})
	case IsLambdaFunction(s.Resource):
		x.emit(f, history.Event{Type: history.EventLambdaFunctionTimedOut,
			LambdaFunctionTimedOutEventDetails: &history.FailureEventDetails{Error: ptr(name)}})
	default:
		resType, res := splitResource(s.Resource)
		x.emit(f, history.Event{Type: history.EventTaskTimedOut, TaskTimedOutEventDetails: &history.TaskEventDetails{
			ResourceType: resType, Resource: res, Error: ptr(name),
		}})
	}
	// AWS's error output for a timeout carries an empty Cause
	// ({"Error": "States.Timeout", "Cause": ""}); its events carry none.
	f.stateFailed(x, &failure.Failure{Name: name, HasCause: true})
}

// assign evaluates an Assign template with "$" bound to value. The
// variables are set only once the state has exited (exitWithOutput), so a
// state that fails afterwards changes none.
func (f *frame) assign(x *Execution, t *payload.Template, value any) (*jsonvalue.Object, error) {
	if t == nil {
		return nil, nil
	}
	env := x.env(f, nil)
	env.Input = value
	v, err := t.Eval(env)
	if err != nil {
		return nil, err
	}
	obj, _ := v.(*jsonvalue.Object)
	return obj, nil
}

// stateFailed handles a failure of the current state: Retry, then Catch,
// else the frame fails.
func (f *frame) stateFailed(x *Execution, fl *failure.Failure) {
	s := f.state
	if fl.Name == failure.Runtime {
		f.finishFailure(x, fl)
		return
	}
	i, left := f.matchRetrier(fl)
	if i >= 0 && !left {
		if ins := x.inspector(); ins != nil {
			ins.Retry(s, fl, i, 0, false)
		}
	}
	if i >= 0 && left {
		r := s.Retry[i]
		delay := backoff(r, f.retries[i], x.Info.ExecutionArn, s.Name, f.retryCount)
		f.retries[i]++
		f.retryCount++
		if ins := x.inspector(); ins != nil {
			ins.Retry(s, fl, i, delay, true)
		}
		id := x.newID("retry")
		f.block(x, waitRetry, id)
		x.cmds = append(x.cmds, Command{Kind: StartTimer, ID: id, At: x.now.Add(delay)})
		return
	}
	for i, c := range s.Catch {
		if !errorMatches(c.ErrorEquals, fl.Name, f.taskFailure) {
			continue
		}
		if ins := x.inspector(); ins != nil {
			ins.Catch(s, fl, i)
		}
		errOut := errorOutput(fl)
		var assigned *jsonvalue.Object
		var out any
		var err error
		if s.QueryLanguage == asl.JSONata {
			assigned, out, err = f.catchJSONata(x, c, errOut)
		} else if assigned, err = f.assign(x, c.Assign, errOut); err == nil {
			out, err = dataflow.Merge(c.ResultPath, f.rawInput, errOut)
		}
		if err != nil {
			f.finishFailure(x, asFailure(err, s, f.enteredID))
			return
		}
		if _, ok := x.textLimit(out, x.Opts.PayloadLimit); !ok {
			// The catcher's own output is too big: no further handling.
			f.finishFailure(x, dataLimit(s))
			return
		}
		f.exitWithOutput(x, out, assigned, c.Next)
		return
	}
	f.finishFailure(x, fl)
}

// retrier returns the index of the retrier that retries fl now, or -1: the
// first retrier whose ErrorEquals matches decides, and retries while it has
// attempts left.
func (f *frame) retrier(fl *failure.Failure) int {
	if i, left := f.matchRetrier(fl); left {
		return i
	}
	return -1
}

// matchRetrier returns the index of the first retrier whose ErrorEquals
// matches fl (-1 for none), and whether it has attempts left.
func (f *frame) matchRetrier(fl *failure.Failure) (int, bool) {
	if fl.Name == failure.Runtime {
		return -1, false
	}
	for i, r := range f.state.Retry {
		if errorMatches(r.ErrorEquals, fl.Name, f.taskFailure) {
			return i, f.retries[i] < r.MaxAttempts
		}
	}
	return -1, false
}

// finishFailure ends the frame with a failure, writing the EvaluationFailed
// event AWS writes for JSONata evaluation errors.
func (f *frame) finishFailure(x *Execution, fl *failure.Failure) {
	if !f.evalReported {
		f.reportEvaluation(x, fl)
	}
	f.evalReported = false
	f.finish(x, nil, fl)
}

// dataLimit is the failure of a state whose output is too big.
// taskDataLimit is the failure of a task whose result is over the payload
// limit: AWS names the task by its function's ARN, or by the service of an
// integration.
func taskDataLimit(s *asl.State) *failure.Failure {
	name := s.Resource
	if !IsActivity(s.Resource) && !IsLambdaFunction(s.Resource) {
		name, _ = splitResource(s.Resource)
	}
	return failure.Newf(failure.DataLimitExceeded,
		"The state/task '%s' returned a result with a size exceeding the maximum number of bytes service limit.", name)
}

func dataLimit(s *asl.State) *failure.Failure {
	return failure.Newf(failure.DataLimitExceeded,
		"The state/task '%s' returned a result with a size exceeding the maximum number of bytes service limit.", s.Name)
}

// retryNow runs the current state again after a retry back-off.
func (f *frame) retryNow(x *Execution) {
	s := f.state
	if s.Type == asl.TypeMap && x.Opts.Policies.Has(s.Name, PolicyRetryFailedItems) {
		switch {
		case f.mapReq != nil:
			// A distributed Map: its map run again, its children that did
			// not succeed only.
			f.reviveMapRun(x)
			return
		case f.children != nil && !f.mapRun:
			f.retryFailedItems(x)
			return
		}
	}
	f.readItems, f.readDone = nil, false // a retried Map reads its items again
	f.exec(x)
}

// retryFailedItems retries a Map state that failed because of its
// iterations (PolicyRetryFailedItems): those that did not succeed run
// again from their start, those never started start, and those that
// succeeded keep their results.
func (f *frame) retryFailedItems(x *Execution) {
	s := f.state
	f.childFail, f.running, f.failed = nil, 0, 0
	f.startedID = x.emit(f, history.Event{Type: history.EventMapStateStarted,
		MapStateStartedEventDetails: &history.MapStateStartedEventDetails{Length: len(f.items)}})
	f.wait = waitChildren
	x.push(func() { f.pump(x) })
	for k, c := range f.children {
		if c.done && c.failure == nil && !c.aborted {
			continue
		}
		nc, err := f.newChild(x, c.index)
		if err != nil {
			f.wait = waitNone
			f.stateFailed(x, asFailure(err, s, f.enteredID))
			x.push(func() { f.run(x) })
			return
		}
		f.children[k] = nc
		f.running++
		x.push(func() { nc.run(x) })
	}
}

// errorMatches reports whether an ErrorEquals list matches an error name.
// errorOutput is what a Catch receives of a failure: its Error and, when
// it has one, its Cause. A task failed with neither (SendTaskFailure with
// no error and no cause) gives both as null, as AWS records.
func errorOutput(fl *failure.Failure) *jsonvalue.Object {
	out := jsonvalue.NewObject(2)
	if fl.Name == "" && !fl.HasCause {
		out.Set("Error", nil)
		out.Set("Cause", nil)
		return out
	}
	out.Set("Error", fl.Name)
	if fl.HasCause {
		out.Set("Cause", fl.Cause)
	}
	return out
}

// States.ALL matches everything but States.DataLimitExceeded and
// States.Runtime; States.TaskFailed matches everything but States.Timeout
// and those two.
func errorMatches(list []string, name string, taskFailure bool) bool {
	for _, e := range list {
		switch e {
		case name:
			return true
		case failure.All:
			// A task's oversized result is its TaskFailed, which AWS
			// catches with States.ALL like any task failure.
			if taskFailure || (name != failure.DataLimitExceeded && name != failure.Runtime) {
				return true
			}
		case failure.TaskFailed:
			if name != failure.Timeout && name != failure.DataLimitExceeded && name != failure.Runtime {
				return true
			}
		}
	}
	return false
}

// backoff returns the delay before retry number attempt (0-based) of r.
// FULL jitter draws a delay in [0, backoff) from a generator seeded by the
// execution, state and retry count, so a replay gives the same delay.
func backoff(r *asl.Retrier, attempt int64, execArn, state string, retryCount int) time.Duration {
	secs := float64(r.IntervalSeconds) * math.Pow(r.BackoffRate, float64(attempt))
	if r.MaxDelaySeconds != nil && secs > float64(*r.MaxDelaySeconds) {
		secs = float64(*r.MaxDelaySeconds)
	}
	if r.JitterStrategy == "FULL" {
		secs *= unitRandom(execArn, state, retryCount)
	}
	if secs > maxDelay.Seconds() {
		return maxDelay
	}
	return time.Duration(secs * float64(time.Second))
}

// maxDelay bounds every delay: no execution outlives AWS's one-year limit,
// and larger values would overflow time.Duration.
const maxDelay = 400 * 24 * time.Hour

// seconds converts a count of seconds to a delay, clamped to [0, maxDelay].
func seconds(n int64) time.Duration {
	if n <= 0 {
		return 0
	}
	if n >= int64(maxDelay/time.Second) {
		return maxDelay
	}
	return time.Duration(n) * time.Second
}

// unitRandom returns a deterministic number in [0, 1) from its arguments.
func unitRandom(parts ...any) float64 {
	h := uint64(14695981039346656037)
	for _, p := range parts {
		for _, b := range []byte(fmt.Sprint(p)) {
			h ^= uint64(b)
			h *= 1099511628211
		}
	}
	return float64(h>>11) / float64(1<<53)
}
