package tracing

// The spans are written in OTLP's protobuf by hand
// (opentelemetry/proto/collector/trace/v1 ExportTraceServiceRequest and
// the messages it holds): the few messages of a span need no protobuf
// library, and a span is encoded once, as it ends.

// attr is an attribute: a string, or an integer when isInt.
type attr struct {
	key   string
	str   string
	num   int64
	isInt bool
}

func strAttr(k, v string) attr { return attr{key: k, str: v} }
func intAttr(k string, v int) attr {
	return attr{key: k, num: int64(v), isInt: true}
}

// spanEvent is an event of a span: a history event's type and time.
type spanEvent struct {
	name string
	at   uint64
}

// spanLink links a span to another trace's span.
type spanLink struct {
	traceID TraceID
	spanID  SpanID
	attrs   []attr
}

// spanKind is OTLP's Span.SpanKind.
type spanKind uint8

const (
	kindUnspecified spanKind = 0
	kindInternal    spanKind = 1
	kindClient      spanKind = 3
)

// span is an ended span.
type span struct {
	traceID    TraceID
	spanID     SpanID
	parent     SpanID // zero: a root span
	name       string
	kind       spanKind
	start, end uint64 // Unix nanoseconds
	attrs      []attr
	events     []spanEvent
	links      []spanLink
	// failed is the status ERROR, with message; else it is UNSET.
	failed  bool
	message string
}

// flagsSampled is W3C's sampled flag, in Span.flags and Link.flags.
const flagsSampled = 1

// Protobuf's wire types.
const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireFixed32 = 5
)

func appendVarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

