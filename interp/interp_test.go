package interp_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/failure"
	"stepwise/history"
	"stepwise/interp"
	"stepwise/jsonvalue"
)

type testBundle struct {
	x      *interp.Execution
	now    time.Time
	events []*history.Event
	cmds   []interp.Command
}

var t0 = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

// setup parses def and starts it with input at t0.
func setup(t *testing.T, def, input string, opts interp.Options) *testBundle {
	t.Helper()
	m := mustParse(t, def)
	in, err := jsonvalue.ParseString(input)
	require.NoError(t, err)
	b := &testBundle{x: interp.New(m, benchInfo, in, opts), now: t0}
	b.events, b.cmds, err = b.x.Start(t0)
	require.NoError(t, err)
	return b
}

// step applies ev at b.now and appends what it wrote.
func (b *testBundle) step(t *testing.T, ev interp.Event) {
	t.Helper()
	evs, cmds, err := b.x.Step(ev, b.now)
	require.NoError(t, err)
	b.events = append(b.events, evs...)
	b.cmds = cmds
}

func (b *testBundle) types() []string {
	var out []string
	for _, e := range b.events {
		out = append(out, string(e.Type))
	}
	return out
}

func (b *testBundle) only(t *testing.T, kind interp.CommandKind) []interp.Command {
	t.Helper()
	var out []interp.Command
	for _, c := range b.cmds {
		if c.Kind == kind {
			out = append(out, c)
		}
	}
	return out
}

func (b *testBundle) output(t *testing.T) string {
	t.Helper()
	require.Equal(t, history.StatusSucceeded, b.x.Status, "failure: %v", b.x.Failure)
	return jsonvalue.String(b.x.Output)
}

const taskState = `"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke"`

func TestRetryBackoffAndCatch(t *testing.T) {
	t.Parallel()
	b := setup(t, `{"StartAt": "T", "States": {
		"T": {`+taskState+`,
			"Retry": [{"ErrorEquals": ["Flaky"], "IntervalSeconds": 2, "BackoffRate": 3, "MaxAttempts": 2, "MaxDelaySeconds": 5}],
			"Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.err", "Next": "Caught"}],
			"End": true},
		"Caught": {"Type": "Pass", "End": true}}}`, `{"a": 1}`, interp.Options{})
	var delays []time.Duration
	for attempt := 0; attempt < 3; attempt++ {
		tasks := b.only(t, interp.RunTask)
		require.Len(t, tasks, 1, "attempt %d", attempt)
		require.Equal(t, attempt, tasks[0].Task.RetryCount)
		b.step(t, interp.Event{Kind: interp.TaskFailed, ID: tasks[0].ID, Error: "Flaky", Cause: "try later"})
		if attempt == 2 {
			break
		}
		timers := b.only(t, interp.StartTimer)
		require.Len(t, timers, 1)
		delays = append(delays, timers[0].At.Sub(b.now))
		b.now = timers[0].At
		b.step(t, interp.Event{Kind: interp.TimerFired, ID: timers[0].ID})
	}
	// 2s, then 2*3=6s capped at MaxDelaySeconds 5.
	require.Equal(t, []time.Duration{2 * time.Second, 5 * time.Second}, delays)
	require.Equal(t, `{"a":1,"err":{"Error":"Flaky","Cause":"try later"}}`, b.output(t))
	require.Equal(t, []string{
		"ExecutionStarted", "TaskStateEntered",
		"TaskScheduled", "TaskStarted", "TaskFailed",
		"TaskScheduled", "TaskStarted", "TaskFailed",
		"TaskScheduled", "TaskStarted", "TaskFailed",
		"TaskStateExited", "PassStateEntered", "PassStateExited", "ExecutionSucceeded",
	}, b.types())
}

func TestRetryMaxAttemptsZeroAndFirstMatchDecides(t *testing.T) {
	t.Parallel()
	b := setup(t, `{"StartAt": "T", "States": {"T": {`+taskState+`,
		"Retry": [{"ErrorEquals": ["E"], "MaxAttempts": 0}, {"ErrorEquals": ["States.ALL"], "MaxAttempts": 5}],
		"End": true}}}`, `{}`, interp.Options{})
	b.step(t, interp.Event{Kind: interp.TaskFailed, ID: b.only(t, interp.RunTask)[0].ID, Error: "E"})
	require.Equal(t, history.StatusFailed, b.x.Status)
	require.Equal(t, "E", b.x.Failure.Name)
	require.False(t, b.x.Failure.HasCause)
}

func TestStatesAllDoesNotCatchRuntimeOrDataLimit(t *testing.T) {
	t.Parallel()
	b := setup(t, `{"StartAt": "T", "States": {
		"T": {"Type": "Pass", "OutputPath": "$.missing", "Next": "C"},
		"C": {"Type": "Pass", "End": true}}}`, `{}`, interp.Options{})
	require.Equal(t, history.StatusFailed, b.x.Status)
	require.Equal(t, failure.Runtime, b.x.Failure.Name)

	b = setup(t, `{"StartAt": "T", "States": {
		"T": {"Type": "Pass", "Result": "a string longer than ten bytes", "End": true}}}`, `{}`, interp.Options{PayloadLimit: 10})
	require.Equal(t, history.StatusFailed, b.x.Status)
	require.Equal(t, failure.DataLimitExceeded, b.x.Failure.Name)
	require.Equal(t, "The state/task 'T' returned a result with a size exceeding the maximum number of bytes service limit.", b.x.Failure.Cause)
}

