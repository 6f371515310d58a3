package tracing

import (
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
)

// encodeRequest is a request of the spans, as the tracer sends it.
func encodeRequest(res []attr, spans ...*span) []byte {
	var body []byte
	for _, s := range spans {
		body = appendSpan(body, s)
	}
	return append(requestHead(nil, res, scopeName, len(body)), body...)
}

func kvPB(a attr) *commonpb.KeyValue {
	if a.isInt {
		return &commonpb.KeyValue{Key: a.key, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: a.num}}}
	}
	return &commonpb.KeyValue{Key: a.key, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: a.str}}}
}

func kvsPB(as []attr) []*commonpb.KeyValue {
	var out []*commonpb.KeyValue
	for _, a := range as {
		out = append(out, kvPB(a))
	}
	return out
}

// spanPB is the message s is meant to be.
func spanPB(s *span) *tracepb.Span {
	p := &tracepb.Span{
		TraceId: s.traceID[:], SpanId: s.spanID[:], Flags: flagsSampled, Name: s.name, Kind: tracepb.Span_SpanKind(s.kind),
		StartTimeUnixNano: s.start, EndTimeUnixNano: s.end, Attributes: kvsPB(s.attrs),
	}
	if s.parent.IsValid() {
		p.ParentSpanId = s.parent[:]
	}
	for _, e := range s.events {
		p.Events = append(p.Events, &tracepb.Span_Event{Name: e.name, TimeUnixNano: e.at})
	}
	for _, l := range s.links {
		p.Links = append(p.Links, &tracepb.Span_Link{TraceId: l.traceID[:], SpanId: l.spanID[:], Attributes: kvsPB(l.attrs), Flags: flagsSampled})
	}
	if s.failed {
		p.Status = &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: s.message}
	}
	return p
}

func requestPB(res []attr, spans ...*span) *coltracepb.ExportTraceServiceRequest {
	ss := &tracepb.ScopeSpans{Scope: &commonpb.InstrumentationScope{Name: scopeName}}
	for _, s := range spans {
		ss.Spans = append(ss.Spans, spanPB(s))
	}
	return &coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{
		Resource: &resourcepb.Resource{Attributes: kvsPB(res)}, ScopeSpans: []*tracepb.ScopeSpans{ss},
	}}}
}

