package tracing_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/internal/testkit/otlptest"
	"stepwise/internal/testkit/slowtest"
	"stepwise/internal/testkit/testwait"
	"stepwise/observe/tracing"
	"stepwise/server"
	"stepwise/server/servertest"
	"stepwise/service"
)

// The spans reach the OpenTelemetry Collector's own OTLP receiver, over
// HTTP (--otel-endpoint), gzipped or not, and, in a build with the
// otlpgrpc tag, over gRPC (OTEL_EXPORTER_OTLP_PROTOCOL).
func TestOTLPExport(t *testing.T) {
	slowtest.Require(t, "it builds and runs the OpenTelemetry Collector's OTLP receiver")
	rcv := otlptest.Start(t)
	protos := []string{"http/protobuf", "gzip"}
	if tracing.GRPC {
		protos = append(protos, "grpc")
	}
	for _, proto := range protos {
		t.Run(proto, func(t *testing.T) {
			if proto == "gzip" {
				t.Setenv("OTEL_EXPORTER_OTLP_COMPRESSION", "gzip")
			} else {
				t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", proto)
			}
			endpoint := rcv.HTTP
			if proto == "grpc" {
				endpoint = "http://" + rcv.GRPC
			}
			ctx := context.Background()
			s := servertest.New(t, servertest.WithOptions(server.WithTracing(server.Tracing{Endpoint: endpoint, All: true, Version: "test"})))
			svc, tr := s.Service(), s.Tracer()
			sm, err := svc.CreateStateMachine(ctx, &service.CreateStateMachineInput{Name: "otlp-" + proto[:4], RoleArn: roleArn,
				Definition: `{"StartAt":"A","States":{"A":{"Type":"Pass","Next":"B"},"B":{"Type":"Fail","Error":"Broken","Cause":"on purpose"}}}`})
			require.NoError(t, err)
			out, err := svc.StartExecution(ctx, &service.StartExecutionInput{StateMachineArn: sm.StateMachineArn})
			require.NoError(t, err)
			traceID := tracing.Parent(out.ExecutionArn, "").TraceID().String()
			var got []otlptest.Span
			testwait.Until(t, func() bool {
				require.NoError(t, tr.Flush(ctx))
				got = got[:0]
				for _, s := range rcv.Spans() {
					if s.TraceID == traceID {
						got = append(got, s)
					}
				}
				return len(got) == 3
			}, 20*time.Second, 50*time.Millisecond)
			require.NoError(t, s.Close())
			byName := map[string]otlptest.Span{}
			for _, s := range got {
				byName[s.Name] = s
			}
			root := byName["otlp-"+proto[:4]]
			require.Empty(t, root.ParentSpanID)
			require.Equal(t, "Error", root.Status)
			require.Equal(t, "FAILED", root.Attributes["stepwise.execution.status"])
			require.Equal(t, "Broken", root.Attributes["error.type"])
			require.Equal(t, "on purpose", root.Attributes["stepwise.cause"])
			require.Equal(t, "stepwise", root.Resource["service.name"])
			require.Equal(t, root.SpanID, byName["A"].ParentSpanID)
			require.Equal(t, root.SpanID, byName["B"].ParentSpanID)
			require.Equal(t, "Fail", byName["B"].Attributes["stepwise.state.type"])
		})
	}
}
