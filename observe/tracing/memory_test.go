package tracing_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"stepwise/engine"
	"stepwise/history"
	"stepwise/observe/tracing"
	"stepwise/store"
)

// looper writes the history of an execution one step at a time.
type looper struct {
	t    *testing.T
	tr   *tracing.Tracer
	row  *store.Execution
	last int64
	at   time.Time
}

// step commits events, each linked to the one before it.
func (l *looper) step(evs ...*history.Event) {
	for _, ev := range evs {
		l.last++
		ev.ID, ev.PreviousEventID, ev.Timestamp = l.last, l.last-1, l.at
		l.at = l.at.Add(time.Millisecond)
	}
	l.tr.StepCommitted(&engine.CommittedStep{Execution: l.row, Events: evs})
}

func (l *looper) held(maxOpen, maxCtx int) {
	l.t.Helper()
	require.NoError(l.t, l.tr.Flush(context.Background()))
	open, ctx, ok := l.tr.Held(l.row.Arn)
	require.True(l.t, ok)
	require.LessOrEqual(l.t, open, maxOpen, "open spans held")
	require.LessOrEqual(l.t, ctx, maxCtx, "event contexts held")
}

// A long looping execution holds its open spans, not every span it made
// nor every event it wrote: the ended ones are exported and let go, and
// all of them reach the exporter under the right parents.
func TestLongExecutionHoldsOpenSpansOnly(t *testing.T) {
	exp := newMemClient()
	tr, err := tracing.New(tracing.Config{Client: exp, All: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = tr.Close(context.Background()) })
	const arn = "arn:aws:states:us-east-1:123456789012:execution:loop:e"
	l := &looper{t: t, tr: tr, at: time.Now(), row: &store.Execution{Arn: arn, StateMachineArn: "arn:aws:states:us-east-1:123456789012:stateMachine:loop"}}
	l.step(&history.Event{Type: history.EventExecutionStarted, ExecutionStartedEventDetails: &history.ExecutionStartedEventDetails{}})

	const tasks, passes = 2000, 2000
	for i := range tasks {
		l.step(&history.Event{Type: "TaskStateEntered", StateEnteredEventDetails: &history.StateEnteredEventDetails{Name: "Work"}},
			&history.Event{Type: history.EventTaskScheduled, TaskScheduledEventDetails: &history.TaskScheduledEventDetails{ResourceType: "lambda", Resource: "invoke"}})
		l.step(&history.Event{Type: history.EventTaskStarted})
		l.step(&history.Event{Type: history.EventTaskSucceeded},
			&history.Event{Type: "TaskStateExited", StateExitedEventDetails: &history.StateExitedEventDetails{Name: "Work"}},
			&history.Event{Type: "ChoiceStateEntered", StateEnteredEventDetails: &history.StateEnteredEventDetails{Name: "Again"}},
			&history.Event{Type: "ChoiceStateExited", StateExitedEventDetails: &history.StateExitedEventDetails{Name: "Again"}})
		if i%500 == 499 {
			l.held(1, 0)
		}
	}
	l.step(&history.Event{Type: "MapStateEntered", StateEnteredEventDetails: &history.StateEnteredEventDetails{Name: "Each"}},
		&history.Event{Type: history.EventMapStateStarted},
		&history.Event{Type: history.EventMapIterationStarted, MapIterationStartedEventDetails: &history.MapIterationEventDetails{Name: "Each", Index: 0}})
	for i := range passes {
		l.step(&history.Event{Type: "PassStateEntered", StateEnteredEventDetails: &history.StateEnteredEventDetails{Name: "Inner"}})
		l.step(&history.Event{Type: "PassStateExited", StateExitedEventDetails: &history.StateExitedEventDetails{Name: "Inner"}})
		if i%500 == 499 {
			l.held(3, 40)
		}
	}
	l.step(&history.Event{Type: history.EventMapIterationSucceeded, MapIterationSucceededEventDetails: &history.MapIterationEventDetails{Name: "Each", Index: 0}},
		&history.Event{Type: history.EventMapStateSucceeded},
		&history.Event{Type: "MapStateExited", StateExitedEventDetails: &history.StateExitedEventDetails{Name: "Each"}},
		&history.Event{Type: history.EventExecutionSucceeded, ExecutionSucceededEventDetails: &history.OutputEventDetails{}})
	require.NoError(t, tr.Flush(context.Background()))
	_, _, ok := tr.Held(arn)
	require.False(t, ok, "an ended execution is let go")
	require.Zero(t, tr.Dropped())

	spans := exp.GetSpans()
	byName := map[string][]tracetest.SpanStub{}
	ids := map[trace.SpanID]bool{}
	for _, s := range spans {
		byName[s.Name] = append(byName[s.Name], s)
		require.False(t, ids[s.SpanContext.SpanID()], "span ids are unique")
		ids[s.SpanContext.SpanID()] = true
	}
	require.Equal(t, 1+3*tasks+2+passes, len(spans))
	root := byName["loop"][0].SpanContext.SpanID()
	require.Equal(t, trace.SpanID(tracing.ExecutionSpanID(arn)), root)
	states := map[trace.SpanID]bool{}
	for _, s := range byName["Work"] {
		require.Equal(t, root, s.Parent.SpanID())
		states[s.SpanContext.SpanID()] = true
	}
	require.Len(t, states, tasks)
	inv := map[trace.SpanID]bool{}
	for _, s := range byName["lambda:invoke"] {
		require.True(t, states[s.Parent.SpanID()], "a task's span is under its state's")
		inv[s.SpanContext.SpanID()] = true
	}
	for i := range tasks {
		require.True(t, inv[trace.SpanID(tracing.TaskSpanID(arn, "Work", i))], "task %d's span id is the one its runner was given", i)
	}
	for _, s := range byName["Again"] {
		require.Equal(t, root, s.Parent.SpanID())
	}
	mapSpan := byName["Each"][0]
	require.Equal(t, root, mapSpan.Parent.SpanID())
	iter := byName["Map iteration"][0]
	require.Equal(t, mapSpan.SpanContext.SpanID(), iter.Parent.SpanID())
	require.Len(t, byName["Inner"], passes)
	for _, s := range byName["Inner"] {
		require.Equal(t, iter.SpanContext.SpanID(), s.Parent.SpanID(), fmt.Sprint(s.Name))
	}
}