// A task's result over the payload limit is the task's failure, named
// after what it called, and States.ALL catches it as AWS records.
func TestOversizedTaskResultIsACatchableTaskFailure(t *testing.T) {
	t.Parallel()
	catchAll := `"Catch": [{"ErrorEquals": ["States.ALL"], "Next": "C"}]`
	for _, tt := range []struct{ resource, name, failed string }{
		{"arn:aws:states:::lambda:invoke", "lambda", "TaskFailed"},
		{"arn:aws:lambda:us-east-1:123456789012:function:f", "arn:aws:lambda:us-east-1:123456789012:function:f", "LambdaFunctionFailed"},
	} {
		b := setup(t, `{"StartAt": "T", "States": {
			"T": {"Type": "Task", "Resource": "`+tt.resource+`", `+catchAll+`, "End": true},
			"C": {"Type": "Pass", "End": true}}}`, `{}`, interp.Options{PayloadLimit: 300})
		b.step(t, interp.Event{Kind: interp.TaskSucceeded, ID: b.only(t, interp.RunTask)[0].ID, Output: strings.Repeat("x", 400)})
		require.Equal(t, `{"Error":"States.DataLimitExceeded","Cause":"The state/task '`+tt.name+`' returned a result with a size exceeding the maximum number of bytes service limit."}`, b.output(t))
		require.Contains(t, b.types(), tt.failed)
	}
}

func TestTaskFailedWildcardDoesNotMatchTimeout(t *testing.T) {
	t.Parallel()
	b := setup(t, `{"StartAt": "T", "States": {
		"T": {`+taskState+`, "TimeoutSeconds": 10,
			"Catch": [{"ErrorEquals": ["States.TaskFailed"], "Next": "C"}], "End": true},
		"C": {"Type": "Pass", "End": true}}}`, `{}`, interp.Options{})
	timer := b.only(t, interp.StartTimer)[0]
	require.Equal(t, 10*time.Second, timer.At.Sub(t0))
	b.now = timer.At
	b.step(t, interp.Event{Kind: interp.TimerFired, ID: timer.ID})
	require.Equal(t, history.StatusFailed, b.x.Status)
	require.Equal(t, failure.Timeout, b.x.Failure.Name)
	require.Len(t, b.only(t, interp.CancelTask), 1, "the timed-out task is cancelled")
	require.Equal(t, "TaskTimedOut", b.types()[len(b.events)-2])
}

func TestHeartbeat(t *testing.T) {
	t.Parallel()
	b := setup(t, `{"StartAt": "T", "States": {"T": {`+taskState+`, "HeartbeatSeconds": 5, "End": true}}}`, `{}`, interp.Options{})
	task := b.only(t, interp.RunTask)[0]
	beat := b.only(t, interp.StartTimer)[0]
	require.Equal(t, 5*time.Second, beat.At.Sub(t0))
	b.now = t0.Add(4 * time.Second)
	b.step(t, interp.Event{Kind: interp.TaskHeartbeat, ID: task.ID})
	require.Len(t, b.only(t, interp.CancelTimer), 1)
	beat2 := b.only(t, interp.StartTimer)[0]
	require.Equal(t, 9*time.Second, beat2.At.Sub(t0))
	// The old timer firing late changes nothing.
	b.step(t, interp.Event{Kind: interp.TimerFired, ID: beat.ID})
	require.Equal(t, history.StatusRunning, b.x.Status)
	b.now = beat2.At
	b.step(t, interp.Event{Kind: interp.TimerFired, ID: beat2.ID})
	require.Equal(t, history.StatusFailed, b.x.Status)
	// A service integration's task that hears nothing in time times out
	// with States.Timeout in AWS's recordings (an activity's worker that
	// misses its heartbeat is States.HeartbeatTimeout: see
	// TestActivityEvents).
	require.Equal(t, failure.Timeout, b.x.Failure.Name)
	require.Equal(t, "TaskTimedOut", b.types()[len(b.events)-2])
	// A late result is ignored.
	evs, _, err := b.x.Step(interp.Event{Kind: interp.TaskSucceeded, ID: task.ID}, b.now)
	require.ErrorIs(t, err, interp.ErrNotRunning)
	require.Empty(t, evs)
}

func TestMapMaxConcurrencyAndOrder(t *testing.T) {
	t.Parallel()
	b := setup(t, `{"StartAt": "M", "States": {"M": {"Type": "Map", "MaxConcurrency": 2,
		"ItemProcessor": {"StartAt": "T", "States": {"T": {`+taskState+`, "End": true}}}, "End": true}}}`,
		`[1, 2, 3, 4, 5]`, interp.Options{})
	outstanding := b.only(t, interp.RunTask)
	require.Len(t, outstanding, 2, "no more than MaxConcurrency tasks at once")
	require.Equal(t, jsonvalue.Number("1"), outstanding[0].Task.Parameters)
	// Answer in reverse order; results stay in item order.
	done := 0
	for len(outstanding) > 0 {
		last := outstanding[len(outstanding)-1]
		outstanding = outstanding[:len(outstanding)-1]
		n, _ := last.Task.Parameters.(jsonvalue.Number).Int64()
		b.step(t, interp.Event{Kind: interp.TaskSucceeded, ID: last.ID, Output: jsonvalue.NumberFromInt(n * 10)})
		done++
		outstanding = append(outstanding, b.only(t, interp.RunTask)...)
		require.LessOrEqual(t, len(outstanding), 2)
	}
	require.Equal(t, 5, done)
	require.Equal(t, `[10,20,30,40,50]`, b.output(t))
}

