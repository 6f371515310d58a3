package interp_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/failure"
	"stepwise/history"
	"stepwise/interp"
)

// The ...Path fields of Wait and Map that do not resolve, or resolve to a
// value the field cannot take, fail the state with States.Runtime in AWS's
// words.
func TestPathFieldFailures(t *testing.T) {
	t.Parallel()
	const inner = `"ItemProcessor": {"StartAt": "P", "States": {"P": {"Type": "Pass", "End": true}}}`
	const distributed = `"ItemProcessor": {"ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"}, "StartAt": "P", "States": {"P": {"Type": "Pass", "End": true}}}`
	for _, tt := range []struct {
		name, state, cause string
	}{
		{"SecondsPathMissing", `"Type": "Wait", "SecondsPath": "$.nope"`,
			"The SecondsPath parameter does not reference an input value: $.nope"},
		{"SecondsPathNegative", `"Type": "Wait", "SecondsPath": "$.neg"`,
			"The SecondsPath parameter references a negative value: $.neg == -1"},
		{"TimestampPathMissing", `"Type": "Wait", "TimestampPath": "$.nope"`,
			"Invalid path '$.nope' : No results for path: $['nope']"},
		{"MaxConcurrencyPathNegative", `"Type": "Map", "ItemsPath": "$.arr", "MaxConcurrencyPath": "$.neg", ` + inner,
			"Expected non-negative integer for MaxConcurrency, got '-1' instead."},
		{"MaxConcurrencyPathNotInteger", `"Type": "Map", "ItemsPath": "$.arr", "MaxConcurrencyPath": "$.s", ` + inner,
			`The MaxConcurrencyPath field refers to value "x" which is not a valid integer: $.s`},
		{"ToleratedFailurePercentagePathNotNumber", `"Type": "Map", "ItemsPath": "$.arr", "ToleratedFailurePercentagePath": "$.obj", ` + distributed,
			`The ToleratedFailurePercentagePath field refers to value "{}" which is not a valid float: $.obj`},
		{"ToleratedFailurePercentagePathOutOfRange", `"Type": "Map", "ItemsPath": "$.arr", "ToleratedFailurePercentagePath": "$.big", ` + distributed,
			"ToleratedFailurePercentage must be between 0 and 100."},
		{"ToleratedFailureCountPathNegative", `"Type": "Map", "ItemsPath": "$.arr", "ToleratedFailureCountPath": "$.neg", ` + distributed,
			"ToleratedFailureCount cannot be negative."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, `{"StartAt": "S", "States": {"S": {`+tt.state+`, "End": true}}}`,
				`{"neg": -1, "s": "x", "obj": {}, "big": 100.5, "arr": [1]}`, interp.Options{})
			require.Equal(t, history.StatusFailed, b.x.Status)
			require.Equal(t, failure.Runtime, b.x.Failure.Name)
			require.Equal(t, "An error occurred while executing the state 'S' (entered at the event id #2). "+tt.cause, b.x.Failure.Cause)
		})
	}
}

// A tolerated failure percentage read through a path may have a fraction.
func TestToleratedFailurePercentagePathTakesAFraction(t *testing.T) {
	t.Parallel()
	b := setup(t, `{"StartAt": "S", "States": {"S": {"Type": "Map", "ItemsPath": "$.arr", "ToleratedFailurePercentagePath": "$.p",
		"ItemProcessor": {"ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"}, "StartAt": "P", "States": {"P": {"Type": "Pass", "End": true}}}, "End": true}}}`,
		`{"p": 12.5, "arr": [1]}`, interp.Options{})
	require.NotEqual(t, history.StatusFailed, b.x.Status, "%v", b.x.Failure)
}