func sizeVarint(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// appendTag appends a field's key (every field number here is below 16:
// one byte, but for Span.flags, 16: two).
func appendTag(b []byte, field int, wire int) []byte {
	return appendVarint(b, uint64(field)<<3|uint64(wire))
}

func sizeTag(field int) int { return sizeVarint(uint64(field) << 3) }

// sizeLen is the size of a length-delimited field of n bytes.
func sizeLen(field, n int) int { return sizeTag(field) + sizeVarint(uint64(n)) + n }

func appendLen(b []byte, field, n int) []byte {
	return appendVarint(appendTag(b, field, wireBytes), uint64(n))
}

func appendString(b []byte, field int, s string) []byte {
	return append(appendLen(b, field, len(s)), s...)
}

func appendBytes(b []byte, field int, p []byte) []byte {
	return append(appendLen(b, field, len(p)), p...)
}

func appendFixed64(b []byte, field int, v uint64) []byte {
	b = appendTag(b, field, wireFixed64)
	return append(b, byte(v), byte(v>>8), byte(v>>16), byte(v>>24), byte(v>>32), byte(v>>40), byte(v>>48), byte(v>>56))
}

func appendFixed32(b []byte, field int, v uint32) []byte {
	b = appendTag(b, field, wireFixed32)
	return append(b, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
}

func appendUint(b []byte, field int, v uint64) []byte {
	return appendVarint(appendTag(b, field, wireVarint), v)
}

// anyValueSize is the size of an attribute's AnyValue: string_value = 1,
// int_value = 3.
func anyValueSize(a *attr) int {
	if a.isInt {
		return sizeTag(3) + sizeVarint(uint64(a.num))
	}
	return sizeLen(1, len(a.str))
}

// kvSize is the size of an attribute's KeyValue: key = 1, value = 2.
func kvSize(a *attr) int { return sizeLen(1, len(a.key)) + sizeLen(2, anyValueSize(a)) }

func appendKV(b []byte, field int, a *attr) []byte {
	b = appendLen(b, field, kvSize(a))
	b = appendString(b, 1, a.key)
	b = appendLen(b, 2, anyValueSize(a))
	if a.isInt {
		return appendUint(b, 3, uint64(a.num))
	}
	return appendString(b, 1, a.str)
}

func attrsSize(field int, as []attr) int {
	n := 0
	for i := range as {
		n += sizeLen(field, kvSize(&as[i]))
	}
	return n
}

func appendAttrs(b []byte, field int, as []attr) []byte {
	for i := range as {
		b = appendKV(b, field, &as[i])
	}
	return b
}

// Span's fields.
const (
	spanTraceID      = 1
	spanSpanID       = 2
	spanParentSpanID = 4
	spanName         = 5
	spanKindField    = 6
	spanStart        = 7
	spanEnd          = 8
	spanAttributes   = 9
	spanEvents       = 11
	spanLinks        = 13
	spanStatus       = 15
	spanFlags        = 16
)

// eventSize is a Span.Event's: time_unix_nano = 1, name = 2.
func eventSize(e *spanEvent) int { return 1 + 8 + sizeLen(2, len(e.name)) }

// linkSize is a Span.Link's: trace_id = 1, span_id = 2, attributes = 4,
// flags = 6.
func linkSize(l *spanLink) int { return sizeLen(1, 16) + sizeLen(2, 8) + attrsSize(4, l.attrs) + 1 + 4 }

// statusSize is a Status's: message = 2, code = 3 (ERROR: 2).
func statusSize(s *span) int { return sizeLen(2, len(s.message)) + 1 + 1 }

func spanSize(s *span) int {
	n := sizeLen(spanTraceID, 16) + sizeLen(spanSpanID, 8) + sizeLen(spanName, len(s.name)) + 2 + 4 +
		1 + sizeVarint(uint64(s.kind)) + 1 + 8 + 1 + 8 + attrsSize(spanAttributes, s.attrs)
	if s.parent.IsValid() {
		n += sizeLen(spanParentSpanID, 8)
	}
	for i := range s.events {
		n += sizeLen(spanEvents, eventSize(&s.events[i]))
	}
	for i := range s.links {
		n += sizeLen(spanLinks, linkSize(&s.links[i]))
	}
	if s.failed {
		n += sizeLen(spanStatus, statusSize(s))
	}
	return n
}

// appendSpan appends s as ScopeSpans.spans (field 2): a whole field.
func appendSpan(b []byte, s *span) []byte {
	b = appendLen(b, 2, spanSize(s))
	b = appendBytes(b, spanTraceID, s.traceID[:])
	b = appendBytes(b, spanSpanID, s.spanID[:])
	if s.parent.IsValid() {
		b = appendBytes(b, spanParentSpanID, s.parent[:])
	}
	b = appendString(b, spanName, s.name)
	b = appendUint(b, spanKindField, uint64(s.kind))
	b = appendFixed64(b, spanStart, s.start)
	b = appendFixed64(b, spanEnd, s.end)
	b = appendAttrs(b, spanAttributes, s.attrs)
	for i := range s.events {
		e := &s.events[i]
		b = appendLen(b, spanEvents, eventSize(e))
		b = appendFixed64(b, 1, e.at)
		b = appendString(b, 2, e.name)
	}
	for i := range s.links {
		l := &s.links[i]
		b = appendLen(b, spanLinks, linkSize(l))
		b = appendBytes(b, 1, l.traceID[:])
		b = appendBytes(b, 2, l.spanID[:])
		b = appendAttrs(b, 4, l.attrs)
		b = appendFixed32(b, 6, flagsSampled)
	}
	if s.failed {
		b = appendLen(b, spanStatus, statusSize(s))
		b = appendString(b, 2, s.message)
		b = appendUint(b, 3, 2)
	}
	return appendFixed32(b, spanFlags, flagsSampled)
}

// requestHead is what comes before the spans of a request: the
// ExportTraceServiceRequest's resource_spans (1) holding the
// resource (1) and the scope_spans (2) holding the scope (1), whose
// spans (2) follow, spansLen bytes of them (appendSpan's).
func requestHead(b []byte, resource []attr, scope string, spansLen int) []byte {
	resSize := attrsSize(1, resource)
	scopeSize := sizeLen(1, len(scope))
	ssSize := sizeLen(1, scopeSize) + spansLen
	rsSize := sizeLen(1, resSize) + sizeLen(2, ssSize)
	b = appendLen(b, 1, rsSize)
	b = appendLen(b, 1, resSize)
	b = appendAttrs(b, 1, resource)
	b = appendLen(b, 2, ssSize)
	b = appendLen(b, 1, scopeSize)
	return appendString(b, 1, scope)
}