func TestParallelFailureCancelsOtherBranches(t *testing.T) {
	t.Parallel()
	b := setup(t, `{"StartAt": "P", "States": {"P": {"Type": "Parallel", "End": true, "Branches": [
		{"StartAt": "Slow", "States": {"Slow": {`+taskState+`, "End": true}}},
		{"StartAt": "Wait", "States": {"Wait": {"Type": "Wait", "Seconds": 60, "End": true}}},
		{"StartAt": "Boom", "States": {"Boom": {"Type": "Fail", "Error": "Boom", "Cause": "branch 3"}}}]}}}`,
		`{}`, interp.Options{})
	require.Equal(t, history.StatusFailed, b.x.Status)
	require.Equal(t, "Boom", b.x.Failure.Name)
	require.Equal(t, "branch 3", b.x.Failure.Cause)
	require.Contains(t, b.types(), "ParallelStateFailed")
	require.Empty(t, b.cmds, "a task or timer started and cancelled in one step is left out")
	// The history shows the branches stopped in progress, before the
	// Parallel state fails.
	types := strings.Join(b.types(), " ")
	require.Regexp(t, `TaskStateAborted.* ParallelStateFailed`, types)
	require.Regexp(t, `WaitStateAborted.* ParallelStateFailed`, types)

	// A failure in a later step cancels what earlier steps started.
	b = setup(t, `{"StartAt": "P", "States": {"P": {"Type": "Parallel", "End": true, "Branches": [
		{"StartAt": "Slow", "States": {"Slow": {`+taskState+`, "End": true}}},
		{"StartAt": "Wait", "States": {"Wait": {"Type": "Wait", "Seconds": 60, "Next": "Boom"}, "Boom": {"Type": "Fail", "Error": "Boom"}}}]}}}`,
		`{}`, interp.Options{})
	task := b.only(t, interp.RunTask)[0]
	timer := b.only(t, interp.StartTimer)[0]
	b.now = timer.At
	b.step(t, interp.Event{Kind: interp.TimerFired, ID: timer.ID})
	require.Equal(t, history.StatusFailed, b.x.Status)
	cancels := b.only(t, interp.CancelTask)
	require.Len(t, cancels, 1)
	require.Equal(t, task.ID, cancels[0].ID)
	require.Regexp(t, `FailStateEntered TaskStateAborted ParallelStateFailed ExecutionFailed$`, strings.Join(b.types(), " "))
	// The late result of the cancelled task is not applied.
	_, _, err := b.x.Step(interp.Event{Kind: interp.TaskSucceeded, ID: task.ID}, b.now)
	require.ErrorIs(t, err, interp.ErrNotRunning)
}

func TestEventKindMustMatch(t *testing.T) {
	t.Parallel()
	b := setup(t, `{"StartAt": "T", "TimeoutSeconds": 100, "States": {"T": {`+taskState+`, "End": true}}}`, `{}`, interp.Options{})
	task := b.only(t, interp.RunTask)[0]
	timer := b.only(t, interp.StartTimer)[0]
	b.step(t, interp.Event{Kind: interp.TaskHeartbeat, ID: timer.ID})
	b.step(t, interp.Event{Kind: interp.TimerFired, ID: task.ID})
	require.Equal(t, history.StatusRunning, b.x.Status, "events of the wrong kind are ignored")
}

func TestAssignOnlyOnSuccessAndCatchLoop(t *testing.T) {
	t.Parallel()
	// A state that assigns and then fails leaves the variables alone.
	b := setup(t, `{"StartAt": "A", "States": {
		"A": {"Type": "Pass", "Assign": {"n": 1}, "Next": "T"},
		"T": {`+taskState+`, "Assign": {"n": 2},
			"Catch": [{"ErrorEquals": ["States.DataLimitExceeded"], "ResultPath": null, "Next": "C"}], "End": true},
		"C": {"Type": "Pass", "Parameters": {"n.$": "$n"}, "End": true}}}`, `{}`, interp.Options{PayloadLimit: 20})
	b.step(t, interp.Event{Kind: interp.TaskSucceeded, ID: b.only(t, interp.RunTask)[0].ID, Output: strings.Repeat("b", 30)})
	require.Equal(t, `{"n":1}`, b.output(t))
	// A catcher whose own output is too big does not loop.
	b = setup(t, `{"StartAt": "T", "States": {
		"T": {`+taskState+`, "ResultPath": "$.r",
			"Catch": [{"ErrorEquals": ["States.DataLimitExceeded"], "ResultPath": "$.err", "Next": "C"}], "End": true},
		"C": {"Type": "Pass", "End": true}}}`, `{"pad": "`+strings.Repeat("a", 40)+`"}`, interp.Options{PayloadLimit: 60})
	b.step(t, interp.Event{Kind: interp.TaskSucceeded, ID: b.only(t, interp.RunTask)[0].ID, Output: strings.Repeat("b", 30)})
	require.Equal(t, history.StatusFailed, b.x.Status)
	require.Equal(t, failure.DataLimitExceeded, b.x.Failure.Name)
}

func TestHugeDurationsAreClamped(t *testing.T) {
	t.Parallel()
	b := setup(t, `{"StartAt": "W", "States": {"W": {"Type": "Wait", "SecondsPath": "$.s", "End": true}}}`, `{"s": 10000000000}`, interp.Options{})
	require.Equal(t, history.StatusRunning, b.x.Status)
	timer := b.only(t, interp.StartTimer)[0]
	require.True(t, timer.At.After(t0.Add(365*24*time.Hour)))
}

