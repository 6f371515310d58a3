package tracing_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"stepwise/engine"
	"stepwise/history"
	"stepwise/internal/testkit/testwait"
	"stepwise/observe/tracing"
	"stepwise/store"
)

// stuckClient is a collector that answers no export until released (or
// the export's context ends).
type stuckClient struct {
	release chan struct{}
	calls   atomic.Int32
	spans   atomic.Int64
}

func (c *stuckClient) Stop(context.Context) error { return nil }

func (c *stuckClient) Export(ctx context.Context, request []byte) error {
	c.calls.Add(1)
	var req coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(request, &req); err != nil {
		return err
	}
	select {
	case <-c.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			c.spans.Add(int64(len(ss.Spans)))
		}
	}
	return nil
}

// passes is a step of n Pass states, after event last.
func passes(row *store.Execution, last int64, n int) *engine.CommittedStep {
	st := &engine.CommittedStep{Execution: row}
	now := time.Now()
	for range n {
		st.Events = append(st.Events,
			&history.Event{ID: last + 1, PreviousEventID: last, Type: "PassStateEntered", Timestamp: now, StateEnteredEventDetails: &history.StateEnteredEventDetails{Name: "P"}},
			&history.Event{ID: last + 2, PreviousEventID: last + 1, Type: "PassStateExited", Timestamp: now, StateExitedEventDetails: &history.StateExitedEventDetails{Name: "P"}})
		last += 2
	}
	return st
}

func started(row *store.Execution) *engine.CommittedStep {
	return &engine.CommittedStep{Execution: row, Events: []*history.Event{{ID: 1, Type: history.EventExecutionStarted, Timestamp: time.Now(), ExecutionStartedEventDetails: &history.ExecutionStartedEventDetails{}}}}
}

// A collector that does not answer holds up no step: the tracer goes on
// taking steps and making spans, which wait for it in the export queue;
// Flush and Close end when their contexts do.
func TestSlowCollectorDropsNoStep(t *testing.T) {
	c := &stuckClient{release: make(chan struct{})}
	tr, err := tracing.New(tracing.Config{Client: c, All: true})
	require.NoError(t, err)
	row := &store.Execution{Arn: "arn:aws:states:us-east-1:123456789012:execution:slow:e", StateMachineArn: "arn:aws:states:us-east-1:123456789012:stateMachine:slow"}
	tr.StepCommitted(started(row))
	// More steps than the step queue holds, one event each: while the
	// first batch waits for the collector, the rest are taken.
	const steps = 20000
	last := int64(1)
	for i := range steps {
		st := passes(row, last-int64(i%2), 1)
		st.Events = st.Events[i%2 : i%2+1]
		last++
		tr.StepCommitted(st)
		if i%4096 == 4095 {
			testwait.Until(t, func() bool { return tr.QueuedSteps() < 1024 }, 10*time.Second, time.Millisecond)
		}
	}
	testwait.Until(t, func() bool { return tr.QueuedSteps() == 0 && c.calls.Load() == 1 }, 10*time.Second, time.Millisecond)
	require.Zero(t, tr.Dropped(), "no step is dropped while only the collector is slow")

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, tr.Flush(ctx), context.DeadlineExceeded, "a Flush the collector holds up ends with its context")

	close(c.release)
	require.NoError(t, tr.Flush(context.Background()))
	require.Equal(t, int64(steps/2), c.spans.Load(), "every state's span is exported")
	require.Zero(t, tr.Dropped())
	require.NoError(t, tr.Close(context.Background()))
}

// Past the export queue's bound whole batches are dropped, counted and
// told of once; Close gives up on the rest when its context ends.
func TestFullExportQueueDropsBatches(t *testing.T) {
	c := &stuckClient{release: make(chan struct{})}
	var logs bytes.Buffer
	var mu sync.Mutex
	log := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logs.Write(p)
	}), nil))
	tr, err := tracing.New(tracing.Config{Client: c, All: true, Logger: log})
	require.NoError(t, err)
	row := &store.Execution{Arn: "arn:aws:states:us-east-1:123456789012:execution:full:e", StateMachineArn: "arn:aws:states:us-east-1:123456789012:stateMachine:full"}
	tr.StepCommitted(started(row))
	// A step of 512 states is a batch of its own.
	last := int64(1)
	step := func() {
		tr.StepCommitted(passes(row, last, 512))
		last += 1024
	}
	step()
	testwait.Until(t, func() bool { return c.calls.Load() == 1 }, 10*time.Second, time.Millisecond)
	const extra = 10
	for range tracing.QueueBatches + extra {
		step()
	}
	testwait.Until(t, func() bool { return tr.QueuedSteps() == 0 && tr.Dropped() == extra*512 }, 10*time.Second, time.Millisecond)
	mu.Lock()
	require.Equal(t, 1, strings.Count(logs.String(), "export queue is full"), "told once a minute at most")
	mu.Unlock()

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	require.NoError(t, tr.Close(ctx))
	require.Equal(t, uint64(extra*512), tr.Dropped())
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
