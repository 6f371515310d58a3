package tracing_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/observe/tracing"
)

func TestClientRefusesBadSettings(t *testing.T) {
	_, err := tracing.NewClient("localhost:4318")
	require.EqualError(t, err, `otel-endpoint "localhost:4318": not an http or https URL`)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
	_, err = tracing.NewClient("http://localhost:4318")
	require.EqualError(t, err, `OTLP protocol "http/json": supported are grpc and http/protobuf`)
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "grpc")
	exp, err := tracing.NewClient("http://localhost:4317")
	require.NoError(t, err, "the traces' own variable comes first")
	require.NotNil(t, exp)
}

func TestEnabled(t *testing.T) {
	require.True(t, tracing.Enabled(`{"enabled":true}`))
	require.False(t, tracing.Enabled(`{"enabled":false}`))
	require.False(t, tracing.Enabled(``))
	require.False(t, tracing.Enabled(`not json`))
}
