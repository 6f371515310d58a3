package tracing

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/trace"
)

// The ids of an execution's spans are derived from what its history says,
// never drawn at random: an execution resumed after a restart, or taken
// over by another node, continues the trace it began, with nothing kept
// but the history.

// derive hashes the parts into an id of n bytes (never all zero).
func derive(n int, parts ...string) []byte {
	h := sha256.New()
	for _, p := range parts {
		var l [4]byte
		binary.BigEndian.PutUint32(l[:], uint32(len(p)))
		h.Write(l[:])
		h.Write([]byte(p))
	}
	sum := h.Sum(nil)[:n]
	if allZero(sum) {
		sum[n-1] = 1
	}
	return sum
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

func spanID(parts ...string) trace.SpanID {
	var id trace.SpanID
	copy(id[:], derive(8, parts...))
	return id
}

// ExecutionTraceID is the trace of an execution started without a trace
// header: a hash of its ARN.
func ExecutionTraceID(executionArn string) trace.TraceID {
	var id trace.TraceID
	copy(id[:], derive(16, "trace", executionArn))
	return id
}

// ExecutionSpanID is the id of an execution's root span.
func ExecutionSpanID(executionArn string) trace.SpanID {
	return spanID("execution", executionArn)
}

// EventSpanID is the id of the span an event of an execution's history
// opens (a state entered, a Map iteration, a redrive).
func EventSpanID(executionArn string, eventID int64) trace.SpanID {
	return spanID("event", executionArn, strconv.FormatInt(eventID, 10))
}

// TaskSpanID is the id of a task's span: the state's name and the task's
// invocation number (interp.TaskRequest.Invocation: the state's tasks
// counted in the execution's order), which the runner knows before its
// scheduled event is committed.
func TaskSpanID(executionArn, stateName string, invocation int) trace.SpanID {
	return spanID("task", executionArn, stateName, strconv.Itoa(invocation))
}

// MapRunSpanID is the id of a map run's span.
func MapRunSpanID(mapRunArn string) trace.SpanID {
	return spanID("maprun", mapRunArn)
}

// Parent is the remote parent an execution's trace continues: its trace
// and the span its root span is a child of (invalid when none).
func Parent(executionArn, traceHeader string) trace.SpanContext {
	if sc, ok := ParseHeader(traceHeader); ok {
		return sc
	}
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: ExecutionTraceID(executionArn), TraceFlags: trace.FlagsSampled})
}

// ParseHeader reads a trace header: a W3C traceparent
// (00-TRACEID-SPANID-FLAGS) or X-Ray's (Root=1-XXXXXXXX-XXXX...;Parent=SPANID;Sampled=1),
// whose root is the same 128 bits as a W3C trace id.
func ParseHeader(h string) (trace.SpanContext, bool) {
	h = strings.TrimSpace(h)
	if h == "" {
		return trace.SpanContext{}, false
	}
	if parts := strings.Split(h, "-"); len(parts) == 4 && len(parts[0]) == 2 && !strings.Contains(h, "=") {
		tid, err1 := trace.TraceIDFromHex(parts[1])
		sid, err2 := trace.SpanIDFromHex(parts[2])
		if err1 != nil || err2 != nil || parts[0] == "ff" {
			return trace.SpanContext{}, false
		}
		return trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled, Remote: true}), true
	}
	var cfg trace.SpanContextConfig
	for _, kv := range strings.Split(h, ";") {
		k, v, _ := strings.Cut(strings.TrimSpace(kv), "=")
		switch k {
		case "Root":
			r := strings.Split(v, "-")
			if len(r) != 3 || r[0] != "1" {
				return trace.SpanContext{}, false
			}
			tid, err := trace.TraceIDFromHex(r[1] + r[2])
			if err != nil {
				return trace.SpanContext{}, false
			}
			cfg.TraceID = tid
		case "Parent":
			sid, err := trace.SpanIDFromHex(v)
			if err != nil {
				return trace.SpanContext{}, false
			}
			cfg.SpanID = sid
		}
	}
	if !cfg.TraceID.IsValid() {
		return trace.SpanContext{}, false
	}
	cfg.TraceFlags, cfg.Remote = trace.FlagsSampled, cfg.SpanID.IsValid()
	return trace.NewSpanContext(cfg), true
}

// TraceParent is the W3C traceparent header of a span.
func TraceParent(sc trace.SpanContext) string {
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
func XRayHeader(sc trace.SpanContext) string {
	tid := sc.TraceID()
	t := hex.EncodeToString(tid[:])
	return "Root=1-" + t[:8] + "-" + t[8:] + ";Parent=" + sc.SpanID().String() + ";Sampled=1"
}
