package awsmodel

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// The archive holds exactly the services listed, each a model that
// parses: whole ones with what calls need, outputs-only ones with their
// operations' outputs and nothing else.
func TestEmbeddedSet(t *testing.T) {
	t.Parallel()
	files, err := index()
	require.NoError(t, err)
	var names []string
	for name, f := range files {
		names = append(names, name)
		data, err := readEntry(f)
		require.NoError(t, err)
		m, err := Parse(data)
		require.NoError(t, err, name)
		inputs := 0
		for opName, op := range m.Operations {
			if op.Input != nil {
				inputs++
			}
			if slices.Contains(checked, name) {
				require.NotNil(t, op.Output, "%s %s: an outputs-only model keeps the operations with an output", name, opName)
				require.Empty(t, op.HTTP.Method, name)
			}
		}
		if slices.Contains(called, name) {
			require.NotZero(t, inputs, name)
			require.NotEmpty(t, m.Protocol(), name)
		} else {
			require.Zero(t, inputs, name)
		}
	}
	slices.Sort(names)
	require.Equal(t, Services(), names, "the archive's services are the listed ones")
	require.Len(t, names, len(Called())+len(OutputsOnly()))
}

// The integration's Models serve the whole models only; Embedded serves
// every service, and the same model for a whole one.
func TestEmbeddedAndModels(t *testing.T) {
	t.Parallel()
	ms := &Models{}
	for _, svc := range Called() {
		whole, err := ms.Get(svc)
		require.NoError(t, err)
		shared, err := Embedded(svc)
		require.NoError(t, err)
		require.NotSame(t, whole, shared, "the integration's models are its own")
		require.Equal(t, len(whole.Operations), len(shared.Operations), svc)
		require.Equal(t, len(whole.Shapes), len(shared.Shapes), svc)
	}
	for _, svc := range OutputsOnly() {
		_, err := ms.Get(svc)
		require.ErrorIs(t, err, ErrUnknownService, "%s: no calls with an outputs-only model", svc)
		m, err := Embedded(svc)
		require.NoError(t, err)
		require.NotEmpty(t, m.Operations, svc)
	}
	names := ServiceNames("")
	require.Contains(t, names, "sfn")
	require.Contains(t, names, "eventbridge")
	require.Contains(t, names, "sagemaker")
	for _, name := range []string{"ec2", "rekognition", "config", "logs", "cloudwatchlogs", "cognitoidentityprovider",
		"elasticloadbalancingv2", "applicationautoscaling", "redshiftdata", "xray", "sesv2"} {
		require.Contains(t, names, name)
	}
	require.NotContains(t, names, "lightsail")

	_, err := Embedded("nosuchservice")
	require.ErrorIs(t, err, ErrUnknownService)
	_, loaded := embeddedShapes.Load("nosuchservice")
	require.False(t, loaded, "unknown names are not kept")
	m1, err := Embedded("lambda")
	require.NoError(t, err)
	m2, err := Embedded("lambda")
	require.NoError(t, err)
	require.Same(t, m1, m2, "parsed once")
	require.Equal(t, 10240.0, *m1.Shapes["MemorySize"].Max, "the generator's override")
}

// A model encodes to what it was decoded from, members in their order:
// the generator writes models so.
func TestModelRoundTrip(t *testing.T) {
	t.Parallel()
	src := `{"metadata":{"endpointPrefix":"x","protocol":"rest-xml","serviceId":"X"},` +
		`"operations":{"Put":{"name":"Put","http":{"method":"PUT","requestUri":"/{B}"},"input":{"shape":"In"},"output":{"shape":"Out"},"errors":[{"shape":"Oops"}]}},` +
		`"shapes":{"B":{"type":"string","min":3,"max":63},"E":{"type":"string","enum":["A","B"]},` +
		`"In":{"type":"structure","required":["b"],"members":{"z":{"shape":"E","location":"header","locationName":"x-z"},"b":{"shape":"B","location":"uri","locationName":"B"},"a":{"shape":"L","flattened":true}}},` +
		`"L":{"type":"list","member":{"shape":"E"}},"M":{"type":"map","key":{"shape":"E"},"value":{"shape":"B"}},` +
		`"Oops":{"type":"structure","members":{},"exception":true,"error":{"code":"Oops"}},` +
		`"Out":{"type":"structure","members":{"m":{"shape":"M"},"d":{"shape":"Doc"}}},"Doc":{"type":"structure","members":{},"document":true}}}`
	m, err := Parse([]byte(src))
	require.NoError(t, err)
	data, err := json.Marshal(m)
	require.NoError(t, err)
	back, err := Parse(data)
	require.NoError(t, err)
	require.Equal(t, m, back)
	var names []string
	for _, mem := range back.Shapes["In"].Members {
		names = append(names, mem.Name)
	}
	require.Equal(t, []string{"z", "b", "a"}, names, "members keep the model's order")
	require.NotContains(t, string(data), `"payload"`, "empty fields are left out")
	require.Equal(t, []string{"A", "B"}, back.Shapes["E"].Enum)
	require.Equal(t, 63.0, *back.Shapes["B"].Max)
}
