package interp_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/asl"
	"stepwise/failure"
	"stepwise/history"
	"stepwise/interp"
	"stepwise/jsonvalue"
)

// recorder is an Inspector that writes down what it is told.
type recorder struct {
	notes    []string
	retries  []string
	catches  []int
	exits    []string
	children any
	childErr *failure.Failure
}

func (r *recorder) Note(s *asl.State, stage interp.Stage, v any) {
	r.notes = append(r.notes, fmt.Sprintf("%s %d %s", s.Name, stage, jsonvalue.String(v)))
}

func (r *recorder) Retry(s *asl.State, fl *failure.Failure, i int, delay time.Duration, retrying bool) {
	r.retries = append(r.retries, fmt.Sprintf("%s %s #%d %v %v", s.Name, fl.Name, i, delay, retrying))
}

func (r *recorder) Catch(_ *asl.State, _ *failure.Failure, i int) {
	r.catches = append(r.catches, i)
}

func (r *recorder) Exit(s *asl.State, output string, assigned *jsonvalue.Object, next string) {
	r.exits = append(r.exits, fmt.Sprintf("%s %s %s %s", s.Name, output, jsonvalue.String(assigned), next))
}

func (r *recorder) Children(*asl.State) (any, *failure.Failure) { return r.children, r.childErr }

func note(name string, stage interp.Stage, v string) string {
	return fmt.Sprintf("%s %d %s", name, stage, v)
}

func TestInspectionTaskDataFlow(t *testing.T) {
	rec := &recorder{}
	vars := jsonvalue.NewObject(1)
	vars.Set("seen", jsonvalue.NumberFromInt(7))
	b := setup(t, `{"StartAt":"T","States":{
		"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","InputPath":"$.in",
			"Parameters":{"x.$":"$.v","old.$":"$seen"},"ResultSelector":{"r.$":"$.r"},
			"ResultPath":"$.res","OutputPath":"$.res","Assign":{"got.$":"$.r"},"Next":"N"},
		"N":{"Type":"Succeed"}}}`, `{"in":{"v":1}}`, interp.Options{Inspect: &interp.Inspection{
		Inspector: rec, Variables: vars, Context: map[string]any{"fixed": true}}})
	tasks := b.only(t, interp.RunTask)
	require.Len(t, tasks, 1)
	require.Equal(t, `{"x":1,"old":7}`, jsonvalue.String(tasks[0].Task.Parameters))
	out, _ := jsonvalue.ParseString(`{"r":2,"noise":3}`)
	b.step(t, interp.Event{Kind: interp.TaskSucceeded, ID: tasks[0].ID, Output: out})
	require.Equal(t, []string{
		note("T", interp.AfterInputPath, `{"v":1}`),
		note("T", interp.AfterParameters, `{"x":1,"old":7}`),
		note("T", interp.Result, `{"r":2,"noise":3}`),
		note("T", interp.AfterResultSelector, `{"r":2}`),
		note("T", interp.AfterResultPath, `{"in":{"v":1},"res":{"r":2}}`),
		note("N", interp.AfterInputPath, `{"r":2}`),
	}, rec.notes)
	require.Equal(t, []string{`T {"r":2} {"got":2} N`, `N {"r":2} {} `}, rec.exits)
	require.Equal(t, history.StatusSucceeded, b.x.Status)
}

