package teststate

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/integration/awssdk/awsmodel"
)

// One set of models serves both the aws-sdk integration and TestState:
// every operation with an output of every service the integration calls
// with an embedded model, named as its resources name it, has the output
// shape TestState checks a mocked result against, and the same one.
func TestModelsServeIntegrationAndTestState(t *testing.T) {
	t.Parallel()
	names := awsmodel.ServiceNames("")
	require.Contains(t, names, "sfn")
	require.Contains(t, names, "eventbridge")
	ms := &awsmodel.Models{}
	checked := 0
	for _, name := range names {
		m, err := ms.Get(name)
		require.NoError(t, err, name)
		for opName, op := range m.Operations {
			action := strings.ToLower(opName[:1]) + opName[1:]
			res := parseResource("arn:aws:states:::aws-sdk:" + name + ":" + action)
			shape, _, ok := res.outputShape()
			if op.Output == nil {
				require.False(t, ok, "%s:%s has no output", name, action)
				continue
			}
			require.True(t, ok, "TestState checks aws-sdk:%s:%s", name, action)
			emb, err := awsmodel.Embedded(sdkService(name))
			require.NoError(t, err)
			require.Same(t, emb.Operations[opName].Output.Shape, shape.Shape(), "aws-sdk:%s:%s", name, action)
			require.Equal(t, op.Output.ShapeName, emb.Operations[opName].Output.ShapeName)
			checked++
		}
	}
	require.Greater(t, checked, 1000)
}
