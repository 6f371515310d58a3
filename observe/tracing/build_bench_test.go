package tracing

import (
	"fmt"
	"testing"
	"time"

	"stepwise/history"
)

// BenchmarkBuildExecution is the tracer's work on an execution of
// `stepwise bench`'s machine (10 Pass states, 22 events) with no export
// and no goroutine: the copy of its events, its spans and their protobuf.
func BenchmarkBuildExecution(b *testing.B) {
	now := time.Now()
	events := []*history.Event{{ID: 1, Type: history.EventExecutionStarted, Timestamp: now, ExecutionStartedEventDetails: &history.ExecutionStartedEventDetails{}}}
	for i := range 10 {
		name := fmt.Sprintf("S%d", i)
		id := int64(len(events))
		events = append(events,
			&history.Event{ID: id + 1, PreviousEventID: id, Type: "PassStateEntered", Timestamp: now, StateEnteredEventDetails: &history.StateEnteredEventDetails{Name: name}},
			&history.Event{ID: id + 2, PreviousEventID: id + 1, Type: "PassStateExited", Timestamp: now, StateExitedEventDetails: &history.StateExitedEventDetails{Name: name}})
	}
	events = append(events, &history.Event{ID: 22, PreviousEventID: 21, Type: history.EventExecutionSucceeded, Timestamp: now, ExecutionSucceededEventDetails: &history.OutputEventDetails{}})
	arns := make([]string, 1024)
	for i := range arns {
		arns[i] = fmt.Sprintf("arn:aws:states:us-east-1:123456789012:execution:bench:e%d", i)
	}
	t := &Tracer{cfg: Config{All: true}, execs: map[string]*execTrace{}, mapRuns: map[string]SpanContext{}}
	t.b.ended = t.ended
	st := &step{stateMachineArn: "arn:aws:states:us-east-1:123456789012:stateMachine:bench", known: true, events: make([]event, len(events))}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		st.arn = arns[i%len(arns)]
		i++
		for j, ev := range events {
			st.events[j] = copyEvent(ev)
		}
		t.take(st)
		if t.nspans >= batchSpans {
			t.buf, t.nspans = t.buf[:0], 0
		}
	}
}