func TestExecutionTimeoutAndStop(t *testing.T) {
	t.Parallel()
	def := `{"StartAt": "W", "TimeoutSeconds": 30, "States": {"W": {"Type": "Wait", "Seconds": 3600, "End": true}}}`
	b := setup(t, def, `{}`, interp.Options{})
	timers := b.only(t, interp.StartTimer)
	require.Len(t, timers, 2)
	b.now = t0.Add(30 * time.Second)
	b.step(t, interp.Event{Kind: interp.TimerFired, ID: timers[0].ID})
	require.Equal(t, history.StatusTimedOut, b.x.Status)
	require.Equal(t, "ExecutionTimedOut", b.types()[len(b.events)-1])

	b = setup(t, def, `{}`, interp.Options{})
	b.step(t, interp.Event{Kind: interp.Stop, Error: "Manual", Cause: "operator"})
	require.Equal(t, history.StatusAborted, b.x.Status)
	last := b.events[len(b.events)-1]
	require.Equal(t, history.EventExecutionAborted, last.Type)
	require.Equal(t, "operator", *last.ExecutionAbortedEventDetails.Cause)
	require.Len(t, b.only(t, interp.CancelTimer), 2)
}

func TestChoiceNoMatch(t *testing.T) {
	t.Parallel()
	b := setup(t, `{"StartAt": "C", "States": {"C": {"Type": "Choice",
		"Choices": [{"Variable": "$.n", "NumericGreaterThan": 5, "Next": "D"}]},
		"D": {"Type": "Succeed"}}}`, `{"n": 1}`, interp.Options{})
	require.Equal(t, history.StatusFailed, b.x.Status)
	require.Equal(t, failure.NoChoiceMatched, b.x.Failure.Name)
}

func TestChoiceOperators(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		rule  string
		input string
		want  bool
	}{
		{`"Variable": "$.s", "StringMatches": "log-*.txt"`, `{"s": "log-2024.txt"}`, true},
		{`"Variable": "$.s", "StringMatches": "log-\\*"`, `{"s": "log-*"}`, true},
		{`"Variable": "$.s", "StringMatches": "log-\\*"`, `{"s": "log-1"}`, false},
		{`"Variable": "$.s", "StringMatches": "*a*b"`, `{"s": "xxaxxb"}`, true},
		{`"Variable": "$.s", "StringMatches": "*a*b"`, `{"s": "xxaxxbc"}`, false},
		{`"Variable": "$.n", "NumericEquals": 1`, `{"n": 1.0}`, true},
		{`"Variable": "$.n", "NumericEquals": 1`, `{"n": "1"}`, false},
		{`"Variable": "$.t", "TimestampLessThan": "2024-01-01T00:00:00Z"`, `{"t": "2023-12-31T23:59:59.999+00:00"}`, true},
		{`"Variable": "$.t", "IsTimestamp": true`, `{"t": "2023-12-31 23:59:59Z"}`, false},
		{`"Variable": "$.a", "StringLessThanPath": "$.b"`, `{"a": "abc", "b": "abd"}`, true},
		{`"Variable": "$.x", "IsPresent": false`, `{}`, true},
		{`"Variable": "$.x", "IsNull": true`, `{"x": null}`, true},
		{`"Not": {"Variable": "$.b", "BooleanEquals": true}`, `{"b": false}`, true},
		{`"Or": [{"Variable": "$.n", "NumericLessThan": 0}, {"Variable": "$.n", "NumericGreaterThanEquals": 10}]`, `{"n": 10}`, true},
	} {
		b := setup(t, `{"StartAt": "C", "States": {"C": {"Type": "Choice",
			"Choices": [{`+tc.rule+`, "Next": "Yes"}], "Default": "No"},
			"Yes": {"Type": "Pass", "Result": true, "End": true}, "No": {"Type": "Pass", "Result": false, "End": true}}}`,
			tc.input, interp.Options{})
		want := "false"
		if tc.want {
			want = "true"
		}
		require.Equal(t, want, b.output(t), "%s on %s", tc.rule, tc.input)
	}
}

func TestVariablesScopes(t *testing.T) {
	t.Parallel()
	b := setup(t, `{"StartAt": "Set", "States": {
		"Set": {"Type": "Pass", "Assign": {"x": 1, "y.$": "$.y"}, "Next": "M"},
		"M": {"Type": "Map", "ItemsPath": "$.items", "ItemProcessor": {"StartAt": "In", "States": {
			"In": {"Type": "Pass", "Assign": {"x": 99}, "Parameters": {"outerY.$": "$y", "innerX.$": "$x"}, "End": true}}},
			"ResultPath": "$.r", "Next": "After"},
		"After": {"Type": "Pass", "Parameters": {"x.$": "$x", "r.$": "$.r"}, "End": true}}}`,
		`{"y": "why", "items": [0]}`, interp.Options{})
	// The iteration's assignment is its own: the outer x stays 1. Assign is
	// evaluated after Parameters, so innerX reads the outer value too.
	require.Equal(t, `{"x":1,"r":[{"outerY":"why","innerX":1}]}`, b.output(t))
	var exited *history.Event
	for _, e := range b.events {
		if e.StateExitedEventDetails != nil && e.StateExitedEventDetails.Name == "Set" {
			exited = e
		}
	}
	require.Equal(t, map[string]string{"x": "1", "y": `"why"`}, exited.StateExitedEventDetails.AssignedVariables)
}

