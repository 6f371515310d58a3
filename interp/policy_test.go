package interp_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/failure"
	"stepwise/history"
	"stepwise/interp"
	"stepwise/jsonvalue"
)

const parallelFastFails = `{"StartAt": "Fan", "States": {"Fan": {"Type": "Parallel", "End": true, "Branches": [
	{"StartAt": "Slow", "States": {"Slow": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "End": true}}},
	{"StartAt": "Fast", "States": {"Fast": {"Type": "Fail", "Error": "Boom"}}}]}}}`

// AWS stops the running branches when one fails.
func TestParallelStopsRunningBranches(t *testing.T) {
	t.Parallel()
	b := setup(t, parallelFastFails, `{}`, interp.Options{})
	require.Equal(t, history.StatusFailed, b.x.Status)
	require.Contains(t, b.types(), "TaskStateAborted")
}

// With finish-running, the slow branch's task runs to its end, the state
// then fails with the first error, and a redrive runs only the branch
// that failed: the slow branch's result is kept.
func TestPolicyFinishRunning(t *testing.T) {
	t.Parallel()
	ps, err := interp.PoliciesFromTags(map[string]string{"stepwise:policy/Fan": "finish-running", "team": "batch"})
	require.NoError(t, err)
	b := setup(t, parallelFastFails, `{}`, interp.Options{Policies: ps})
	require.Equal(t, history.StatusRunning, b.x.Status, "the slow branch still runs")
	require.NotContains(t, b.types(), "TaskStateAborted")
	tasks := b.only(t, interp.RunTask)
	require.Len(t, tasks, 1)
	out, err := jsonvalue.ParseString(`{"slow": "done"}`)
	require.NoError(t, err)
	b.step(t, interp.Event{Kind: interp.TaskSucceeded, ID: tasks[0].ID, Output: out})
	require.Equal(t, history.StatusFailed, b.x.Status)
	require.Equal(t, "Boom", b.x.Failure.Name)

	b.step(t, interp.Event{Kind: interp.Redrive})
	require.Empty(t, b.only(t, interp.RunTask), "the branch that succeeded does not run again")
	require.Equal(t, history.StatusFailed, b.x.Status, "the failing branch fails again")
}

// With retry-failed-items, a Map's Retry runs only the iterations that
// failed; those that succeeded keep their results.
func TestPolicyRetryFailedItems(t *testing.T) {
	t.Parallel()
	def := `{"StartAt": "M", "States": {"M": {"Type": "Map", "End": true,
		"Retry": [{"ErrorEquals": ["States.ALL"], "MaxAttempts": 2, "IntervalSeconds": 1}],
		"ItemProcessor": {"StartAt": "T", "States": {"T": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "End": true}}}}}}`
	run := func(ps interp.Policies) (reruns int, output string) {
		b := setup(t, def, `[1, 2, 3]`, interp.Options{Policies: ps})
		tasks := b.only(t, interp.RunTask)
		require.Len(t, tasks, 3)
		ok := func(v string) any { out, err := jsonvalue.ParseString(v); require.NoError(t, err); return out }
		b.step(t, interp.Event{Kind: interp.TaskSucceeded, ID: tasks[0].ID, Output: ok(`"one"`)})
		b.step(t, interp.Event{Kind: interp.TaskFailed, ID: tasks[1].ID, Error: "Flaky"})
		for _, c := range b.cmds {
			if c.Kind == interp.RunTask && c.ID == tasks[2].ID {
				t.Fatal("no task is dispatched twice")
			}
		}
		// The retry's back-off.
		var timer string
		for _, c := range b.cmds {
			if c.Kind == interp.StartTimer {
				timer = c.ID
			}
		}
		require.NotEmpty(t, timer)
		b.step(t, interp.Event{Kind: interp.TimerFired, ID: timer})
		again := b.only(t, interp.RunTask)
		for _, c := range again {
			b.step(t, interp.Event{Kind: interp.TaskSucceeded, ID: c.ID, Output: ok(`"again"`)})
		}
		return len(again), jsonvalue.String(b.x.Output)
	}
	n, out := run(nil)
	require.Equal(t, 3, n, "AWS runs every item again")
	require.Equal(t, `["again","again","again"]`, out)
	ps, err := interp.PoliciesFromTags(map[string]string{"stepwise:policy/M": "retry-failed-items"})
	require.NoError(t, err)
	n, out = run(ps)
	require.Equal(t, 2, n, "the failed item and the one stopped with it")
	require.Equal(t, `["one","again","again"]`, out)
}

// A policy tag that names no state or no known policy is refused.
func TestPoliciesFromTags(t *testing.T) {
	t.Parallel()
	_, err := interp.PoliciesFromTags(map[string]string{"stepwise:policy/": "finish-running"})
	require.ErrorContains(t, err, "names no state")
	_, err = interp.PoliciesFromTags(map[string]string{"stepwise:policy/M": "finish-running, nope"})
	require.ErrorContains(t, err, `unknown policy "nope"`)
	ps, err := interp.PoliciesFromTags(map[string]string{"stepwise:policy/M": "finish-running,retry-failed-items"})
	require.NoError(t, err)
	back, err := interp.ParsePolicies(ps.Text())
	require.NoError(t, err)
	require.Equal(t, ps, back)
	require.True(t, back.Has("M", interp.PolicyRetryFailedItems))
}

// A distributed Map with retry-failed-items retries by redriving its map
// run: the same run, its failed children only.
func TestPolicyRetryFailedItemsDistributed(t *testing.T) {
	t.Parallel()
	ps, err := interp.PoliciesFromTags(map[string]string{"stepwise:policy/M": "retry-failed-items"})
	require.NoError(t, err)
	def := `{"StartAt": "M", "States": {"M": {"Type": "Map", "End": true,
		"Retry": [{"ErrorEquals": ["States.ALL"], "MaxAttempts": 1, "IntervalSeconds": 1}],
		"ItemProcessor": {"ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"}, "StartAt": "P", "States": {"P": {"Type": "Pass", "End": true}}}}}}`
	b := setup(t, def, `[1, 2]`, interp.Options{Policies: ps})
	c := mapRunTask(t, b)
	b.step(t, interp.Event{Kind: interp.TaskFailed, ID: c.ID, Error: failure.ExceedToleratedFailure})
	var timer string
	for _, cmd := range b.cmds {
		if cmd.Kind == interp.StartTimer {
			timer = cmd.ID
		}
	}
	require.NotEmpty(t, timer)
	b.step(t, interp.Event{Kind: interp.TimerFired, ID: timer})
	again := mapRunTask(t, b)
	require.Equal(t, c.Task.MapRun.Arn, again.Task.MapRun.Arn)
	require.True(t, again.Task.MapRun.Redrive)
}
