package interp

import (
	"strings"

	"stepwise/asl/jsonpath"
	"stepwise/failure"
	"stepwise/history"
	"stepwise/jsonvalue"
)

// A Task state: its request worked out and handed over as a command
// (RunTask), its timers (timeout, heartbeat), and its events as the
// task is started, submitted and answered.

// execTask runs a Task state from its start.
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
		"The value for the field 'RoleArn' must be a string, but was %s: %s", jsonvalue.TypeName(v), jsonvalue.String(v))
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
