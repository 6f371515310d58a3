package engine

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/engine/task"
	"stepwise/failure"
	"stepwise/history"
	"stepwise/interp"
	"stepwise/jsonvalue"
)

// pendingStates returns the states of the pending tasks with their
// parameters' JSON text, sorted.
func (f *fakeTasks) pendingStates() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for key := range f.pending {
		r := f.tasks[key].Request
		out = append(out, r.StateName+" "+jsonvalue.String(r.Parameters))
	}
	sort.Strings(out)
	return out
}

const rerunDef = `{"StartAt": "First", "States": {
	"First": {"Type": "Pass", "Result": 1, "ResultPath": "$.first", "Next": "T"},
	"T": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "Parameters": {"v": "old"}, "ResultPath": "$.t", "Next": "U"},
	"U": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "Parameters": {"in.$": "$"}, "ResultPath": "$.u", "End": true}}}`

// The corrected definition: T is given other parameters, U's result goes
// elsewhere.
const rerunFixed = `{"StartAt": "First", "States": {
	"First": {"Type": "Pass", "Result": 1, "ResultPath": "$.first", "Next": "T"},
	"T": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "Parameters": {"v": "fixed"}, "ResultPath": "$.t", "Next": "U"},
	"U": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "Parameters": {"in.$": "$"}, "ResultPath": "$.fixedU", "End": true}}}`