func TestInspectionRetryAndCatch(t *testing.T) {
	def := `{"StartAt":"T","States":{
		"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke",
			"Retry":[{"ErrorEquals":["Boom"],"MaxAttempts":2,"IntervalSeconds":3,"BackoffRate":2}],
			"Catch":[{"ErrorEquals":["Other"],"Next":"N"},{"ErrorEquals":["States.ALL"],"ResultPath":"$.e","Next":"N"}],"End":true},
		"N":{"Type":"Pass","End":true}}}`
	// One retry made already: the second attempt's back-off is 6 s.
	rec := &recorder{}
	b := setup(t, def, `{}`, interp.Options{Inspect: &interp.Inspection{Inspector: rec, RetriesMade: 1}})
	task := b.only(t, interp.RunTask)[0]
	b.step(t, interp.Event{Kind: interp.TaskFailed, ID: task.ID, Error: "Boom", Cause: "c"})
	require.Equal(t, []string{"T Boom #0 6s true"}, rec.retries)
	require.Empty(t, rec.catches)

	// Both attempts used: the retrier matches with none left, the second
	// catcher catches.
	rec = &recorder{}
	b = setup(t, def, `{}`, interp.Options{Inspect: &interp.Inspection{Inspector: rec, RetriesMade: 2}})
	task = b.only(t, interp.RunTask)[0]
	b.step(t, interp.Event{Kind: interp.TaskFailed, ID: task.ID, Error: "Boom", Cause: "c"})
	require.Equal(t, []string{"T Boom #0 0s false"}, rec.retries)
	require.Equal(t, []int{1}, rec.catches)
	require.Contains(t, rec.exits, `T {"e":{"Error":"Boom","Cause":"c"}} {} N`)
}

func TestInspectionMapStandsInForIterations(t *testing.T) {
	def := `{"StartAt":"M","States":{"M":{"Type":"Map","ItemsPath":"$.items","MaxConcurrency":3,
		"ItemSelector":{"v.$":"$$.Map.Item.Value","i.$":"$$.Map.Item.Index"},
		"ToleratedFailureCount":1,
		"ItemProcessor":{"StartAt":"P","States":{"P":{"Type":"Fail","Error":"never runs"}}},"End":true}}}`
	for _, tc := range []struct {
		failed int
		status history.ExecutionStatus
	}{{0, history.StatusSucceeded}, {1, history.StatusSucceeded}, {2, history.StatusFailed}} {
		rec := &recorder{children: []any{"a", "b", "c"}}
		b := setup(t, def, `{"items":[10,20,30]}`, interp.Options{Inspect: &interp.Inspection{Inspector: rec, FailedIterations: tc.failed}})
		require.Equal(t, tc.status, b.x.Status, "failed iterations: %d", tc.failed)
		require.Contains(t, rec.notes, note("M", interp.AfterItemsPath, `[10,20,30]`))
		require.Contains(t, rec.notes, note("M", interp.AfterItemSelector, `[{"v":10,"i":0},{"v":20,"i":1},{"v":30,"i":2}]`))
		require.Contains(t, rec.notes, note("M", interp.MaxConcurrency, `3`))
		require.Contains(t, rec.notes, note("M", interp.ToleratedFailureCount, `1`))
		if tc.status == history.StatusFailed {
			require.Equal(t, failure.ExceedToleratedFailure, b.x.Failure.Name)
		} else {
			require.Equal(t, jsonvalue.String([]any{"a", "b", "c"}), jsonvalue.String(b.x.Output))
		}
		for _, e := range b.events {
			require.NotEqual(t, history.EventMapIterationStarted, e.Type, "no iteration runs under an inspection")
		}
	}
}

// A JSONPath Map state whose items are not an array fails as AWS reports
// it: naming the path (one "$" for the context object's), not the state.
func TestMapItemsNotArray(t *testing.T) {
	for path, want := range map[string]string{
		`"ItemsPath":"$.items",`:            `Reference path "$.items" must point to array.`,
		`"ItemsPath":"$$.Execution.Input",`: `Reference path "$.Execution.Input" must point to array.`,
		``:                                  `Reference path "$" must point to array.`,
	} {
		b := setup(t, `{"StartAt":"M","States":{"M":{"Type":"Map",`+path+`
			"ItemProcessor":{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
			`{"items":{"not":"an array"}}`, interp.Options{})
		require.Equal(t, history.StatusFailed, b.x.Status)
		require.Equal(t, failure.Runtime, b.x.Failure.Name)
		require.Equal(t, want, b.x.Failure.Cause)
	}
}
