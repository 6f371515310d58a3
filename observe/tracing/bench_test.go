package tracing_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/engine"
	"stepwise/history"
	"stepwise/observe/tracing"
	"stepwise/store"
)

// BenchmarkTraceExecution is what the tracer spends on an execution of
// `stepwise bench`'s machine (10 Pass and Choice states, 22 events),
// exported over OTLP/HTTP to an endpoint that drops it: the step's copy,
// the spans, their protobuf and the request.
func BenchmarkTraceExecution(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer srv.Close()
	ctx := context.Background()
	exp, err := tracing.NewClient(srv.URL)
	require.NoError(b, err)
	tr, err := tracing.New(tracing.Config{Client: exp, All: true})
	require.NoError(b, err)
	defer tr.Close(ctx)
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
	row := &store.Execution{StateMachineArn: "arn:aws:states:us-east-1:123456789012:stateMachine:bench"}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		row.Arn = fmt.Sprintf("arn:aws:states:us-east-1:123456789012:execution:bench:e%d", i)
		tr.StepCommitted(&engine.CommittedStep{Execution: row, Events: events})
		if i%256 == 0 {
			require.NoError(b, tr.Flush(ctx))
		}
	}
	require.NoError(b, tr.Flush(ctx))
	require.Zero(b, tr.Dropped())
}
