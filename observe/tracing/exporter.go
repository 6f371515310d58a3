package tracing

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
)

// The standard variables of the OTLP exporter that turn tracing on
// without a flag (the exporters read them, and _HEADERS,
// _CERTIFICATE, _TIMEOUT..., themselves).
var endpointVars = []string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"}

// EndpointFromEnv says whether the environment names an OTLP endpoint
// for traces.
func EndpointFromEnv() bool {
	for _, v := range endpointVars {
		if os.Getenv(v) != "" {
			return true
		}
	}
	return false
}

// protocol is the OTLP protocol the environment asks for: grpc or
// http/protobuf (the default).
func protocol() (string, error) {
	p := os.Getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if p == "" {
		p = os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	switch p {
	case "", "http/protobuf":
		return "http/protobuf", nil
	case "grpc":
		return "grpc", nil
	}
	return "", fmt.Errorf("OTLP protocol %q: supported are grpc and http/protobuf", p)
}

// NewClient makes the OTLP client of traces. endpoint, when not
// empty, is the collector's base URL as OTEL_EXPORTER_OTLP_ENDPOINT gives
// it (http://localhost:4318: traces go to its /v1/traces over HTTP, or to
// it over gRPC); else the standard OTEL_EXPORTER_OTLP_* variables
// configure it, and without them it sends to localhost as the exporters
// do.
func NewClient(endpoint string) (otlptrace.Client, error) {
	proto, err := protocol()
	if err != nil {
		return nil, err
	}
	if endpoint != "" {
		u, err := url.Parse(endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("otel-endpoint %q: not an http or https URL", endpoint)
		}
		if proto == "grpc" {
			return otlptracegrpc.NewClient(otlptracegrpc.WithEndpointURL(endpoint)), nil
		}
		u.Path = strings.TrimSuffix(u.Path, "/") + "/v1/traces"
		return otlptracehttp.NewClient(otlptracehttp.WithEndpointURL(u.String())), nil
	}
	if proto == "grpc" {
		return otlptracegrpc.NewClient(), nil
	}
	return otlptracehttp.NewClient(), nil
}

// Resource describes the server in its spans: service.name "stepwise"
// unless OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES say otherwise.
func Resource(ctx context.Context, version string) *resource.Resource {
	own := resource.NewSchemaless(attribute.String("service.name", "stepwise"), attribute.String("service.version", version))
	r, err := resource.Merge(resource.DefaultWithContext(ctx), own)
	if err != nil {
		r = own
	}
	if env, err := resource.Merge(r, resource.EnvironmentWithContext(ctx)); err == nil {
		r = env
	}
	return r
}

// RatioFromEnv reads OpenTelemetry's OTEL_TRACES_SAMPLER and
// OTEL_TRACES_SAMPLER_ARG as Config.Ratio: always_on (the default) and
// parentbased_always_on trace every execution traced (0);
// traceidratio and parentbased_traceidratio the share ARG (default 1) of
// them.
func RatioFromEnv() (float64, error) {
	switch name := os.Getenv("OTEL_TRACES_SAMPLER"); name {
	case "", "always_on", "parentbased_always_on":
		return 0, nil
	case "traceidratio", "parentbased_traceidratio":
		arg := os.Getenv("OTEL_TRACES_SAMPLER_ARG")
		if arg == "" {
			return 0, nil
		}
		r, err := strconv.ParseFloat(arg, 64)
		if err != nil || r <= 0 || r > 1 {
			return 0, fmt.Errorf("OTEL_TRACES_SAMPLER_ARG %q: a ratio in (0, 1] is expected", arg)
		}
		if r == 1 {
			return 0, nil
		}
		return r, nil
	default:
		return 0, fmt.Errorf("OTEL_TRACES_SAMPLER %q: supported are always_on, traceidratio and their parentbased_ forms", name)
	}
}
