package interp_test

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/history"
	"stepwise/interp"
	"stepwise/jsonvalue"
)

// invocationRun drives an execution by hand: tasks are answered first in
// the order they were issued (answer decides how), then the earliest
// timer fires. It keeps the events it applied, so that a replay can apply
// them again, and each task's "state#invocation".
type invocationRun struct {
	x       *interp.Execution
	now     time.Time
	applied []interp.Event
	at      []time.Time
	calls   []string
	tasks   []interp.Command
	timers  []interp.Command
}

func startInvocationRun(t *testing.T, def, input string) *invocationRun {
	t.Helper()
	in, err := jsonvalue.ParseString(input)
	require.NoError(t, err)
	r := &invocationRun{x: interp.New(mustParse(t, def), benchInfo, in, interp.Options{}), now: t0}
	_, cmds, err := r.x.Start(t0)
	require.NoError(t, err)
	r.take(cmds)
	return r
}

func (r *invocationRun) take(cmds []interp.Command) {
	for _, c := range cmds {
		switch c.Kind {
		case interp.RunTask:
			r.calls = append(r.calls, fmt.Sprintf("%s#%d", c.Task.StateName, c.Task.Invocation))
			r.tasks = append(r.tasks, c)
		case interp.StartTimer:
			r.timers = append(r.timers, c)
		}
	}
}

// run answers tasks until the execution ends or waits for nothing.
func (r *invocationRun) run(t *testing.T, answer func(req *interp.TaskRequest) interp.Event) {
	t.Helper()
	for i := 0; r.x.Status == history.StatusRunning && i < 1000; i++ {
		var ev interp.Event
		switch {
		case len(r.tasks) > 0:
			c := r.tasks[0]
			r.tasks = r.tasks[1:]
			ev = answer(c.Task)
			ev.ID = c.ID
		case len(r.timers) > 0:
			sort.SliceStable(r.timers, func(i, j int) bool { return r.timers[i].At.Before(r.timers[j].At) })
			c := r.timers[0]
			r.timers = r.timers[1:]
			if c.At.After(r.now) {
				r.now = c.At
			}
			ev = interp.Event{Kind: interp.TimerFired, ID: c.ID}
		default:
			return
		}
		r.step(t, ev)
	}
}

func (r *invocationRun) step(t *testing.T, ev interp.Event) {
	t.Helper()
	_, cmds, err := r.x.Step(ev, r.now)
	require.NoError(t, err)
	r.applied, r.at = append(r.applied, ev), append(r.at, r.now)
	r.take(cmds)
}

// replay rebuilds the execution from the events applied and returns the
// tasks it issued on the way.
func (r *invocationRun) replay(t *testing.T, def string) []string {
	t.Helper()
	again := &invocationRun{x: interp.New(mustParse(t, def), benchInfo, r.x.Input, interp.Options{})}
	_, cmds, err := again.x.Start(t0)
	require.NoError(t, err)
	again.take(cmds)
	for i, ev := range r.applied {
		_, cmds, err := again.x.Step(ev, r.at[i])
		require.NoError(t, err)
		again.take(cmds)
	}
	return again.calls
}

// byInvocation answers each state's invocations from a list (Output, or
// Error when it starts with "!"); past the list the task fails.
func byInvocation(answers map[string][]string) func(req *interp.TaskRequest) interp.Event {
	return func(req *interp.TaskRequest) interp.Event {
		list := answers[req.StateName]
		if req.Invocation >= len(list) {
			return interp.Event{Kind: interp.TaskFailed, Error: "States.Runtime", Cause: "no answer"}
		}
		if a := list[req.Invocation]; a[0] == '!' {
			return interp.Event{Kind: interp.TaskFailed, Error: a[1:]}
		}
		return interp.Event{Kind: interp.TaskSucceeded, Output: list[req.Invocation]}
	}
}

