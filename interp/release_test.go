package interp_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/history"
	"stepwise/interp"
	"stepwise/jsonvalue"
)

// An execution that lets its blocks go (Release) gives them to the next
// execution, cleared: the next allocates less, and its events carry
// nothing of the first's. Not in parallel: allocation counts are
// process-wide, and the pool is per processor.
func TestReleaseGivesClearedBlocksToTheNext(t *testing.T) { //nolint:paralleltest // see above
	assigning := mustParse(t, `{"StartAt": "A", "States": {
	  "A": {"Type": "Pass", "Assign": {"v": 1}, "Next": "B"},
	  "B": {"Type": "Pass", "Assign": {"w.$": "$"}, "End": true}}}`)
	plain := mustParse(t, `{"StartAt": "A", "States": {
	  "A": {"Type": "Pass", "Result": {"r": 1}, "Next": "B"},
	  "B": {"Type": "Succeed"}}}`)
	input, err := jsonvalue.ParseString(`{"k": "v"}`)
	require.NoError(t, err)
	run := func(m any) (*interp.Execution, []*history.Event) {
		x := interp.New(plain, benchInfo, input, interp.Options{})
		if m != nil {
			x = interp.New(assigning, benchInfo, input, interp.Options{})
		}
		events, _, err := x.Start(t0)
		if err != nil || x.Status != history.StatusSucceeded {
			panic(err)
		}
		return x, events
	}
	render := func(events []*history.Event) string {
		b, err := json.Marshal(events)
		if err != nil {
			panic(err)
		}
		return string(b)
	}
	_, events := run(nil)
	want := render(events)
	require.NotContains(t, want, "assignedVariables")

	kept := testing.AllocsPerRun(50, func() { run(nil) })
	released := testing.AllocsPerRun(50, func() {
		x, _ := run(nil)
		x.Release()
	})
	require.LessOrEqual(t, released, kept-4, "the blocks of events, entered and exited details and environments are taken again")

	var got []string
	testing.AllocsPerRun(10, func() {
		a, _ := run(true)
		a.Release()
		x, events := run(nil)
		got = append(got, render(events))
		x.Release()
	})
	for _, g := range got {
		require.Equal(t, want, g)
	}
}
