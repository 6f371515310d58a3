// Package tracing makes executions OpenTelemetry traces. A Tracer is an
// engine.Observer: it builds the spans of a traced execution (its state
// machine's tracingConfiguration enabled, or every execution with
// Config.All) from the history events the engine commits, a span per
// execution, state entered, task attempt, Map iteration and map run,
// and exports them over OTLP. The spans' ids derive from the
// execution's ARN and its events (ids.go), so the traceparent a task's
// runner is given at dispatch (Tracer.TaskTraceParent, through
// engine.Config.TaskTrace) names the span later made of its events, and
// an execution resumed after a restart continues its trace. See
// docs/design/observing.md, Traces.
package tracing
