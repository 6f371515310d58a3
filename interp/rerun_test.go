package interp_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/interp"
	"stepwise/jsonvalue"
)

// rerunNet is A, then a Parallel P (B1; a Map M of I), then Z.
func rerunNet(iParams string) string {
	return `{"StartAt": "A", "States": {
		"A": {` + taskState + `, "Next": "P"},
		"P": {"Type": "Parallel", "Next": "Z", "Branches": [
			{"StartAt": "B1", "States": {"B1": {` + taskState + `, "End": true}}},
			{"StartAt": "M", "States": {"M": {"Type": "Map", "End": true, "ItemsPath": "$.items", "ItemProcessor": {
				"StartAt": "I", "States": {"I": {` + taskState + `, "Parameters": ` + iParams + `, "End": true}}}}}}]},
		"Z": {` + taskState + `, "End": true}}}`
}

// failedNet runs rerunNet to a failure: A, B1 and the first I succeed,
// the second I fails.
func failedNet(t *testing.T) *testBundle {
	t.Helper()
	b := setup(t, rerunNet(`{"n.$": "$"}`), `{"items": [1, 2]}`, interp.Options{})
	a := b.only(t, interp.RunTask)[0]
	b.step(t, interp.Event{Kind: interp.TaskSucceeded, ID: a.ID, Output: mustJSON(t, `{"items": [1, 2]}`)})
	tasks := b.only(t, interp.RunTask)
	require.Len(t, tasks, 3)
	byState := map[string][]string{}
	for _, c := range tasks {
		byState[c.Task.StateName] = append(byState[c.Task.StateName], c.ID)
	}
	b.step(t, interp.Event{Kind: interp.TaskSucceeded, ID: byState["B1"][0], Output: mustJSON(t, `"b"`)})
	b.step(t, interp.Event{Kind: interp.TaskSucceeded, ID: byState["I"][0], Output: mustJSON(t, `"i"`)})
	b.step(t, interp.Event{Kind: interp.TaskFailed, ID: byState["I"][1], Error: "Boom"})
	require.Equal(t, "FAILED", string(b.x.Status))
	return b
}

func taskStates(b *testBundle) []string {
	var out []string
	for _, c := range b.cmds {
		if c.Kind == interp.RunTask {
			out = append(out, c.Task.StateName)
		}
	}
	return out
}

func TestRerunModesOnParallelMapNet(t *testing.T) {
	t.Parallel()
	t.Run("FAILED on a corrected definition", func(t *testing.T) {
		t.Parallel()
		b := failedNet(t)
		r := &interp.Rerun{Mode: interp.RerunFailed, Machine: mustParse(t, rerunNet(`{"fixed": true}`))}
		p, err := b.x.PlanRerun(r)
		require.NoError(t, err)
		require.Equal(t, []string{"A", "B1"}, p.Keep)
		require.Equal(t, []string{"I", "M", "P"}, p.Rerun)
		b.step(t, interp.Event{Kind: interp.RerunKind, Rerun: r})
		require.Equal(t, []string{"I"}, taskStates(b))
		require.Equal(t, `{"fixed":true}`, jsonvalue.String(b.only(t, interp.RunTask)[0].Task.Parameters))
		require.Equal(t, 1, b.x.Info.RedriveCount)
	})
	t.Run("NEXT", func(t *testing.T) {
		t.Parallel()
		b := failedNet(t)
		n := len(b.events)
		b.step(t, interp.Event{Kind: interp.RerunKind, Rerun: &interp.Rerun{Mode: interp.RerunNext, Output: mustJSON(t, `{"given": 1}`)}})
		require.Equal(t, []string{"ExecutionRedriven", "ParallelStateExited", "TaskStateEntered", "TaskScheduled"}, b.types()[n:n+4])
		require.Equal(t, []string{"Z"}, taskStates(b))
		require.Equal(t, `{"given":1}`, jsonvalue.String(b.only(t, interp.RunTask)[0].Task.Parameters))
	})
	t.Run("STATE", func(t *testing.T) {
		t.Parallel()
		b := failedNet(t)
		n := len(b.events)
		r := &interp.Rerun{Mode: interp.RerunState, State: "P"}
		p, err := b.x.PlanRerun(r)
		require.NoError(t, err)
		require.Equal(t, []string{"A"}, p.Keep)
		b.step(t, interp.Event{Kind: interp.RerunKind, Rerun: r})
		require.ElementsMatch(t, []string{"B1", "I", "I"}, taskStates(b))
		require.Equal(t, []string{"ExecutionRedriven", "ParallelStateEntered"}, b.types()[n:n+2])
		require.Equal(t, `{"items":[1,2]}`, b.events[n+1].StateEnteredEventDetails.Input, "entered with the input it had")
	})
	t.Run("TOP", func(t *testing.T) {
		t.Parallel()
		b := failedNet(t)
		r := &interp.Rerun{Mode: interp.RerunTop}
		p, err := b.x.PlanRerun(r)
		require.NoError(t, err)
		require.Empty(t, p.Keep)
		b.step(t, interp.Event{Kind: interp.RerunKind, Rerun: r})
		require.Equal(t, []string{"A"}, taskStates(b))
		require.Equal(t, `{"items":[1,2]}`, jsonvalue.String(b.only(t, interp.RunTask)[0].Task.Parameters))
	})
	t.Run("WARNINGS", func(t *testing.T) {
		t.Parallel()
		b := failedNet(t)
		r := &interp.Rerun{Mode: interp.RerunWarnings, Warned: []interp.WarnedState{{Name: "B1", Input: mustJSON(t, `{"w": 1}`)}}}
		p, err := b.x.PlanRerun(r)
		require.NoError(t, err)
		require.Equal(t, []string{"A"}, p.Keep)
		require.Contains(t, p.Rerun, "B1")
		b.step(t, interp.Event{Kind: interp.RerunKind, Rerun: r})
		require.Equal(t, []string{"B1"}, taskStates(b), "the warned state runs alone first")
		require.Equal(t, `{"w":1}`, jsonvalue.String(b.only(t, interp.RunTask)[0].Task.Parameters))
		b.step(t, interp.Event{Kind: interp.TaskSucceeded, ID: b.only(t, interp.RunTask)[0].ID, Output: mustJSON(t, `"b2"`)})
		require.Equal(t, []string{"I"}, taskStates(b), "then the failed iteration")
	})
}

