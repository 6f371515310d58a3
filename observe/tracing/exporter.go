package tracing

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
)

// Client sends the tracer's spans to a collector.
type Client interface {
	// Export sends an OTLP ExportTraceServiceRequest, protobuf-encoded;
	// it keeps nothing of request once it returns.
	Export(ctx context.Context, request []byte) error
	// Stop lets the client go once the last export is made.
	Stop(ctx context.Context) error
}

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
// do. gRPC is there only in a build with the otlpgrpc tag.
func NewClient(endpoint string) (Client, error) {
	proto, err := protocol()
	if err != nil {
		return nil, err
	}
	if endpoint != "" {
		u, err := url.Parse(endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("otel-endpoint %q: not an http or https URL", endpoint)
		}
	}
	if proto == "grpc" {
		return newGRPCClient(endpoint)
	}
	return NewHTTPClient(endpoint)
}

// Attribute is a resource's attribute.
type Attribute struct{ Key, Value string }

// Resource describes the server in its spans: service.name "stepwise"
// unless OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES say otherwise,
// service.version, and the telemetry.sdk.* attributes.
func Resource(_ context.Context, version string) []Attribute {
	attrs := []Attribute{
		{"service.name", "stepwise"},
		{"telemetry.sdk.language", "go"},
		{"telemetry.sdk.name", "stepwise"},
	}
	if version != "" {
		attrs = append(attrs, Attribute{"service.version", version}, Attribute{"telemetry.sdk.version", version})
	}
	set := func(k, v string) {
		for i := range attrs {
			if attrs[i].Key == k {
				attrs[i].Value = v
				return
			}
		}
		attrs = append(attrs, Attribute{k, v})
	}
	// OTEL_RESOURCE_ATTRIBUTES: key=value,... percent-encoded; a pair
	// that is not one is skipped, as the SDKs do.
	for _, kv := range strings.Split(os.Getenv("OTEL_RESOURCE_ATTRIBUTES"), ",") {
		k, v, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			continue
		}
		if dv, err := url.PathUnescape(strings.TrimSpace(v)); err == nil {
			set(k, dv)
		}
	}
	if name := strings.TrimSpace(os.Getenv("OTEL_SERVICE_NAME")); name != "" {
		set("service.name", name)
	}
	return attrs
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
