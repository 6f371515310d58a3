package tracing_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/engine"
	"stepwise/history"
	"stepwise/interp"
	"stepwise/observe/tracing"
	"stepwise/store"
	"stepwise/store/sqlitestore"
)

// untraced is a tracer and a step of an execution whose state machine's
// tracing is off.
func untraced(tb testing.TB) (*tracing.Tracer, *engine.CommittedStep) {
	tb.Helper()
	ctx := context.Background()
	drv, err := sqlitestore.Open(ctx, sqlitestore.Memory, sqlitestore.Options{})
	require.NoError(tb, err)
	tr, err := tracing.New(tracing.Config{Client: newMemClient(), Store: drv.Executor()})
	require.NoError(tb, err)
	tb.Cleanup(func() { _ = tr.Close(ctx); drv.Close() })
	const sm = "arn:aws:states:us-east-1:123456789012:stateMachine:m"
	tr.Prime(&store.StateMachine{Arn: sm, RevisionID: "r1", TracingConfiguration: `{"enabled":false}`})
	now := time.Now()
	return tr, &engine.CommittedStep{
		Execution: &store.Execution{Arn: "arn:aws:states:us-east-1:123456789012:execution:m:e", StateMachineArn: sm, RevisionID: "r1"},
		Events: []*history.Event{
			{ID: 2, PreviousEventID: 1, Type: "PassStateEntered", Timestamp: now, StateEnteredEventDetails: &history.StateEnteredEventDetails{Name: "A"}},
			{ID: 3, PreviousEventID: 2, Type: "PassStateExited", Timestamp: now, StateExitedEventDetails: &history.StateExitedEventDetails{Name: "A"}},
		},
	}
}

// The step of an execution that is not traced costs the tracer no
// allocation (nor does a task's traceparent), so a server whose state
// machines trace nothing pays a map lookup a step.
func TestUntracedCostsNoAllocation(t *testing.T) {
	tr, step := untraced(t)
	req := &interp.TaskRequest{StateName: "A"}
	require.Zero(t, testing.AllocsPerRun(100, func() {
		tr.StepCommitted(step)
		if tr.TaskTraceParent(step.Execution, req) != "" {
			t.Fatal("an untraced task has no traceparent")
		}
	}))
}

func BenchmarkStepCommittedUntraced(b *testing.B) {
	tr, step := untraced(b)
	b.ReportAllocs()
	for b.Loop() {
		tr.StepCommitted(step)
	}
}

func BenchmarkStepCommittedTraced(b *testing.B) {
	ctx := context.Background()
	tr, err := tracing.New(tracing.Config{Client: newMemClient(), All: true})
	require.NoError(b, err)
	b.Cleanup(func() { _ = tr.Close(ctx) })
	_, step := untraced(b)
	b.ReportAllocs()
	for b.Loop() {
		tr.StepCommitted(step)
	}
}