func TestWaitPastTimestampIsImmediate(t *testing.T) {
	t.Parallel()
	b := setup(t, `{"StartAt": "W", "States": {"W": {"Type": "Wait", "Timestamp": "2001-01-01T00:00:00Z", "End": true}}}`, `{}`, interp.Options{})
	require.Equal(t, `{}`, b.output(t))
	b = setup(t, `{"StartAt": "W", "States": {"W": {"Type": "Wait", "TimestampPath": "$.t", "End": true}}}`, `{"t": "2025-01-02T03:05:05Z"}`, interp.Options{})
	timer := b.only(t, interp.StartTimer)[0]
	require.Equal(t, time.Minute, timer.At.Sub(t0))
}

func TestUnknownEventsAreIgnored(t *testing.T) {
	t.Parallel()
	b := setup(t, `{"StartAt": "T", "States": {"T": {`+taskState+`, "End": true}}}`, `{}`, interp.Options{})
	evs, cmds, err := b.x.Step(interp.Event{Kind: interp.TaskSucceeded, ID: "no-such-task"}, t0)
	require.NoError(t, err)
	require.Empty(t, evs)
	require.Empty(t, cmds)
	id := b.only(t, interp.RunTask)[0].ID
	b.step(t, interp.Event{Kind: interp.TaskSucceeded, ID: id, Output: "ok"})
	require.Equal(t, `"ok"`, b.output(t))
}

func TestJitterIsBoundedAndRepeatable(t *testing.T) {
	t.Parallel()
	def := `{"StartAt": "T", "States": {"T": {` + taskState + `,
		"Retry": [{"ErrorEquals": ["E"], "IntervalSeconds": 10, "JitterStrategy": "FULL"}], "End": true}}}`
	var first time.Duration
	for i := 0; i < 2; i++ {
		b := setup(t, def, `{}`, interp.Options{})
		b.step(t, interp.Event{Kind: interp.TaskFailed, ID: b.only(t, interp.RunTask)[0].ID, Error: "E"})
		d := b.only(t, interp.StartTimer)[0].At.Sub(t0)
		require.GreaterOrEqual(t, d, time.Duration(0))
		require.Less(t, d, 10*time.Second)
		if i == 0 {
			first = d
		} else {
			require.Equal(t, first, d)
		}
	}
}

func TestRandomnessIsReplayable(t *testing.T) {
	t.Parallel()
	def := `{"StartAt": "R", "States": {"R": {"Type": "Pass", "Parameters": {"id.$": "States.UUID()", "n.$": "States.MathRandom(1, 1000000)"}, "End": true}}}`
	a := setup(t, def, `{}`, interp.Options{}).output(t)
	b := setup(t, def, `{}`, interp.Options{}).output(t)
	require.Equal(t, a, b, "the same execution draws the same numbers")
	require.Regexp(t, `^\{"id":"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}","n":\d+\}$`, a)
}

func TestHistoryQuota(t *testing.T) {
	t.Parallel()
	b := setup(t, `{"StartAt": "A", "States": {"A": {"Type": "Pass", "Next": "B"}, "B": {"Type": "Choice", "Choices": [{"Variable": "$.stop", "IsPresent": true, "Next": "E"}], "Default": "A"}, "E": {"Type": "Succeed"}}}`,
		`{}`, interp.Options{MaxHistoryEvents: 50})
	require.Equal(t, history.StatusFailed, b.x.Status)
	require.Equal(t, failure.Runtime, b.x.Failure.Name)
	require.LessOrEqual(t, len(b.events), 50)
	require.Equal(t, "ExecutionFailed", b.types()[len(b.events)-1])
}

func TestTaskToken(t *testing.T) {
	t.Parallel()
	b := setup(t, `{"StartAt": "T", "States": {"T": {"Type": "Task", "Resource": "arn:aws:states:::sqs:sendMessage.waitForTaskToken",
		"Parameters": {"token.$": "$$.Task.Token"}, "End": true}}}`, `{}`, interp.Options{
		TaskToken: func(arn, id string) string { return "tok:" + id },
	})
	req := b.only(t, interp.RunTask)[0]
	require.Equal(t, "tok:"+req.ID, req.Task.Token)
	require.Equal(t, `{"token":"tok:`+req.ID+`"}`, jsonvalue.String(req.Task.Parameters))
}

func TestRedrive(t *testing.T) {
	t.Parallel()
	b := setup(t, `{"StartAt": "P", "States": {"P": {"Type": "Parallel", "Next": "After", "Branches": [
		{"StartAt": "A", "States": {"A": {"Type": "Pass", "Result": "a", "End": true}}},
		{"StartAt": "T", "States": {"T": {`+taskState+`, "End": true}}}]},
		"After": {"Type": "Pass", "End": true}}}`, `{}`, interp.Options{})
	_, _, err := b.x.Step(interp.Event{Kind: interp.Redrive}, t0)
	require.ErrorIs(t, err, interp.ErrNotRedrivable, "a running execution cannot be redriven")
	b.step(t, interp.Event{Kind: interp.TaskFailed, ID: b.only(t, interp.RunTask)[0].ID, Error: "Broken"})
	require.Equal(t, history.StatusFailed, b.x.Status)
	before := len(b.events)

	b.step(t, interp.Event{Kind: interp.Redrive})
	require.Equal(t, history.StatusRunning, b.x.Status)
	require.Equal(t, 1, b.x.Info.RedriveCount)
	redriven := b.events[before]
	require.Equal(t, history.EventExecutionRedriven, redriven.Type)
	require.Equal(t, 1, redriven.ExecutionRedrivenEventDetails.RedriveCount)
	task := b.only(t, interp.RunTask)
	require.Len(t, task, 1, "only the failed branch runs again")
	b.step(t, interp.Event{Kind: interp.TaskSucceeded, ID: task[0].ID, Output: "t"})
	require.Equal(t, `["a","t"]`, b.output(t))
	entered := 0
	for _, e := range b.events[before:] {
		if e.Type == "PassStateEntered" && e.StateEnteredEventDetails.Name == "A" {
			entered++
		}
	}
	require.Zero(t, entered, "the branch that succeeded is not run again")
	_, _, err = b.x.Step(interp.Event{Kind: interp.Redrive}, t0)
	require.ErrorIs(t, err, interp.ErrNotRedrivable, "a succeeded execution cannot be redriven")
}

