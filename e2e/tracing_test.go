package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/stretchr/testify/require"

	"stepwise/internal/testkit/otlptest"
	"stepwise/internal/testkit/testwait"
)

// The handler fails its first call (the Task retries) and answers with
// the trace it was invoked in.
const tracedHandler = `
import os

calls = 0

class Flaky(Exception):
    pass

def work(event, context):
    global calls
    calls += 1
    if calls == 1:
        raise Flaky("first call")
    return {"traceparent": os.environ.get("TRACEPARENT"), "xray": os.environ.get("_X_AMZN_TRACE_ID")}
`

const tracedChild = `{"StartAt": "Inner", "States": {"Inner": {"Type": "Pass", "End": true}}}`

const tracedParent = `{"StartAt": "Work", "States": {
 "Work": {"Type": "Task", "Resource": "arn:aws:lambda:us-east-1:123456789012:function:work",
   "Retry": [{"ErrorEquals": ["Flaky"], "IntervalSeconds": 1, "MaxAttempts": 2}], "ResultPath": "$.work", "Next": "Both"},
 "Both": {"Type": "Parallel", "ResultPath": null, "Branches": [
   {"StartAt": "Left", "States": {"Left": {"Type": "Pass", "End": true}}},
   {"StartAt": "Right", "States": {"Right": {"Type": "Pass", "End": true}}}], "Next": "Each"},
 "Each": {"Type": "Map", "ItemsPath": "$.items", "ResultPath": null,
   "ItemProcessor": {"StartAt": "Item", "States": {"Item": {"Type": "Pass", "End": true}}}, "Next": "Nested"},
 "Nested": {"Type": "Task", "Resource": "arn:aws:states:::states:startExecution.sync:2",
   "Parameters": {"StateMachineArn": "CHILD"}, "ResultPath": null, "Next": "Done"},
 "Done": {"Type": "Succeed"}}}`

