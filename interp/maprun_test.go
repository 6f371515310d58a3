package interp_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/failure"
	"stepwise/history"
	"stepwise/interp"
	"stepwise/interp/maprun"
	"stepwise/jsonvalue"
)

func distributedMap(extra string) string {
	return `{"StartAt": "M", "States": {"M": {"Type": "Map", "Label": "Lbl", ` + extra + `
		"ItemProcessor": {"ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "EXPRESS"}, "StartAt": "P", "States": {"P": {"Type": "Pass", "End": true}}},
		"End": true}}}`
}

// plan lists a map run's children: their inputs and numbers of items.
func plan(t *testing.T, r *interp.MapRunRequest) ([]any, []int) {
	t.Helper()
	p := r.Planner(nil)
	var inputs []any
	var counts []int
	for {
		in, n, ok, err := p.Next()
		require.NoError(t, err)
		if !ok {
			return inputs, counts
		}
		inputs, counts = append(inputs, in), append(counts, n)
	}
}

func mapRunTask(t *testing.T, b *testBundle) interp.Command {
	t.Helper()
	runs := b.only(t, interp.RunTask)
	require.Len(t, runs, 1)
	require.NotNil(t, runs[0].Task.MapRun)
	return runs[0]
}

// A distributed Map hands its items to a map run: the inputs after the
// ItemSelector, batched, with the run's settings; the answer is the
// state's result.
func TestMapRunRequest(t *testing.T) {
	t.Parallel()
	b := setup(t, distributedMap(`"ItemsPath": "$.items", "MaxConcurrency": 7, "ToleratedFailurePercentage": 12.5,
		"ItemSelector": {"v.$": "$$.Map.Item.Value", "i.$": "$$.Map.Item.Index"},
		"ItemBatcher": {"MaxItemsPerBatchPath": "$.per", "BatchInput": {"tag.$": "$.tag"}},`),
		`{"items": ["a", "b", "c", "d", "e"], "per": 2, "tag": "T"}`, interp.Options{})
	require.Equal(t, []string{"ExecutionStarted", "MapStateEntered", "MapStateStarted", "MapRunStarted"}, b.types())
	c := mapRunTask(t, b)
	r := c.Task.MapRun
	require.Equal(t, "Lbl", r.Label)
	require.Equal(t, "EXPRESS", r.ExecutionType)
	require.Equal(t, int64(7), r.MaxConcurrency)
	require.Equal(t, maprun.Tolerance{Count: maprun.Unset, Percent: 12.5}, r.Tolerance)
	inputs, counts := plan(t, r)
	require.Equal(t, []int{2, 2, 1}, counts)
	require.Equal(t, `[{"BatchInput":{"tag":"T"},"Items":[{"v":"a","i":0},{"v":"b","i":1}]},`+
		`{"BatchInput":{"tag":"T"},"Items":[{"v":"c","i":2},{"v":"d","i":3}]},`+
		`{"BatchInput":{"tag":"T"},"Items":[{"v":"e","i":4}]}]`, jsonvalue.String(inputs))
	require.True(t, strings.HasPrefix(r.Arn, "arn:aws:states:us-east-1:123456789012:mapRun:bench/Lbl:"), r.Arn)
	require.Equal(t, r.Arn, b.events[3].MapRunStartedEventDetails.MapRunArn)
	require.Equal(t, "P", r.Processor.StartAt)

	out, err := jsonvalue.ParseString(`[1, 2, 3]`)
	require.NoError(t, err)
	b.step(t, interp.Event{Kind: interp.TaskSucceeded, ID: c.ID, Output: out})
	require.Equal(t, `[1,2,3]`, b.output(t))
	require.Equal(t, []string{"ExecutionStarted", "MapStateEntered", "MapStateStarted", "MapRunStarted",
		"MapRunSucceeded", "MapStateSucceeded", "MapStateExited", "ExecutionSucceeded"}, b.types())
	// The state exits after the map run's end, as AWS links them.
	require.Equal(t, b.events[4].ID, b.events[6].PreviousEventID)
}

// MaxInputBytesPerBatch closes a batch before the items it holds pass
// that many bytes.
func TestMapRunBatchBytes(t *testing.T) {
	t.Parallel()
	b := setup(t, distributedMap(`"ItemBatcher": {"MaxInputBytesPerBatch": 12},`), `["aaa", "bbb", "ccc", "ddd"]`, interp.Options{})
	_, counts := plan(t, mapRunTask(t, b).Task.MapRun)
	require.Equal(t, []int{2, 2}, counts)
}

// A map run that fails fails the Map state, which a redrive runs again
// as MapRunRedriven and the same map run, asked to redrive its children.
func TestMapRunFailureAndRedrive(t *testing.T) {
	t.Parallel()
	b := setup(t, distributedMap(`"ToleratedFailureCount": 1,`), `[1, 2, 3]`, interp.Options{})
	c := mapRunTask(t, b)
	arn := c.Task.MapRun.Arn
	b.step(t, interp.Event{Kind: interp.TaskFailed, ID: c.ID, Error: failure.ExceedToleratedFailure, Cause: "too many"})
	require.Equal(t, history.StatusFailed, b.x.Status)
	require.Equal(t, []string{"ExecutionStarted", "MapStateEntered", "MapStateStarted", "MapRunStarted",
		"MapRunFailed", "MapStateFailed", "ExecutionFailed"}, b.types())

	b.step(t, interp.Event{Kind: interp.Redrive})
	c2 := mapRunTask(t, b)
	require.True(t, c2.Task.MapRun.Redrive)
	require.Equal(t, arn, c2.Task.MapRun.Arn)
	last := b.events[len(b.events)-1]
	require.Equal(t, history.EventMapRunRedriven, last.Type)
	require.Equal(t, arn, last.MapRunRedrivenEventDetails.MapRunArn)
	require.Equal(t, 1, last.MapRunRedrivenEventDetails.RedriveCount)
	out, err := jsonvalue.ParseString(`[1, null, 3]`)
	require.NoError(t, err)
	b.step(t, interp.Event{Kind: interp.TaskSucceeded, ID: c2.ID, Output: out})
	require.Equal(t, `[1,null,3]`, b.output(t))
}