func TestRedriveAfterStop(t *testing.T) {
	t.Parallel()
	b := setup(t, `{"StartAt": "W", "States": {"W": {"Type": "Wait", "Seconds": 10, "Next": "Done"}, "Done": {"Type": "Pass", "End": true}}}`, `{"v": 1}`, interp.Options{})
	b.step(t, interp.Event{Kind: interp.Stop})
	require.Equal(t, history.StatusAborted, b.x.Status)
	b.step(t, interp.Event{Kind: interp.Redrive})
	timer := b.only(t, interp.StartTimer)
	require.Len(t, timer, 1, "the aborted Wait starts again")
	b.now = timer[0].At
	b.step(t, interp.Event{Kind: interp.TimerFired, ID: timer[0].ID})
	require.Equal(t, `{"v":1}`, b.output(t))
}

func TestActivityEvents(t *testing.T) {
	t.Parallel()
	const activity = "arn:aws:states:us-east-1:123456789012:activity:work"
	b := setup(t, `{"StartAt": "A", "States": {"A": {"Type": "Task", "Resource": "`+activity+`",
		"TimeoutSeconds": 60, "HeartbeatSeconds": 10, "End": true}}}`, `{"job": 1}`, interp.Options{})
	require.True(t, interp.IsActivity(activity))
	require.False(t, interp.IsActivity("arn:aws:states:::lambda:invoke"))
	task := b.only(t, interp.RunTask)[0]
	scheduled := b.events[len(b.events)-1]
	require.Equal(t, history.EventActivityScheduled, scheduled.Type)
	require.Equal(t, activity, scheduled.ActivityScheduledEventDetails.Resource)
	require.Equal(t, `{"job":1}`, scheduled.ActivityScheduledEventDetails.Input)
	require.Equal(t, int64(10), *scheduled.ActivityScheduledEventDetails.HeartbeatInSeconds)

	b.step(t, interp.Event{Kind: interp.TaskStarted, ID: task.ID, WorkerName: "worker-1"})
	b.step(t, interp.Event{Kind: interp.TaskStarted, ID: task.ID, WorkerName: "worker-2"}) // once only
	b.step(t, interp.Event{Kind: interp.TaskSucceeded, ID: task.ID, Output: "done"})
	require.Equal(t, `"done"`, b.output(t))
	require.Equal(t, []string{"ExecutionStarted", "TaskStateEntered", "ActivityScheduled", "ActivityStarted",
		"ActivitySucceeded", "TaskStateExited", "ExecutionSucceeded"}, b.types())
	require.Equal(t, "worker-1", b.events[3].ActivityStartedEventDetails.WorkerName)

	// The heartbeat clock starts when a worker takes the task; without a
	// heartbeat in time then, the activity times out.
	b = setup(t, `{"StartAt": "A", "States": {"A": {"Type": "Task", "Resource": "`+activity+`", "HeartbeatSeconds": 10, "End": true}}}`, `{}`, interp.Options{})
	require.Empty(t, b.only(t, interp.StartTimer), "no heartbeat clock while the task waits for a worker")
	task = b.only(t, interp.RunTask)[0]
	b.step(t, interp.Event{Kind: interp.TaskStarted, ID: task.ID, WorkerName: "w"})
	beat := b.only(t, interp.StartTimer)[0]
	b.now = beat.At
	b.step(t, interp.Event{Kind: interp.TimerFired, ID: beat.ID})
	require.Equal(t, history.StatusFailed, b.x.Status)
	require.Equal(t, failure.HeartbeatTimeout, b.x.Failure.Name)
	require.Equal(t, "ActivityTimedOut", b.types()[len(b.events)-2])
}

// TestActivityReleased: a released activity writes no event, has no
// heartbeat clock while it waits, and gets it back, without a second
// ActivityStarted, when it is handed out again.
func TestActivityReleased(t *testing.T) {
	t.Parallel()
	const activity = "arn:aws:states:us-east-1:123456789012:activity:work"
	b := setup(t, `{"StartAt": "A", "States": {"A": {"Type": "Task", "Resource": "`+activity+`", "HeartbeatSeconds": 10, "End": true}}}`, `{}`, interp.Options{})
	task := b.only(t, interp.RunTask)[0]
	b.step(t, interp.Event{Kind: interp.TaskStarted, ID: task.ID, WorkerName: "gone"})
	beat := b.only(t, interp.StartTimer)[0]
	n := len(b.events)

	b.step(t, interp.Event{Kind: interp.TaskReleased, ID: task.ID})
	require.Len(t, b.events, n, "a release writes no event")
	require.Equal(t, []interp.Command{{Kind: interp.CancelTimer, ID: beat.ID}}, b.cmds)
	b.now = beat.At.Add(time.Hour)
	b.step(t, interp.Event{Kind: interp.TimerFired, ID: beat.ID})
	require.Equal(t, history.StatusRunning, b.x.Status, "no heartbeat timeout while the task waits")

	b.step(t, interp.Event{Kind: interp.TaskStarted, ID: task.ID, WorkerName: "next"})
	require.Len(t, b.events, n, "no second ActivityStarted")
	again := b.only(t, interp.StartTimer)
	require.Len(t, again, 1)
	require.Equal(t, b.now.Add(10*time.Second), again[0].At, "the heartbeat clock starts again")
	b.step(t, interp.Event{Kind: interp.TaskStarted, ID: task.ID, WorkerName: "next"})
	require.Empty(t, b.cmds, "a hand-out of a held task changes nothing")

	b.step(t, interp.Event{Kind: interp.TaskSucceeded, ID: task.ID, Output: "done"})
	require.Equal(t, []string{"ExecutionStarted", "TaskStateEntered", "ActivityScheduled", "ActivityStarted",
		"ActivitySucceeded", "TaskStateExited", "ExecutionSucceeded"}, b.types())
	require.Equal(t, "gone", b.events[3].ActivityStartedEventDetails.WorkerName)
}

