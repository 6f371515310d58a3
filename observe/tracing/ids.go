package tracing

import (
	"encoding/binary"
	"encoding/hex"
	"strings"
)

// TraceID is a trace's 16 bytes.
type TraceID [16]byte

// SpanID is a span's 8 bytes.
type SpanID [8]byte

// IsValid says whether the id is not all zeros.
func (t TraceID) IsValid() bool { return t != TraceID{} }

// String is the id in lower-case hex.
func (t TraceID) String() string { return hex.EncodeToString(t[:]) }

// IsValid says whether the id is not all zeros.
func (s SpanID) IsValid() bool { return s != SpanID{} }

// String is the id in lower-case hex.
func (s SpanID) String() string { return hex.EncodeToString(s[:]) }

// SpanContext is a span's place in a trace: its trace and its id
// (invalid for a trace's context without a span). Every span of the
// tracer is sampled.
type SpanContext struct {
	traceID TraceID
	spanID  SpanID
	remote  bool
}

// NewSpanContext is the context of span sid in trace tid.
func NewSpanContext(tid TraceID, sid SpanID) SpanContext {
	return SpanContext{traceID: tid, spanID: sid}
}

// TraceID is the context's trace.
func (sc SpanContext) TraceID() TraceID { return sc.traceID }

// SpanID is the context's span (invalid when none).
func (sc SpanContext) SpanID() SpanID { return sc.spanID }

// IsRemote says whether the context was read from a trace header.
func (sc SpanContext) IsRemote() bool { return sc.remote }

// IsValid says whether both its trace and span ids are.
func (sc SpanContext) IsValid() bool { return sc.traceID.IsValid() && sc.spanID.IsValid() }

// hexID decodes len(dst) bytes of lower-case hex, refusing all zeros.
func hexID(dst []byte, s string) bool {
	if len(s) != 2*len(dst) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	if _, err := hex.Decode(dst, []byte(s)); err != nil {
		return false
	}
	for _, c := range dst {
		if c != 0 {
			return true
		}
	}
	return false
}

// The ids of an execution's spans are derived from what its history says,
// never drawn at random: an execution resumed after a restart, or taken
// over by another node, continues the trace it began, with nothing kept
// but the history.

// The ids are FNV-1a hashes of the execution's ARN and what names the
// span, finished by SplitMix64's mixer: cheap (a traced step costs a few
// of them) and the same in every process.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func fnv(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime
	}
	return h
}

func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	x ^= x >> 31
	if x == 0 {
		x = 1
	}
	return x
}

// The seeds keep the kinds of ids apart.
const (
	seedTraceHi = iota + 1
	seedTraceLo
	seedExecution
	seedEvent
	seedTask
	seedMapRun
)

func arnHash(seed uint64, arn string) uint64 { return fnv(fnvOffset^seed, arn) }

func spanIDOf(x uint64) SpanID {
	var id SpanID
	binary.BigEndian.PutUint64(id[:], mix(x))
	return id
}

// ExecutionTraceID is the trace of an execution started without a trace
// header: a hash of its ARN.
func ExecutionTraceID(executionArn string) TraceID {
	var id TraceID
	binary.BigEndian.PutUint64(id[:8], mix(arnHash(seedTraceHi, executionArn)))
	binary.BigEndian.PutUint64(id[8:], mix(arnHash(seedTraceLo, executionArn)))
	return id
}

// ExecutionSpanID is the id of an execution's root span.
func ExecutionSpanID(executionArn string) SpanID {
	return spanIDOf(arnHash(seedExecution, executionArn))
}

// EventSpanID is the id of the span an event of an execution's history
// opens (a state entered, a Map iteration, a redrive).
func EventSpanID(executionArn string, eventID int64) SpanID {
	return eventSpanID(arnHash(seedEvent, executionArn), eventID)
}

// eventSpanID is EventSpanID with the ARN's hash (eventBase) made once.
func eventSpanID(base uint64, eventID int64) SpanID {
	return spanIDOf(base ^ mix(uint64(eventID)))
}

// TaskSpanID is the id of a task's span: the state's name and the task's
// invocation number (interp.TaskRequest.Invocation: the state's tasks
// counted in the execution's order), which the runner knows before its
// scheduled event is committed.
func TaskSpanID(executionArn, stateName string, invocation int) SpanID {
	return spanIDOf(fnv(arnHash(seedTask, executionArn)^0xff, stateName) ^ mix(uint64(invocation)))
}

// MapRunSpanID is the id of a map run's span.
func MapRunSpanID(mapRunArn string) SpanID {
	return spanIDOf(arnHash(seedMapRun, mapRunArn))
}

// Parent is the remote parent an execution's trace continues: its trace
// and the span its root span is a child of (invalid when none).
func Parent(executionArn, traceHeader string) SpanContext {
	if sc, ok := ParseHeader(traceHeader); ok {
		return sc
	}
	return SpanContext{traceID: ExecutionTraceID(executionArn)}
}

// ParseHeader reads a trace header: a W3C traceparent
// (00-TRACEID-SPANID-FLAGS) or X-Ray's (Root=1-XXXXXXXX-XXXX...;Parent=SPANID;Sampled=1),
// whose root is the same 128 bits as a W3C trace id.
func ParseHeader(h string) (SpanContext, bool) {
	h = strings.TrimSpace(h)
	if h == "" {
		return SpanContext{}, false
	}
	if parts := strings.Split(h, "-"); len(parts) == 4 && len(parts[0]) == 2 && !strings.Contains(h, "=") {
		var sc SpanContext
		if !hexID(sc.traceID[:], parts[1]) || !hexID(sc.spanID[:], parts[2]) || parts[0] == "ff" {
			return SpanContext{}, false
		}
		sc.remote = true
		return sc, true
	}
	var sc SpanContext
	for _, kv := range strings.Split(h, ";") {
		k, v, _ := strings.Cut(strings.TrimSpace(kv), "=")
		switch k {
		case "Root":
			r := strings.Split(v, "-")
			if len(r) != 3 || r[0] != "1" || !hexID(sc.traceID[:], r[1]+r[2]) {
				return SpanContext{}, false
			}
		case "Parent":
			if !hexID(sc.spanID[:], v) {
				return SpanContext{}, false
			}
		}
	}
	if !sc.traceID.IsValid() {
		return SpanContext{}, false
	}
	sc.remote = sc.spanID.IsValid()
	return sc, true
}

// TraceParent is the W3C traceparent header of a span.
func TraceParent(sc SpanContext) string {
	b := make([]byte, 0, 55)
	b = append(b, "00-"...)
	tid, sid := sc.TraceID(), sc.SpanID()
	b = hex.AppendEncode(b, tid[:])
	b = append(b, '-')
	b = hex.AppendEncode(b, sid[:])
	return string(append(b, "-01"...))
}

// XRayHeader is X-Ray's trace header of a span (Lambda's
// X-Amzn-Trace-Id, _X_AMZN_TRACE_ID, Lambda-Runtime-Trace-Id, and
// StartExecution's traceHeader).
func XRayHeader(sc SpanContext) string {
	tid := sc.TraceID()
	t := hex.EncodeToString(tid[:])
	return "Root=1-" + t[:8] + "-" + t[8:] + ";Parent=" + sc.SpanID().String() + ";Sampled=1"
}