// The Driver runs a map run's children in-process; a child that fails
// past the tolerance fails the run.
func TestDriverMapRun(t *testing.T) {
	t.Parallel()
	def := `{"StartAt": "M", "States": {"M": {"Type": "Map", "ToleratedFailureCount": %s,
		"ItemProcessor": {"ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"}, "StartAt": "C", "States": {
			"C": {"Type": "Choice", "Choices": [{"Variable": "$", "NumericEquals": 2, "Next": "F"}], "Default": "P"},
			"F": {"Type": "Fail", "Error": "Two"}, "P": {"Type": "Pass", "End": true}}},
		"End": true}}}`
	run := func(tolerated string) *interp.Execution {
		in, err := jsonvalue.ParseString(`[1, 2, 3]`)
		require.NoError(t, err)
		x := interp.New(mustParse(t, strings.Replace(def, "%s", tolerated, 1)), benchInfo, in, interp.Options{})
		(&interp.Driver{}).Run(x, t0)
		return x
	}
	x := run("1")
	require.Equal(t, history.StatusSucceeded, x.Status)
	out := x.Output.([]any)
	require.Equal(t, `1`, jsonvalue.String(out[0]))
	require.Equal(t, `3`, jsonvalue.String(out[2]))
	failed := out[1].(*jsonvalue.Object)
	st, _ := failed.Get("Status")
	require.Equal(t, "FAILED", st)
	errName, _ := failed.Get("Error")
	require.Equal(t, "Two", errName)
	x = run("0")
	require.Equal(t, history.StatusFailed, x.Status)
	require.Equal(t, failure.ExceedToleratedFailure, x.Failure.Name)
}

// Inline and distributed Maps tolerate alike (maprun.Tolerance): one of
// four items failing, under each setting of the bounds. Past its
// tolerance a map run fails with States.ExceedToleratedFailureThreshold,
// an inline Map with the failed iteration's error.
func TestInlineAndDistributedTolerateAlike(t *testing.T) {
	t.Parallel()
	def := `{"StartAt": "M", "States": {"M": {"Type": "Map", %s
		"ItemProcessor": {"ProcessorConfig": {"Mode": "%s", "ExecutionType": "STANDARD"}, "StartAt": "C", "States": {
			"C": {"Type": "Choice", "Choices": [{"Variable": "$", "NumericEquals": 2, "Next": "F"}], "Default": "P"},
			"F": {"Type": "Fail", "Error": "Two"}, "P": {"Type": "Pass", "End": true}}},
		"End": true}}}`
	for _, c := range []struct {
		fields    string
		tolerated bool
	}{
		{``, false},
		{`"ToleratedFailureCount": 0,`, false},
		{`"ToleratedFailurePercentage": 0,`, false},
		{`"ToleratedFailureCount": 1,`, true},
		{`"ToleratedFailurePercentage": 25,`, true},
		{`"ToleratedFailurePercentage": 24.9,`, false},
		{`"ToleratedFailureCount": 3, "ToleratedFailurePercentage": 0,`, false},
		{`"ToleratedFailureCount": 0, "ToleratedFailurePercentage": 100,`, false},
		{`"ToleratedFailureCount": 1, "ToleratedFailurePercentage": 50,`, true},
	} {
		for _, mode := range []string{"INLINE", "DISTRIBUTED"} {
			in, err := jsonvalue.ParseString(`[1, 2, 3, 4]`)
			require.NoError(t, err)
			src := strings.Replace(strings.Replace(def, "%s", c.fields, 1), "%s", mode, 1)
			x := interp.New(mustParse(t, src), benchInfo, in, interp.Options{})
			(&interp.Driver{}).Run(x, t0)
			if c.tolerated {
				require.Equal(t, history.StatusSucceeded, x.Status, "%s %s", mode, c.fields)
				continue
			}
			require.Equal(t, history.StatusFailed, x.Status, "%s %s", mode, c.fields)
			// A map run fails as a whole; an inline Map with the error of
			// the iteration that failed it.
			want := failure.ExceedToleratedFailure
			if mode == "INLINE" {
				want = "Two"
			}
			require.Equal(t, want, x.Failure.Name, "%s %s", mode, c.fields)
		}
	}
}

// A Map stopped while its map run runs is redriven as that run:
// MapRunRedriven with the same ARN, not a Map entered again.
func TestMapRunRedriveAfterStop(t *testing.T) {
	t.Parallel()
	b := setup(t, distributedMap(``), `[1, 2]`, interp.Options{})
	c := mapRunTask(t, b)
	b.step(t, interp.Event{Kind: interp.Stop})
	require.Equal(t, history.StatusAborted, b.x.Status)
	b.step(t, interp.Event{Kind: interp.Redrive})
	c2 := mapRunTask(t, b)
	require.Equal(t, c.Task.MapRun.Arn, c2.Task.MapRun.Arn)
	require.True(t, c2.Task.MapRun.Redrive)
	last := b.events[len(b.events)-1]
	require.Equal(t, history.EventMapRunRedriven, last.Type)
}
