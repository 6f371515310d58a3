package maprun

import (
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/asl"
)

// A map run's children run on <machine ARN>/<label>[/<label>...]: the
// ARN splits back into the machine's and the labels, and each label
// finds its distributed Map's ItemProcessor, inside a Parallel's branch
// or another ItemProcessor too.
func TestChildMachineByLabel(t *testing.T) {
	const arn = "arn:aws:states:us-east-1:123456789012:stateMachine:fan"
	base, label := SplitLabel(arn + "/Outer/Inner")
	require.Equal(t, arn, base)
	require.Equal(t, "Outer/Inner", label)
	base, label = SplitLabel(arn)
	require.Equal(t, arn, base)
	require.Empty(t, label)

	m, diags := asl.Parse([]byte(`{"StartAt": "P", "States": {"P": {"Type": "Parallel", "End": true, "Branches": [
		{"StartAt": "Outer", "States": {"Outer": {"Type": "Map", "End": true,
			"ItemProcessor": {"ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"}, "StartAt": "Inner",
				"States": {"Inner": {"Type": "Map", "Label": "In", "End": true,
					"ItemProcessor": {"ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"}, "StartAt": "W",
						"States": {"W": {"Type": "Pass", "End": true}}}}}}}}}]}}}`))
	require.NotNil(t, m, "%v", diags)
	outer := Processor(m, "Outer")
	require.NotNil(t, outer)
	require.Contains(t, outer.States, "Inner")
	inner := Processor(outer, "In")
	require.NotNil(t, inner)
	require.Contains(t, inner.States, "W")
	require.Nil(t, Processor(m, "Inner"), "a Map with a Label is found by it, not by its name")
	require.Nil(t, Processor(m, "Nope"))
}