// What the encoder writes is, read by OTLP's own protobuf definitions,
// every field of every span: ids, parent, name, kind, times,
// attributes (strings and integers, negative ones too), events, links
// and their attributes and flags, the status, the resource and the
// scope.
func TestEncodeDecodesWithOTLPDefinitions(t *testing.T) {
	t.Parallel()
	res := []attr{strAttr("service.name", "stepwise"), strAttr("service.version", "1.2.3")}
	full := &span{
		traceID: TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, spanID: SpanID{0xff, 2, 3, 4, 5, 6, 7, 8},
		parent: SpanID{9, 9, 9, 9, 9, 9, 9, 9}, name: "lambda:invoke", kind: kindClient,
		start: 1_700_000_000_000_000_001, end: 1<<64 - 1,
		attrs: []attr{strAttr("stepwise.state.name", "Work"), intAttr("stepwise.task.attempt", 3), intAttr("negative", -7),
			strAttr("empty", ""), strAttr("long", string(make([]byte, 300)))},
		events: []spanEvent{{name: "TaskStarted", at: 42}, {name: "TaskSubmitted", at: 1 << 62}},
		links: []spanLink{{traceID: TraceID{0xaa, 15: 1}, spanID: SpanID{0xbb, 7: 1}, attrs: []attr{strAttr("stepwise.link", "map_run")}},
			{traceID: TraceID{1}, spanID: SpanID{2}}},
		failed: true, message: "States.TaskFailed",
	}
	root := &span{traceID: full.traceID, spanID: SpanID{1}, name: "machine", kind: kindInternal, start: 1, end: 2}
	unnamed := &span{traceID: full.traceID, spanID: SpanID{3}, parent: SpanID{1}, failed: true}

	var got coltracepb.ExportTraceServiceRequest
	require.NoError(t, proto.Unmarshal(encodeRequest(res, full, root, unnamed), &got))
	want := requestPB(res, full, root, unnamed)
	require.True(t, proto.Equal(want, &got), "want:\n%s\ngot:\n%s", prototext.Format(want), prototext.Format(&got))

	// Field by field, for what a mistake in the expected message would
	// hide.
	rs := got.ResourceSpans[0]
	require.Equal(t, "service.name", rs.Resource.Attributes[0].Key)
	require.Equal(t, "1.2.3", rs.Resource.Attributes[1].Value.GetStringValue())
	require.Equal(t, scopeName, rs.ScopeSpans[0].Scope.Name)
	s := rs.ScopeSpans[0].Spans[0]
	require.Equal(t, full.traceID[:], s.TraceId)
	require.Equal(t, full.spanID[:], s.SpanId)
	require.Equal(t, full.parent[:], s.ParentSpanId)
	require.Equal(t, "lambda:invoke", s.Name)
	require.Equal(t, tracepb.Span_SPAN_KIND_CLIENT, s.Kind)
	require.Equal(t, uint64(1_700_000_000_000_000_001), s.StartTimeUnixNano)
	require.Equal(t, uint64(1<<64-1), s.EndTimeUnixNano)
	require.Equal(t, uint32(1), s.Flags)
	require.Equal(t, int64(3), s.Attributes[1].Value.GetIntValue())
	require.Equal(t, int64(-7), s.Attributes[2].Value.GetIntValue())
	require.IsType(t, &commonpb.AnyValue_StringValue{}, s.Attributes[3].Value.Value, "an empty string is a string")
	require.Len(t, s.Attributes[4].Value.GetStringValue(), 300)
	require.Equal(t, "TaskSubmitted", s.Events[1].Name)
	require.Equal(t, uint64(1<<62), s.Events[1].TimeUnixNano)
	require.Equal(t, full.links[0].spanID[:], s.Links[0].SpanId)
	require.Equal(t, "map_run", s.Links[0].Attributes[0].Value.GetStringValue())
	require.Equal(t, uint32(1), s.Links[0].Flags)
	require.Equal(t, tracepb.Status_STATUS_CODE_ERROR, s.Status.Code)
	require.Equal(t, "States.TaskFailed", s.Status.Message)
	r := rs.ScopeSpans[0].Spans[1]
	require.Empty(t, r.ParentSpanId)
	require.Nil(t, r.Status, "a span that did not fail has its status unset")
	require.Equal(t, tracepb.Span_SPAN_KIND_INTERNAL, r.Kind)
	require.Equal(t, tracepb.Status_STATUS_CODE_ERROR, rs.ScopeSpans[0].Spans[2].Status.Code)
}

func utf8Valid(ss ...string) bool {
	for _, s := range ss {
		if !utf8.ValidString(s) {
			return false
		}
	}
	return true
}

// The encoder's request decodes to what it encodes, whatever the strings
// and numbers.
func FuzzEncode(f *testing.F) {
	f.Add("name", "key", "value", int64(1), uint64(2), uint64(3), "event", true)
	f.Add("", "", "", int64(-1), uint64(0), uint64(1<<63), "", false)
	f.Fuzz(func(t *testing.T, name, key, value string, num int64, start, end uint64, event string, failed bool) {
		s := &span{traceID: TraceID{1}, spanID: SpanID{2}, parent: SpanID{byte(num)}, name: name, kind: kindClient, start: start, end: end,
			attrs: []attr{strAttr(key, value), intAttr(key, int(num))}, events: []spanEvent{{name: event, at: start}},
			links: []spanLink{{traceID: TraceID{3}, spanID: SpanID{4}, attrs: []attr{strAttr(value, key)}}}, failed: failed, message: value}
		res := []attr{strAttr(key, value)}
		var got coltracepb.ExportTraceServiceRequest
		err := proto.Unmarshal(encodeRequest(res, s, s), &got)
		if !utf8Valid(name, key, value, event) {
			// Protobuf's strings are UTF-8: a decoder may refuse others.
			return
		}
		require.NoError(t, err)
		require.True(t, proto.Equal(requestPB(res, s, s), &got))
	})
}