func TestRerunModesOnACorrectedDefinitionAcrossARestart(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		r       interp.Rerun
		first   string // the task the rerun runs first
		history []string
		output  string
	}{
		{"FAILED", interp.Rerun{Mode: interp.RerunFailed}, `T {"v":"fixed"}`,
			[]string{"ExecutionRedriven", "TaskStateEntered"}, `{"first":1,"t":"ok","fixedU":"ok"}`},
		{"NEXT", interp.Rerun{Mode: interp.RerunNext, Output: mustJSONValue(`{"n":7}`)}, `U {"in":{"n":7}}`,
			[]string{"ExecutionRedriven", "TaskStateExited", "TaskStateEntered"}, `{"n":7,"fixedU":"ok"}`},
		{"STATE", interp.Rerun{Mode: interp.RerunState, State: "T"}, `T {"v":"fixed"}`,
			[]string{"ExecutionRedriven", "TaskStateEntered"}, `{"first":1,"t":"ok","fixedU":"ok"}`},
		{"TOP", interp.Rerun{Mode: interp.RerunTop}, `T {"v":"fixed"}`,
			[]string{"ExecutionRedriven", "PassStateEntered"}, `{"first":1,"t":"ok","fixedU":"ok"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, 0)
			t.Cleanup(b.close)
			sm, m := b.machine(t, "rerun", rerunDef)
			row := b.start(t, sm, m, "night", `{}`)
			b.tasks.waitPending(t, 1)
			b.tasks.complete(task.Result{Failure: failure.New("Broken", "fix me")})
			b.waitStatus(t, row.Arn, history.StatusFailed)
			before := len(b.history(t, row.Arn))

			r := c.r
			r.Definition = rerunFixed
			_, plan, err := b.engine.RerunExecution(context.Background(), row.Arn, &r, true)
			require.NoError(t, err)
			require.Equal(t, c.r.Mode, plan.Mode)
			require.Len(t, b.history(t, row.Arn), before, "a dry run writes nothing")

			out, _, err := b.engine.RerunExecution(context.Background(), row.Arn, &r, false)
			require.NoError(t, err)
			require.Equal(t, history.StatusRunning, out.Status)
			require.Equal(t, 1, out.RedriveCount)
			b.tasks.waitPending(t, 1)
			require.Equal(t, []string{c.first}, b.tasks.pendingStates())
			require.Equal(t, c.history, b.history(t, row.Arn)[before:before+len(c.history)])

			// The engine stops in the middle of the rerun and starts
			// again: the execution is rebuilt on the corrected definition.
			b.close()
			b.open(t, 0)
			tasks := 2 // T then U
			if c.r.Mode == interp.RerunNext {
				tasks = 1
			}
			for range tasks {
				b.tasks.waitPending(t, 1)
				b.tasks.complete(task.Result{Output: "ok"})
			}
			done := b.waitStatus(t, row.Arn, history.StatusSucceeded)
			require.Equal(t, c.output, *done.Output)
			require.Equal(t, 1, done.RedriveCount)
		})
	}
}

func TestRerunRefusedChangesNothing(t *testing.T) {
	t.Parallel()
	b := setup(t, 0)
	t.Cleanup(b.close)
	sm, m := b.machine(t, "rerun", rerunDef)
	row := b.start(t, sm, m, "night", `{}`)
	b.tasks.waitPending(t, 1)
	b.tasks.complete(task.Result{Failure: failure.New("Broken", "fix me")})
	b.waitStatus(t, row.Arn, history.StatusFailed)
	before := b.history(t, row.Arn)
	for _, r := range []interp.Rerun{
		{Mode: interp.RerunState, State: "Nope"},
		{Mode: interp.RerunFailed, Definition: `{"StartAt": "T", "States": {"T": {"Type": "Pass", "End": true}}}`},
		{Mode: interp.RerunWarnings},
		{Mode: interp.RerunFailed, Definition: `{"StartAt": `},
	} {
		_, _, err := b.engine.RerunExecution(context.Background(), row.Arn, &r, false)
		var re *interp.RerunError
		require.ErrorAs(t, err, &re, "%+v", r)
	}
	require.Equal(t, before, b.history(t, row.Arn))
}

func mustJSONValue(s string) any {
	v, err := jsonvalue.ParseString(s)
	if err != nil {
		panic(err)
	}
	return v
}

func TestRerunAndRedriveInTheOperatorLogAcrossARestart(t *testing.T) {
	t.Parallel()
	b := setup(t, 0)
	t.Cleanup(b.close)
	sm, m := b.machine(t, "rerun", rerunDef)
	row := b.start(t, sm, m, "night", `{}`)
	fail := func() {
		t.Helper()
		b.tasks.waitPending(t, 1)
		b.tasks.complete(task.Result{Failure: failure.New("Broken", "fix me")})
		b.waitStatus(t, row.Arn, history.StatusFailed)
	}
	fail()
	// A redrive no one is named for is the engine's own: not listed.
	_, err := b.engine.RedriveExecution(context.Background(), row.Arn)
	require.NoError(t, err)
	fail()
	_, err = b.engine.RedriveExecution(WithActor(context.Background(), "AKIDOPS"), row.Arn)
	require.NoError(t, err)
	fail()
	r := interp.Rerun{Mode: interp.RerunNext, Output: mustJSONValue(`{"n":7}`), Definition: rerunFixed}
	_, _, err = b.engine.RerunExecution(WithActor(context.Background(), "console:AKIDOPS"), row.Arn, &r, true)
	require.NoError(t, err)
	_, _, err = b.engine.RerunExecution(WithActor(context.Background(), "console:AKIDOPS"), row.Arn, &r, false)
	require.NoError(t, err)
	fail()
	r = interp.Rerun{Mode: interp.RerunState, State: "T"}
	_, _, err = b.engine.RerunExecution(WithActor(context.Background(), "AKIDNIGHT"), row.Arn, &r, false)
	require.NoError(t, err)

	// The log is read back from the replay log, after a restart too.
	b.close()
	b.open(t, 0)
	acts, err := b.engine.Actions(context.Background(), row.Arn)
	require.NoError(t, err)
	for i := range acts {
		require.False(t, acts[i].At.IsZero())
		acts[i].At = time.Time{}
	}
	require.Equal(t, []Action{
		{By: "AKIDOPS", Kind: "Redrive"},
		{By: "console:AKIDOPS", Kind: "Rerun", Mode: "NEXT", Output: `{"n":7}`, Definition: rerunFixed},
		{By: "AKIDNIGHT", Kind: "Rerun", Mode: "STATE", State: "T"},
	}, acts)
}