// A stop ends the execution with ExecutionAborted, linked to no event, and
// cancels what runs; AWS writes no aborted event for the states it
// interrupts.
func TestStopWritesOnlyExecutionAborted(t *testing.T) {
	t.Parallel()
	b := setup(t, `{"StartAt": "M", "States": {"M": {"Type": "Map", "End": true, "ItemProcessor": {
		"StartAt": "T", "States": {"T": {`+taskState+`, "End": true}}}}}}`, `[1, 2]`, interp.Options{})
	require.Len(t, b.only(t, interp.RunTask), 2)
	b.step(t, interp.Event{Kind: interp.Stop, Error: "Manual"})
	require.Equal(t, history.StatusAborted, b.x.Status)
	require.Len(t, b.only(t, interp.CancelTask), 2)
	require.Regexp(t, ` TaskScheduled ExecutionAborted$`, strings.Join(b.types(), " "))
	last := b.events[len(b.events)-1]
	require.Equal(t, int64(0), last.PreviousEventID)
	require.Equal(t, "Manual", *last.ExecutionAbortedEventDetails.Error)
}

// A task failed with no error and no cause (SendTaskFailure with neither)
// is caught as {"Error": null, "Cause": null}, as AWS records; one with an
// error and no cause keeps only its Error.
func TestCatchOfAFailureWithoutErrorOrCause(t *testing.T) {
	t.Parallel()
	def := `{"StartAt": "T", "States": {
		"T": {` + taskState + `, "Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.err", "Next": "P"}], "End": true},
		"P": {"Type": "Pass", "End": true}}}`
	for _, tt := range []struct{ errName, cause, want string }{
		{"", "", `{"a":1,"err":{"Error":null,"Cause":null}}`},
		{"E", "", `{"a":1,"err":{"Error":"E"}}`},
		{"E", "why", `{"a":1,"err":{"Error":"E","Cause":"why"}}`},
	} {
		b := setup(t, def, `{"a": 1}`, interp.Options{})
		task := b.only(t, interp.RunTask)[0]
		b.step(t, interp.Event{Kind: interp.TaskFailed, ID: task.ID, Error: tt.errName, Cause: tt.cause})
		require.Equal(t, tt.want, b.output(t))
	}
}

// TestTimeoutCaughtWithEmptyCause: a task that times out (TimeoutSeconds,
// or HeartbeatSeconds for an activity) is caught with the error output AWS
// records, {"Error": ..., "Cause": ""}, whatever the integration; uncaught,
// its end event carries no cause.
func TestTimeoutCaughtWithEmptyCause(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		resource, timeout, event, error string
		worker                          bool
	}{
		{"arn:aws:states:::lambda:invoke", `"TimeoutSeconds": 5`, "TaskTimedOut", "States.Timeout", false},
		{"arn:aws:lambda:us-east-1:123456789012:function:f", `"TimeoutSeconds": 5`, "LambdaFunctionTimedOut", "States.Timeout", false},
		{"arn:aws:states:::sqs:sendMessage.waitForTaskToken", `"HeartbeatSeconds": 5`, "TaskTimedOut", "States.Timeout", false},
		{"arn:aws:states:::states:startExecution.sync:2", `"TimeoutSeconds": 5`, "TaskTimedOut", "States.Timeout", false},
		{"arn:aws:states:us-east-1:123456789012:activity:work", `"TimeoutSeconds": 5`, "ActivityTimedOut", "States.Timeout", false},
		{"arn:aws:states:us-east-1:123456789012:activity:work", `"HeartbeatSeconds": 5`, "ActivityTimedOut", "States.HeartbeatTimeout", true},
	} {
		t.Run(tc.event+"/"+tc.timeout, func(t *testing.T) {
			t.Parallel()
			state := `"Type": "Task", "Resource": "` + tc.resource + `", ` + tc.timeout
			b := setup(t, `{"StartAt": "T", "States": {
				"T": {`+state+`, "Catch": [{"ErrorEquals": ["States.ALL"], "Next": "C"}], "End": true},
				"C": {"Type": "Pass", "End": true}}}`, `{}`, interp.Options{})
			if tc.worker {
				b.step(t, interp.Event{Kind: interp.TaskStarted, ID: b.only(t, interp.RunTask)[0].ID, WorkerName: "w"})
			}
			timer := b.only(t, interp.StartTimer)[0]
			b.now = timer.At
			b.step(t, interp.Event{Kind: interp.TimerFired, ID: timer.ID})
			require.Equal(t, `{"Error":"`+tc.error+`","Cause":""}`, b.output(t))
			require.Contains(t, b.types(), tc.event)

			b = setup(t, `{"StartAt": "T", "States": {"T": {`+state+`, "End": true}}}`, `{}`, interp.Options{})
			if tc.worker {
				b.step(t, interp.Event{Kind: interp.TaskStarted, ID: b.only(t, interp.RunTask)[0].ID, WorkerName: "w"})
			}
			timer = b.only(t, interp.StartTimer)[0]
			b.now = timer.At
			b.step(t, interp.Event{Kind: interp.TimerFired, ID: timer.ID})
			end := b.events[len(b.events)-1]
			require.Equal(t, history.EventExecutionFailed, end.Type)
			require.Equal(t, tc.error, *end.ExecutionFailedEventDetails.Error)
			require.Nil(t, end.ExecutionFailedEventDetails.Cause)
			timedOut := b.events[len(b.events)-2]
			require.Equal(t, tc.event, string(timedOut.Type))
		})
	}
}