func TestRerunRefusedWherePositionsDoNotMatch(t *testing.T) {
	t.Parallel()
	b := failedNet(t)
	moved := `{"StartAt": "A", "States": {
		"A": {` + taskState + `, "Next": "B1"},
		"B1": {` + taskState + `, "Next": "P"},
		"P": {"Type": "Parallel", "Next": "Z", "Branches": [
			{"StartAt": "M", "States": {"M": {"Type": "Map", "End": true, "ItemsPath": "$.items", "ItemProcessor": {
				"StartAt": "I", "States": {"I": {` + taskState + `, "End": true}}}}}}]},
		"Z": {` + taskState + `, "End": true}}}`
	gone := `{"StartAt": "P", "States": {
		"P": {"Type": "Parallel", "End": true, "Branches": [
			{"StartAt": "B1", "States": {"B1": {` + taskState + `, "End": true}}},
			{"StartAt": "M", "States": {"M": {"Type": "Map", "End": true, "ItemsPath": "$.items", "ItemProcessor": {
				"StartAt": "I", "States": {"I": {` + taskState + `, "End": true}}}}}}]}}}`
	for _, c := range []struct {
		r    *interp.Rerun
		want string
	}{
		{&interp.Rerun{Mode: interp.RerunFailed, Machine: mustParse(t, moved)}, "the state 'B1' keeps its result but moved from Parallel 'P' branch 1 to top level"},
		{&interp.Rerun{Mode: interp.RerunFailed, Machine: mustParse(t, gone)}, "the state 'A' keeps its result but is not in the definition"},
		{&interp.Rerun{Mode: interp.RerunState, State: "I"}, "the state 'I' is inside Parallel 'P' branch 2 / Map 'M': name a state at the top level"},
		{&interp.Rerun{Mode: interp.RerunState, State: "Nope"}, "the state 'Nope' does not exist in the definition"},
		{&interp.Rerun{Mode: interp.RerunState, State: "Z"}, "the state 'Z' was never entered: its input is not known"},
	} {
		_, err := b.x.PlanRerun(c.r)
		var re *interp.RerunError
		require.ErrorAs(t, err, &re)
		require.Equal(t, c.want, re.Msg)
		evs, _, err := b.x.Step(interp.Event{Kind: interp.RerunKind, Rerun: c.r}, b.now)
		require.ErrorAs(t, err, &re)
		require.Empty(t, evs)
	}
	require.Equal(t, "FAILED", string(b.x.Status), "a refused rerun changes nothing")
	require.Equal(t, 0, b.x.Info.RedriveCount)
}
