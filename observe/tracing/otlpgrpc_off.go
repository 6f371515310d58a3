//go:build !otlpgrpc

package tracing

import "errors"

// GRPC says whether this build has OTLP/gRPC.
const GRPC = false

// errNoGRPC is the error of OTLP/gRPC asked of a build without it.
var errNoGRPC = errors.New("OTLP protocol \"grpc\": this build of stepwise sends traces over OTLP/HTTP only " +
	"(OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf, the collector's port 4318); " +
	"build it with `go build -tags otlpgrpc ./cmd/stepwise` for OTLP/gRPC")

func newGRPCClient(string) (Client, error) { return nil, errNoGRPC }
