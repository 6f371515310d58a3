package tracing_test

import (
	"context"
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

// branches writes the history of an execution whose Parallel state runs
// two branches side by side, each event linked to the last of its branch.
type branches struct {
	tr   *tracing.Tracer
	row  *store.Execution
	last int64
	at   time.Time
}

// step commits events, each after the event prev (0: the one before it).
func (h *branches) step(prev int64, evs ...*history.Event) int64 {
	for _, ev := range evs {
		h.last++
		if prev == 0 {
			prev = h.last - 1
		}
		ev.ID, ev.PreviousEventID, ev.Timestamp = h.last, prev, h.at
		h.at = h.at.Add(time.Millisecond)
		prev = 0
	}
	h.tr.StepCommitted(&engine.CommittedStep{Execution: h.row, Events: evs})
	return h.last
}

// Two long executions, their steps interleaved, each a Parallel state
// whose branches' spans end while the Parallel's stays open: the records
// of the spans that ended are used again for the next, yet every span is
// exported under the right parent.
func TestSpanRecordsKeepParents(t *testing.T) {
	t.Parallel()
	exp := newMemClient()
	tr, err := tracing.New(tracing.Config{Client: exp, All: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = tr.Close(context.Background()) })
	const rounds = 300
	arns := []string{"arn:aws:states:us-east-1:123456789012:execution:par:a", "arn:aws:states:us-east-1:123456789012:execution:par:b"}
	var hs []*branches
	lastL, lastR := map[*branches]int64{}, map[*branches]int64{}
	for _, arn := range arns {
		h := &branches{tr: tr, at: time.Now(), row: &store.Execution{Arn: arn, StateMachineArn: "arn:aws:states:us-east-1:123456789012:stateMachine:par"}}
		hs = append(hs, h)
		h.step(0, &history.Event{Type: history.EventExecutionStarted, ExecutionStartedEventDetails: &history.ExecutionStartedEventDetails{}})
		started := h.step(0, &history.Event{Type: "ParallelStateEntered", StateEnteredEventDetails: &history.StateEnteredEventDetails{Name: "Both"}},
			&history.Event{Type: history.EventParallelStateStarted})
		lastL[h], lastR[h] = started, started
	}
	for range rounds {
		for _, h := range hs {
			lastL[h] = h.step(lastL[h], &history.Event{Type: "PassStateEntered", StateEnteredEventDetails: &history.StateEnteredEventDetails{Name: "L"}})
		}
		for _, h := range hs {
			lastR[h] = h.step(lastR[h], &history.Event{Type: "TaskStateEntered", StateEnteredEventDetails: &history.StateEnteredEventDetails{Name: "R"}},
				&history.Event{Type: history.EventTaskScheduled, TaskScheduledEventDetails: &history.TaskScheduledEventDetails{ResourceType: "lambda", Resource: "invoke"}})
		}
		for _, h := range hs {
			lastL[h] = h.step(lastL[h], &history.Event{Type: "PassStateExited", StateExitedEventDetails: &history.StateExitedEventDetails{Name: "L"}})
			lastR[h] = h.step(lastR[h], &history.Event{Type: history.EventTaskStarted})
		}
		for _, h := range hs {
			lastR[h] = h.step(lastR[h], &history.Event{Type: history.EventTaskSucceeded},
				&history.Event{Type: "TaskStateExited", StateExitedEventDetails: &history.StateExitedEventDetails{Name: "R"}})
		}
	}
	// The left branch fails the Parallel while the right one's task is
	// still open under it; the Parallel's Catch goes on to Handle (a new
	// span, in a record of one that ended), and the execution's end
	// closes the right branch's spans, under the Parallel's.
	for _, h := range hs {
		h.step(lastR[h], &history.Event{Type: "TaskStateEntered", StateEnteredEventDetails: &history.StateEnteredEventDetails{Name: "R"}},
			&history.Event{Type: history.EventTaskScheduled, TaskScheduledEventDetails: &history.TaskScheduledEventDetails{ResourceType: "lambda", Resource: "invoke"}})
	}
	failed := map[*branches]int64{}
	for _, h := range hs {
		failed[h] = h.step(lastL[h], &history.Event{Type: history.EventParallelStateFailed})
	}
	for _, h := range hs {
		h.step(failed[h], &history.Event{Type: "PassStateEntered", StateEnteredEventDetails: &history.StateEnteredEventDetails{Name: "Handle"}},
			&history.Event{Type: "PassStateExited", StateExitedEventDetails: &history.StateExitedEventDetails{Name: "Handle"}})
	}
	for _, h := range hs {
		h.step(0, &history.Event{Type: history.EventExecutionFailed, ExecutionFailedEventDetails: &history.FailureEventDetails{}})
	}
	require.NoError(t, tr.Flush(context.Background()))
	require.Zero(t, tr.Dropped())

	spans := exp.GetSpans()
	require.Equal(t, len(arns)*(3*rounds+5), len(spans))
	byID := map[trace.SpanID]tracetest.SpanStub{}
	for _, s := range spans {
		_, dup := byID[s.SpanContext.SpanID()]
		require.False(t, dup, "span ids are unique")
		byID[s.SpanContext.SpanID()] = s
	}
	parent := func(s tracetest.SpanStub) tracetest.SpanStub {
		p, ok := byID[s.Parent.SpanID()]
		require.True(t, ok, "the parent of %s is exported", s.Name)
		require.Equal(t, s.SpanContext.TraceID(), p.SpanContext.TraceID())
		return p
	}
	for _, arn := range arns {
		root := byID[trace.SpanID(tracing.ExecutionSpanID(arn))]
		require.Equal(t, "par", root.Name)
		require.False(t, root.Parent.SpanID().IsValid())
		for i := range rounds + 1 {
			task, ok := byID[trace.SpanID(tracing.TaskSpanID(arn, "R", i))]
			require.True(t, ok, "task %d of %s", i, arn)
			require.Equal(t, "lambda:invoke", task.Name)
			// The task's state is the one entered just before it was
			// scheduled, under the Parallel's span, under the root.
			st := parent(task)
			require.Equal(t, "R", st.Name)
			require.Equal(t, task.StartTime.Add(-time.Millisecond), st.StartTime)
			both := parent(st)
			require.Equal(t, "Both", both.Name)
			require.Equal(t, root.SpanContext, parent(both).SpanContext)
		}
	}
	for _, s := range spans {
		switch s.Name {
		case "L", "R":
			require.Equal(t, "Both", parent(s).Name)
		case "Both", "Handle":
			require.Equal(t, "par", parent(s).Name)
		}
	}
}
