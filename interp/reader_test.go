package interp_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/history"
	"stepwise/interp"
	"stepwise/jsonvalue"
)

const readerMap = `"Type": "Map",
	"ItemReader": {"Resource": "arn:aws:states:::s3:getObject", "ReaderConfig": {"InputType": "CSV", "CSVHeaderLocation": "GIVEN", "CSVHeaders": ["a"], "MaxItemsPath": "$.max"},
		"Parameters": {"Bucket": "b", "Key.$": "$.key"}},
	"ItemProcessor": {"ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"}, "StartAt": "P", "States": {"P": {"Type": "Pass", "End": true}}}`

// A Map state with an ItemReader starts its map run, asks for its items
// as a reader task (Parameters and ReaderConfig evaluated), and runs
// them once they come; the items read replace the input's.
func TestItemReader(t *testing.T) {
	t.Parallel()
	b := setup(t, `{"StartAt": "M", "States": {"M": {`+readerMap+`, "End": true}}}`, `{"key": "k.csv", "max": 2}`, interp.Options{})
	require.Equal(t, []string{"ExecutionStarted", "MapStateEntered", "MapStateStarted", "MapRunStarted"}, b.types())
	tasks := b.only(t, interp.RunTask)
	require.Len(t, tasks, 1)
	req := tasks[0].Task
	require.Equal(t, &interp.ReaderConfig{InputType: "CSV", CSVHeaderLocation: "GIVEN", CSVHeaders: []string{"a"}, CSVDelimiter: "COMMA", MaxItems: 2, Spool: req.Reader.Spool}, req.Reader)
	require.Contains(t, req.Reader.Spool, ":mapRun:")
	require.Equal(t, `{"Bucket":"b","Key":"k.csv"}`, jsonvalue.String(req.Parameters))

	items, err := jsonvalue.ParseString(`[{"a": "1"}, {"a": "2"}]`)
	require.NoError(t, err)
	b.step(t, interp.Event{Kind: interp.TaskSucceeded, ID: tasks[0].ID, Output: items})
	// The items read go to the map run, one child each.
	runs := b.only(t, interp.RunTask)
	require.Len(t, runs, 1)
	run := runs[0].Task.MapRun
	require.NotNil(t, run)
	require.Equal(t, `[{"a":"1"},{"a":"2"}]`, jsonvalue.String(run.Items))
	b.step(t, interp.Event{Kind: interp.TaskSucceeded, ID: runs[0].ID, Output: items})
	require.Equal(t, `[{"a":"1"},{"a":"2"}]`, b.output(t))
	require.Equal(t, []string{"ExecutionStarted", "MapStateEntered", "MapStateStarted", "MapRunStarted",
		"MapRunSucceeded", "MapStateSucceeded", "MapStateExited", "ExecutionSucceeded"}, b.types())
}

func TestItemReaderFailure(t *testing.T) {
	t.Parallel()
	b := setup(t, `{"StartAt": "M", "States": {"M": {`+readerMap+`, "End": true}}}`, `{"key": "k.csv", "max": -1}`, interp.Options{})
	require.Equal(t, history.StatusFailed, b.x.Status)
	require.Equal(t, "States.ItemReaderFailed", b.x.Failure.Name)
	require.Equal(t, "field MaxItems must be positive", b.x.Failure.Cause)
	require.Equal(t, []string{"ExecutionStarted", "MapStateEntered", "MapStateStarted", "MapRunStarted",
		"MapRunFailed", "MapStateFailed", "ExecutionFailed"}, b.types())
}

// A reading Map stopped with the rest of its Parallel cancels its reader
// task (not a timer) and is aborted.
func TestItemReaderCancelled(t *testing.T) {
	t.Parallel()
	b := setup(t, `{"StartAt": "Par", "States": {"Par": {"Type": "Parallel", "Branches": [
		{"StartAt": "M", "States": {"M": {`+readerMap+`, "End": true}}},
		{"StartAt": "Boom", "States": {"Boom": {`+taskState+`, "End": true}}}],
		"Catch": [{"ErrorEquals": ["States.ALL"], "Next": "Done"}], "End": true},
		"Done": {"Type": "Pass", "End": true}}}`, `{"key": "k.csv", "max": 0}`, interp.Options{})
	var reader, boom string
	for _, c := range b.only(t, interp.RunTask) {
		if c.Task.Reader != nil {
			reader = c.ID
		} else {
			boom = c.ID
		}
	}
	require.NotEmpty(t, reader)
	b.step(t, interp.Event{Kind: interp.TaskFailed, ID: boom, Error: "Bad"})
	var cancelled []string
	for _, c := range b.only(t, interp.CancelTask) {
		cancelled = append(cancelled, c.ID)
	}
	require.Contains(t, cancelled, reader)
	require.Contains(t, b.types(), "MapStateAborted")
	require.Equal(t, `{"Error":"Bad"}`, b.output(t))
}