// With --trace-all and --otel-endpoint, an execution with a retried
// Task of a local function, a Parallel, a Map and a nested execution is
// one trace in the OpenTelemetry Collector's receiver: every state's span
// under its parent, the task spans with their resource and attempt, and
// the function was invoked with its task span's traceparent.
func TestTraceReachesReceiver(t *testing.T) {
	t.Parallel()
	rcv := otlptest.Start(t)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "app.py"), []byte(tracedHandler), 0o644))
	srv := startServer(t, ":memory:", "--trace-all", "--otel-endpoint", rcv.HTTP, "--function", "work=python:"+dir+":app.work")
	c := srv.client(t)
	ctx := context.Background()
	child, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("traced-child"), RoleArn: aws.String(roleArn), Definition: aws.String(tracedChild)})
	require.NoError(t, err)
	parent, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("traced"), RoleArn: aws.String(roleArn),
		Definition: aws.String(strings.Replace(tracedParent, "CHILD", aws.ToString(child.StateMachineArn), 1))})
	require.NoError(t, err)
	start, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: parent.StateMachineArn, Input: aws.String(`{"items": [1, 2]}`)})
	require.NoError(t, err)
	d := waitDone(t, c, aws.ToString(start.ExecutionArn))
	require.Equal(t, types.ExecutionStatusSucceeded, d.Status, "%s", srv.stderr.String())
	var out struct {
		Work struct{ Traceparent, Xray string }
	}
	require.NoError(t, json.Unmarshal([]byte(aws.ToString(d.Output)), &out))
	tp := strings.Split(out.Work.Traceparent, "-")
	require.Len(t, tp, 4, "the function got a traceparent: %q", out.Work.Traceparent)
	traceID, taskSpan := tp[1], tp[2]
	require.Equal(t, "Root=1-"+traceID[:8]+"-"+traceID[8:]+";Parent="+taskSpan+";Sampled=1", out.Work.Xray)

	// The execution, 9 states, 2 iterations, 3 tasks, the child and its state.
	const want = 17
	var spans []otlptest.Span
	testwait.Until(t, func() bool {
		spans = spans[:0]
		for _, s := range rcv.Spans() {
			if s.TraceID == traceID {
				spans = append(spans, s)
			}
		}
		return len(spans) >= want
	}, 30*time.Second, 100*time.Millisecond)
	require.Len(t, spans, want)

	byID := map[string]otlptest.Span{}
	for _, s := range spans {
		byID[s.SpanID] = s
	}
	var paths []string
	for _, s := range spans {
		names := []string{s.Name}
		for p := s; p.ParentSpanID != ""; {
			up, ok := byID[p.ParentSpanID]
			require.True(t, ok, "the parent of %s is in the trace", p.Name)
			names = append([]string{up.Name}, names...)
			p = up
		}
		paths = append(paths, strings.Join(names, "/"))
	}
	sort.Strings(paths)
	fn := "arn:aws:lambda:us-east-1:123456789012:function:work"
	require.Equal(t, []string{
		"traced",
		"traced/Both", "traced/Both/Left", "traced/Both/Right",
		"traced/Done",
		"traced/Each", "traced/Each/Map iteration", "traced/Each/Map iteration",
		"traced/Each/Map iteration/Item", "traced/Each/Map iteration/Item",
		"traced/Nested", "traced/Nested/states:startExecution.sync:2",
		"traced/Nested/states:startExecution.sync:2/traced-child",
		"traced/Nested/states:startExecution.sync:2/traced-child/Inner",
		"traced/Work", "traced/Work/" + fn, "traced/Work/" + fn,
	}, paths)

	for _, s := range spans {
		switch s.Name {
		case "Work":
			require.Equal(t, "Task", s.Attributes["stepwise.state.type"])
			require.EqualValues(t, 2, s.Attributes["stepwise.state.attempts"])
			require.EqualValues(t, 1, s.Attributes["stepwise.state.retries"])
		case fn:
			require.Equal(t, fn, s.Attributes["stepwise.task.resource"])
			require.Equal(t, "Client", s.Kind)
			if s.Attributes["stepwise.task.attempt"] == float64(0) || s.Attributes["stepwise.task.attempt"] == int64(0) {
				require.Equal(t, "Error", s.Status)
				require.Equal(t, "Flaky", s.Attributes["error.type"])
			} else {
				require.Equal(t, taskSpan, s.SpanID, "the function got the span of the attempt that succeeded")
				require.Equal(t, "Unset", s.Status)
			}
		case "traced":
			require.Equal(t, aws.ToString(start.ExecutionArn), s.Attributes["stepwise.execution.arn"])
			require.Equal(t, "SUCCEEDED", s.Attributes["stepwise.execution.status"])
			require.Equal(t, "stepwise", s.Resource["service.name"])
		}
	}
}

// Without --trace-all, the state machines whose tracingConfiguration is
// enabled are traced, and only they.
func TestTracingConfigurationServed(t *testing.T) {
	t.Parallel()
	rcv := otlptest.Start(t)
	srv := startServer(t, ":memory:", "--otel-endpoint", rcv.HTTP)
	c := srv.client(t)
	ctx := context.Background()
	def := aws.String(`{"StartAt": "P", "States": {"P": {"Type": "Pass", "End": true}}}`)
	traced, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("on"), RoleArn: aws.String(roleArn), Definition: def,
		TracingConfiguration: &types.TracingConfiguration{Enabled: true}})
	require.NoError(t, err)
	plain, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("off"), RoleArn: aws.String(roleArn), Definition: def})
	require.NoError(t, err)
	for _, sm := range []*string{plain.StateMachineArn, traced.StateMachineArn} {
		out, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: sm})
		require.NoError(t, err)
		require.Equal(t, types.ExecutionStatusSucceeded, waitDone(t, c, aws.ToString(out.ExecutionArn)).Status)
	}
	testwait.Until(t, func() bool { return len(rcv.Spans()) >= 2 }, 30*time.Second, 100*time.Millisecond)
	// The untraced execution ran first: had it been traced, its spans
	// would have come with the other's.
	var names []string
	for _, s := range rcv.Spans() {
		names = append(names, s.Name)
	}
	sort.Strings(names)
	require.Equal(t, []string{"P", "on"}, names)
}
