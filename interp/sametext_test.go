package interp_test

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"stepwise/history"
	"stepwise/interp"
	"stepwise/jsonvalue"
)

// A state whose output is its input (a Choice, a Succeed) exits with the
// text its entered event wrote, not written out again; a first state's
// input given as the client's text is written out for its output.
func TestOutputThatIsTheInputReusesItsText(t *testing.T) {
	t.Parallel()
	def := `{"StartAt": "C0", "States": {
	  "C0": {"Type": "Choice", "Choices": [{"Variable": "$.a", "NumericEquals": 1, "Next": "P"}], "Default": "P"},
	  "P": {"Type": "Pass", "Parameters": {"b.$": "$.a"}, "Next": "C"},
	  "C": {"Type": "Choice", "Choices": [{"Variable": "$.b", "NumericEquals": 1, "Next": "Done"}], "Default": "Done"},
	  "Done": {"Type": "Succeed"}}}`
	in, err := jsonvalue.ParseString(`{ "a" : 1 }`)
	require.NoError(t, err)
	x := interp.New(mustParse(t, def), benchInfo, in, interp.Options{})
	x.InputText = `{ "a" : 1 }`
	events, _, err := x.Start(t0)
	require.NoError(t, err)
	require.Equal(t, history.StatusSucceeded, x.Status)
	entered, exited := map[string]string{}, map[string]string{}
	for _, ev := range events {
		if d := ev.StateEnteredEventDetails; d != nil {
			entered[d.Name] = d.Input
		}
		if d := ev.StateExitedEventDetails; d != nil {
			exited[d.Name] = d.Output
		}
	}
	require.Equal(t, map[string]string{"C0": `{ "a" : 1 }`, "P": `{"a":1}`, "C": `{"b":1}`, "Done": `{"b":1}`}, entered)
	require.Equal(t, map[string]string{"C0": `{"a":1}`, "P": `{"b":1}`, "C": `{"b":1}`, "Done": `{"b":1}`}, exited)
	for _, name := range []string{"C", "Done"} {
		require.Same(t, unsafe.StringData(entered[name]), unsafe.StringData(exited[name]), name)
	}
}
