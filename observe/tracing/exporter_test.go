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
	if tracing.GRPC {
		require.NoError(t, err, "the traces' own variable comes first")
		require.NotNil(t, exp)
	} else {
		require.ErrorContains(t, err, `OTLP protocol "grpc": this build of stepwise sends traces over OTLP/HTTP only`, "the traces' own variable comes first")
		require.ErrorContains(t, err, "go build -tags otlpgrpc ./cmd/stepwise")
	}
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/protobuf")
	t.Setenv("OTEL_EXPORTER_OTLP_COMPRESSION", "zstd")
	_, err = tracing.NewClient("")
	require.EqualError(t, err, `OTEL_EXPORTER_OTLP_COMPRESSION "zstd": supported are gzip and none`)
	t.Setenv("OTEL_EXPORTER_OTLP_COMPRESSION", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "soon")
	_, err = tracing.NewClient("")
	require.EqualError(t, err, `OTEL_EXPORTER_OTLP_TIMEOUT "soon": a number of milliseconds above 0 is expected`)
	t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "novalue")
	_, err = tracing.NewClient("")
	require.EqualError(t, err, `OTEL_EXPORTER_OTLP_HEADERS: "novalue" is not key=value (percent-encoded)`)
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "")
	t.Setenv("OTEL_EXPORTER_OTLP_CERTIFICATE", t.TempDir())
	_, err = tracing.NewClient("")
	require.ErrorContains(t, err, "OTEL_EXPORTER_OTLP_CERTIFICATE: ")
	t.Setenv("OTEL_EXPORTER_OTLP_CERTIFICATE", "")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4318")
	_, err = tracing.NewClient("")
	require.EqualError(t, err, `OTEL_EXPORTER_OTLP_ENDPOINT "collector:4318": not an http or https URL`)
}

// The spans' URL: the flag's and OTEL_EXPORTER_OTLP_ENDPOINT's base URL
// with /v1/traces, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as it is.
func TestClientURL(t *testing.T) {
	c, err := tracing.NewHTTPClient("")
	require.NoError(t, err)
	require.Equal(t, "http://localhost:4318/v1/traces", c.URL())
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "https://collector:4318/otlp/")
	c, err = tracing.NewHTTPClient("")
	require.NoError(t, err)
	require.Equal(t, "https://collector:4318/otlp/v1/traces", c.URL())
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "https://traces:4318/in")
	c, err = tracing.NewHTTPClient("")
	require.NoError(t, err)
	require.Equal(t, "https://traces:4318/in", c.URL())
	c, err = tracing.NewHTTPClient("http://flag:4318")
	require.NoError(t, err)
	require.Equal(t, "http://flag:4318/v1/traces", c.URL(), "the flag comes first")
}

func TestEnabled(t *testing.T) {
	require.True(t, tracing.Enabled(`{"enabled":true}`))
	require.False(t, tracing.Enabled(`{"enabled":false}`))
	require.False(t, tracing.Enabled(``))
	require.False(t, tracing.Enabled(`not json`))
}
