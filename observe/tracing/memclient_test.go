package tracing_test

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"stepwise/observe/tracing"
)

// memClient is an OTLP client that keeps what it is sent, decoded with
// OTLP's own protobuf definitions, read back as the SDK's span stubs.
type memClient struct {
	mu       sync.Mutex
	spans    []tracetest.SpanStub
	requests []*coltracepb.ExportTraceServiceRequest
}

func newMemClient() *memClient { return &memClient{} }

func (m *memClient) Stop(context.Context) error { return nil }

func (m *memClient) Export(_ context.Context, request []byte) error {
	var req coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(request, &req); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.requests = append(m.requests, &req)
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				m.spans = append(m.spans, stub(s))
			}
		}
	}
	return nil
}

// GetSpans are the spans received so far.
func (m *memClient) GetSpans() []tracetest.SpanStub {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]tracetest.SpanStub(nil), m.spans...)
}

// sc is a span stub's context as the tracer's.
func sc(s tracetest.SpanStub) tracing.SpanContext {
	return tracing.NewSpanContext(tracing.TraceID(s.SpanContext.TraceID()), tracing.SpanID(s.SpanContext.SpanID()))
}

func spanContext(tid, sid []byte) trace.SpanContext {
	var cfg trace.SpanContextConfig
	copy(cfg.TraceID[:], tid)
	copy(cfg.SpanID[:], sid)
	cfg.TraceFlags = trace.FlagsSampled
	return trace.NewSpanContext(cfg)
}

func stub(s *tracepb.Span) tracetest.SpanStub {
	st := tracetest.SpanStub{
		Name:        s.Name,
		SpanContext: spanContext(s.TraceId, s.SpanId),
		StartTime:   time.Unix(0, int64(s.StartTimeUnixNano)),
		EndTime:     time.Unix(0, int64(s.EndTimeUnixNano)),
		SpanKind:    trace.SpanKind(s.Kind),
		Status:      sdktrace.Status{Code: codes.Unset},
	}
	if len(s.ParentSpanId) > 0 {
		st.Parent = spanContext(s.TraceId, s.ParentSpanId)
	}
	if s.Status != nil && s.Status.Code == tracepb.Status_STATUS_CODE_ERROR {
		st.Status = sdktrace.Status{Code: codes.Error, Description: s.Status.Message}
	}
	for _, kv := range s.Attributes {
		st.Attributes = append(st.Attributes, kvOf(kv))
	}
	for _, l := range s.Links {
		st.Links = append(st.Links, sdktrace.Link{SpanContext: spanContext(l.TraceId, l.SpanId)})
	}
	for _, e := range s.Events {
		st.Events = append(st.Events, sdktrace.Event{Name: e.Name, Time: time.Unix(0, int64(e.TimeUnixNano))})
	}
	return st
}

func kvOf(kv *commonpb.KeyValue) attribute.KeyValue {
	switch v := kv.Value.Value.(type) {
	case *commonpb.AnyValue_IntValue:
		return attribute.Int64(kv.Key, v.IntValue)
	case *commonpb.AnyValue_BoolValue:
		return attribute.Bool(kv.Key, v.BoolValue)
	case *commonpb.AnyValue_StringValue:
		return attribute.String(kv.Key, v.StringValue)
	}
	return attribute.String(kv.Key, kv.Value.String())
}
