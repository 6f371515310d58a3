package interp_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/history"
	"stepwise/interp"
	"stepwise/jsonvalue"
)

func TestHoldParksEveryIterationAndReleaseEntersThem(t *testing.T) {
	t.Parallel()
	b := setup(t, `{"StartAt": "M", "States": {"M": {"Type": "Map", "End": true, "ItemProcessor": {
		"StartAt": "A", "States": {"A": {"Type": "Pass", "Next": "T"}, "T": {`+taskState+`, "End": true}}}}}}`,
		`[1, 2]`, interp.Options{Policies: interp.Policies{"T": {interp.PolicyHeld}}})
	require.Empty(t, b.only(t, interp.RunTask), "no task runs before a held state")
	require.Equal(t, []string{"T", "T"}, b.x.Parked())
	n := len(b.events)
	b.step(t, interp.Event{Kind: interp.Release, State: "T", By: "op"})
	require.Len(t, b.only(t, interp.RunTask), 2)
	require.Equal(t, []string{"TaskStateEntered", "TaskScheduled", "TaskStateEntered", "TaskScheduled"}, b.types()[n:])
	require.Empty(t, b.x.Parked())
}

func TestSuspendLetsTheTaskFinishThenParks(t *testing.T) {
	t.Parallel()
	b := setup(t, `{"StartAt": "T", "States": {"T": {`+taskState+`, "Next": "U"}, "U": {`+taskState+`, "End": true}}}`, `{}`, interp.Options{})
	id := b.only(t, interp.RunTask)[0].ID
	b.step(t, interp.Event{Kind: interp.Suspend})
	require.True(t, b.x.Suspended())
	b.step(t, interp.Event{Kind: interp.TaskSucceeded, ID: id, Output: jsonvalue.NewObject(0)})
	require.Empty(t, b.only(t, interp.RunTask))
	require.Equal(t, []string{"U"}, b.x.Parked())
	require.Equal(t, history.EventType("TaskStateExited"), b.events[len(b.events)-1].Type)
	b.step(t, interp.Event{Kind: interp.Resume})
	require.Len(t, b.only(t, interp.RunTask), 1)
}

func TestSkipRunningTaskAndKillWithCatch(t *testing.T) {
	t.Parallel()
	b := setup(t, `{"StartAt": "T", "States": {"T": {`+taskState+`, "Next": "U"},
		"U": {`+taskState+`, "Catch": [{"ErrorEquals": ["Op.Killed"], "Next": "C"}], "End": true},
		"C": {"Type": "Pass", "End": true}}}`, `{}`, interp.Options{})
	id := b.only(t, interp.RunTask)[0].ID
	b.step(t, interp.Event{Kind: interp.Skip, State: "T", Output: mustJSON(t, `{"s":1}`)})
	require.Equal(t, []interp.Command{{Kind: interp.CancelTask, ID: id}}, b.only(t, interp.CancelTask))
	require.Len(t, b.only(t, interp.RunTask), 1)
	u := b.only(t, interp.RunTask)[0]
	require.Equal(t, `{"s":1}`, jsonvalue.String(u.Task.Parameters))
	// The skipped task's late result is dropped.
	evs, _, err := b.x.Step(interp.Event{Kind: interp.TaskSucceeded, ID: id, Output: jsonvalue.NewObject(0)}, b.now)
	require.NoError(t, err)
	require.Empty(t, evs)
	b.step(t, interp.Event{Kind: interp.Kill, State: "U", Error: "Op.Killed", Cause: "by hand"})
	require.True(t, b.only(t, interp.CancelTask)[0].Kill)
	require.Equal(t, `{"Error":"Op.Killed","Cause":"by hand"}`, b.output(t))
}

func TestControlsRefused(t *testing.T) {
	t.Parallel()
	b := setup(t, `{"StartAt": "W", "States": {"W": {"Type": "Wait", "Seconds": 5, "Next": "T"}, "T": {`+taskState+`, "End": true}}}`, `{}`, interp.Options{})
	_, _, err := b.x.Step(interp.Event{Kind: interp.Skip, State: "W"}, b.now)
	var ce *interp.ControlError
	require.ErrorAs(t, err, &ce)
	_, _, err = b.x.Step(interp.Event{Kind: interp.Kill, State: "T"}, b.now)
	require.ErrorAs(t, err, &ce)
}

func mustJSON(t *testing.T, s string) any {
	t.Helper()
	v, err := jsonvalue.ParseString(s)
	require.NoError(t, err)
	return v
}
