package tracing_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"stepwise/config"
	"stepwise/engine"
	"stepwise/engine/task"
	"stepwise/internal/testkit/testwait"
	"stepwise/jsonvalue"
	"stepwise/observe/tracing"
	"stepwise/server"
	"stepwise/server/servertest"
	"stepwise/service"
)

// hanging never answers its tasks.
type hanging struct{ got chan string }

func (h hanging) Run(_ context.Context, t *task.Task, _ func(task.Result)) {
	h.got <- t.TraceParent
}
func (hanging) Cancel(string, string) {}

// answering answers every task at once.
type answering struct{ got chan string }

func (a answering) Run(_ context.Context, t *task.Task, done func(task.Result)) {
	a.got <- t.TraceParent
	go done(task.Result{Output: jsonvalue.NewObject(0)})
}
func (answering) Cancel(string, string) {}

// An execution resumed after a restart continues its trace: the spans
// made after it have the ids, parents and start times the spans made
// before it expect, and the task dispatched again has the same span.
func TestRestartContinuesTrace(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "s.db")
	def := `{"StartAt":"Prepare","States":{"Prepare":{"Type":"Pass","Next":"Work"},
	 "Work":{"Type":"Task","Resource":"arn:aws:lambda:us-east-1:123456789012:function:w","End":true}}}`

	boot := func(runner task.Runner) (*engine.Engine, *service.Service, *tracing.Tracer, *memClient, func()) {
		exp := newMemClient()
		s := servertest.New(t, servertest.WithConfig(func(c *config.Serve) { c.DB = db }),
			servertest.WithOptions(server.WithTasks(runner), server.WithTracing(server.Tracing{Client: exp, All: true})))
		return s.Engine(), s.Service(), s.Tracer(), exp, func() { require.NoError(t, s.Close()) }
	}

	first := hanging{got: make(chan string, 1)}
	_, svc, tr, exp, stop := boot(first)
	sm, err := svc.CreateStateMachine(ctx, &service.CreateStateMachineInput{Name: "resumed", RoleArn: roleArn, Definition: def})
	require.NoError(t, err)
	out, err := svc.StartExecution(ctx, &service.StartExecutionInput{StateMachineArn: sm.StateMachineArn})
	require.NoError(t, err)
	var before string
	select {
	case before = <-first.got:
	case <-time.After(10 * time.Second):
		t.Fatal("the task was not dispatched")
	}
	require.NoError(t, tr.Flush(ctx))
	spans := exp.GetSpans()
	require.Len(t, spans, 1, "the state that ended before the restart")
	prepare := spans[0]
	require.Equal(t, "Prepare", prepare.Name)
	stop()

	second := answering{got: make(chan string, 1)}
	_, svc, tr, exp, stop = boot(second)
	defer stop()
	var after string
	select {
	case after = <-second.got:
	case <-time.After(10 * time.Second):
		t.Fatal("the task was not dispatched again")
	}
	require.Equal(t, before, after, "the task dispatched again has the same span")
	testwait.Until(t, func() bool {
		d, err := svc.DescribeExecution(ctx, &service.DescribeExecutionInput{ExecutionArn: out.ExecutionArn})
		require.NoError(t, err)
		require.NoError(t, tr.Flush(ctx))
		return d.Status == "SUCCEEDED" && len(exp.GetSpans()) == 3
	}, 10*time.Second, 10*time.Millisecond)
	got := map[string]tracetest.SpanStub{}
	for _, s := range exp.GetSpans() {
		got[s.Name] = s
		require.Equal(t, prepare.SpanContext.TraceID(), s.SpanContext.TraceID())
	}
	root, work, call := got["resumed"], got["Work"], got["arn:aws:lambda:us-east-1:123456789012:function:w"]
	require.Equal(t, prepare.Parent.SpanID(), root.SpanContext.SpanID(), "the root span is the one Prepare's names")
	require.Equal(t, root.SpanContext.SpanID(), work.Parent.SpanID())
	require.Equal(t, work.SpanContext.SpanID(), call.Parent.SpanID())
	require.Equal(t, after, tracing.TraceParent(sc(call)))
	require.Equal(t, prepare.EndTime, work.StartTime, "Work's span starts when it was entered, before the restart")
	require.True(t, root.StartTime.Equal(prepare.StartTime) || root.StartTime.Before(prepare.StartTime))
}