// A state's tasks are numbered through the execution: a loop back to it
// and its retries both take the next number, another state counts its
// own, and replaying the same events numbers them the same.
func TestInvocationCountsLoopsAndRetries(t *testing.T) {
	t.Parallel()
	def := `{"StartAt": "Submit", "States": {
		"Submit": {` + taskState + `, "ResultPath": "$.job", "Next": "Wait"},
		"Wait": {"Type": "Wait", "Seconds": 60, "Next": "Check"},
		"Check": {` + taskState + `, "ResultPath": "$.status",
			"Retry": [{"ErrorEquals": ["Busy"], "IntervalSeconds": 1, "MaxAttempts": 3}], "Next": "Done?"},
		"Done?": {"Type": "Choice", "Choices": [{"Variable": "$.status", "StringEquals": "SUCCEEDED", "Next": "Done"}], "Default": "Wait"},
		"Done": {"Type": "Succeed"}}}`
	r := startInvocationRun(t, def, `{}`)
	r.run(t, byInvocation(map[string][]string{
		"Submit": {"job-1"},
		"Check":  {"RUNNING", "!Busy", "RUNNING", "!Busy", "!Busy", "SUCCEEDED"},
	}))
	require.Equal(t, history.StatusSucceeded, r.x.Status, "%v", r.x.Failure)
	require.Equal(t, `{"job":"job-1","status":"SUCCEEDED"}`, jsonvalue.String(r.x.Output))
	require.Equal(t, []string{"Submit#0", "Check#0", "Check#1", "Check#2", "Check#3", "Check#4", "Check#5"}, r.calls)
	require.Equal(t, r.calls, r.replay(t, def))
}

// The iterations of a Map share their states' count, in the order their
// tasks start; so do a Parallel's branches each time the Parallel runs.
func TestInvocationCountsMapIterationsAndParallelBranches(t *testing.T) {
	t.Parallel()
	mapDef := `{"StartAt": "Each", "States": {"Each": {"Type": "Map", "MaxConcurrency": 1, "ItemsPath": "$.items",
		"ItemProcessor": {"StartAt": "Call", "States": {"Call": {` + taskState + `,
			"Retry": [{"ErrorEquals": ["Boom"], "IntervalSeconds": 1, "MaxAttempts": 1}], "End": true}}}, "End": true}}}`
	r := startInvocationRun(t, mapDef, `{"items": [1, 2, 3]}`)
	r.run(t, byInvocation(map[string][]string{"Call": {"!Boom", "idx1", "idx2", "idx3"}}))
	require.Equal(t, history.StatusSucceeded, r.x.Status, "%v", r.x.Failure)
	require.Equal(t, `["idx1","idx2","idx3"]`, jsonvalue.String(r.x.Output), "the second item goes on from the first's retry")
	require.Equal(t, []string{"Call#0", "Call#1", "Call#2", "Call#3"}, r.calls)
	require.Equal(t, r.calls, r.replay(t, mapDef))

	parDef := `{"StartAt": "Both", "States": {
		"Both": {"Type": "Parallel", "ResultPath": "$.last", "Next": "Again?", "Branches": [
			{"StartAt": "Left", "States": {"Left": {` + taskState + `, "End": true}}},
			{"StartAt": "Right", "States": {"Right": {` + taskState + `, "End": true}}}]},
		"Again?": {"Type": "Choice", "Choices": [{"Variable": "$.last[0]", "StringEquals": "l0", "Next": "Both"}], "Default": "Done"},
		"Done": {"Type": "Succeed"}}}`
	r = startInvocationRun(t, parDef, `{}`)
	r.run(t, byInvocation(map[string][]string{"Left": {"l0", "l1"}, "Right": {"r0", "r1"}}))
	require.Equal(t, history.StatusSucceeded, r.x.Status, "%v", r.x.Failure)
	require.Equal(t, `{"last":["l1","r1"]}`, jsonvalue.String(r.x.Output))
	require.Equal(t, []string{"Left#0", "Right#0", "Left#1", "Right#1"}, r.calls)
	require.Equal(t, r.calls, r.replay(t, parDef))
}

// A redrive goes on counting where the execution stopped.
func TestInvocationCountsAcrossRedrive(t *testing.T) {
	t.Parallel()
	r := startInvocationRun(t, `{"StartAt": "T", "States": {"T": {`+taskState+`, "End": true}}}`, `{}`)
	answer := byInvocation(map[string][]string{"T": {"!Broken", "fixed"}})
	r.run(t, answer)
	require.Equal(t, history.StatusFailed, r.x.Status)
	r.step(t, interp.Event{Kind: interp.Redrive})
	r.run(t, answer)
	require.Equal(t, history.StatusSucceeded, r.x.Status, "%v", r.x.Failure)
	require.Equal(t, []string{"T#0", "T#1"}, r.calls)
}