// links renders events as "id/previousEventId:Type" from the first of typ.
func (b *testBundle) links(from string) string {
	var out []string
	for _, e := range b.events {
		if len(out) == 0 && string(e.Type) != from {
			continue
		}
		out = append(out, fmt.Sprintf("%d/%d:%s", e.ID, e.PreviousEventID, e.Type))
	}
	return strings.Join(out, " ")
}

// TestFailedTaskInBranchIsAborted: AWS tears down the Parallel branch or
// Map iteration that failed the state: its failed Task state writes
// TaskStateAborted, linked to the failure, before ParallelStateFailed (a
// Map: after MapIterationFailed); callback, .sync and activity tasks alike.
func TestFailedTaskInBranchIsAborted(t *testing.T) {
	t.Parallel()
	for _, res := range []string{
		"arn:aws:states:::sqs:sendMessage.waitForTaskToken",
		"arn:aws:states:::states:startExecution.sync:2",
		"arn:aws:states:us-east-1:123456789012:activity:work",
		"arn:aws:states:::lambda:invoke",
	} {
		t.Run(res, func(t *testing.T) {
			t.Parallel()
			task := `{"Type": "Task", "Resource": "` + res + `", "End": true}`
			b := setup(t, `{"StartAt": "P", "States": {"P": {"Type": "Parallel", "End": true,
				"Branches": [{"StartAt": "T", "States": {"T": `+task+`}}]}}}`, `{}`, interp.Options{})
			b.step(t, interp.Event{Kind: interp.TaskFailed, ID: b.only(t, interp.RunTask)[0].ID, Error: "E"})
			failed := b.events[len(b.events)-4]
			require.Contains(t, string(failed.Type), "Failed")
			require.Equal(t, fmt.Sprintf("%[1]d/%[2]d:%[3]s %[4]d/%[1]d:TaskStateAborted %[5]d/%[1]d:ParallelStateFailed %[6]d/%[5]d:ExecutionFailed",
				failed.ID, failed.PreviousEventID, failed.Type, failed.ID+1, failed.ID+2, failed.ID+3), b.links(string(failed.Type)))

			b = setup(t, `{"StartAt": "M", "States": {"M": {"Type": "Map", "End": true,
				"ItemProcessor": {"StartAt": "T", "States": {"T": `+task+`}}}}}`, `[1]`, interp.Options{})
			b.step(t, interp.Event{Kind: interp.TaskFailed, ID: b.only(t, interp.RunTask)[0].ID, Error: "E"})
			failed = b.events[len(b.events)-5]
			require.Equal(t, fmt.Sprintf("%[1]d/%[2]d:%[3]s %[4]d/%[1]d:MapIterationFailed %[5]d/%[1]d:TaskStateAborted %[6]d/%[1]d:MapStateFailed %[7]d/%[6]d:ExecutionFailed",
				failed.ID, failed.PreviousEventID, failed.Type, failed.ID+1, failed.ID+2, failed.ID+3, failed.ID+4), b.links(string(failed.Type)))
		})
	}
}

// TestMapAbortedIterationsOrder: when an iteration fails, each iteration
// still running writes MapIterationAborted and then its states' aborted
// events, all linked to the failure, as AWS records a Map of timed-out
// tasks.
func TestMapAbortedIterationsOrder(t *testing.T) {
	t.Parallel()
	b := setup(t, `{"StartAt": "M", "States": {"M": {"Type": "Map", "End": true,
		"ItemProcessor": {"StartAt": "T", "States": {"T": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "TimeoutSeconds": 5, "End": true}}}}}}`,
		`[1, 2, 3]`, interp.Options{})
	timers := b.only(t, interp.StartTimer)
	require.Len(t, timers, 3)
	b.now = timers[0].At
	b.step(t, interp.Event{Kind: interp.TimerFired, ID: timers[0].ID})
	timedOut := b.events[len(b.events)-9]
	require.Equal(t, history.EventTaskTimedOut, timedOut.Type)
	id := timedOut.ID
	require.Equal(t, fmt.Sprintf("%d/%d:MapIterationFailed %d/%d:TaskStateAborted %d/%d:MapIterationAborted %d/%d:TaskStateAborted %d/%d:MapIterationAborted %d/%d:TaskStateAborted %d/%d:MapStateFailed %d/%d:ExecutionFailed",
		id+1, id, id+2, id, id+3, id, id+4, id, id+5, id, id+6, id, id+7, id, id+8, id+7), b.links("MapIterationFailed"))
	require.Equal(t, 1, b.events[len(b.events)-6].MapIterationAbortedEventDetails.Index)
	require.Equal(t, 2, b.events[len(b.events)-4].MapIterationAbortedEventDetails.Index)
	require.Len(t, b.only(t, interp.CancelTask), 3)
}
