//go:build otlpgrpc

package tracing

import (
	"context"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// GRPC says whether this build has OTLP/gRPC.
const GRPC = true

// grpcClient sends spans over OTLP/gRPC, with OpenTelemetry's exporter
// (and its settings of the OTEL_EXPORTER_OTLP_* variables).
type grpcClient struct{ c otlptrace.Client }

func newGRPCClient(endpoint string) (Client, error) {
	var c otlptrace.Client
	if endpoint != "" {
		c = otlptracegrpc.NewClient(otlptracegrpc.WithEndpointURL(endpoint))
	} else {
		c = otlptracegrpc.NewClient()
	}
	if err := c.Start(context.Background()); err != nil {
		return nil, err
	}
	return &grpcClient{c}, nil
}

func (g *grpcClient) Export(ctx context.Context, request []byte) error {
	var req coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(request, &req); err != nil {
		return err
	}
	return g.c.UploadTraces(ctx, req.ResourceSpans)
}

func (g *grpcClient) Stop(ctx context.Context) error { return g.c.Stop(ctx) }
