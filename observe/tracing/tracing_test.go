package tracing_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"stepwise/config"
	"stepwise/engine"
	"stepwise/engine/task"
	"stepwise/failure"
	"stepwise/internal/testkit/testwait"
	"stepwise/jsonvalue"
	"stepwise/observe/tracing"
	"stepwise/server"
	"stepwise/server/servertest"
	"stepwise/service"
)

const roleArn = "arn:aws:iam::123456789012:role/r"

// flaky fails a task's first attempt, answers the others with their
// traceparent, and remembers the traceparents it was given.
type flaky struct {
	mu      sync.Mutex
	parents map[string][]string // state name → traceparents, in order
	tries   atomic.Int32
}

func (f *flaky) Run(_ context.Context, t *task.Task, done func(task.Result)) {
	f.mu.Lock()
	f.parents[t.Request.StateName] = append(f.parents[t.Request.StateName], t.TraceParent)
	f.mu.Unlock()
	go func() {
		if t.Request.StateName == "Work" && f.tries.Add(1) == 1 {
			done(task.Result{Failure: failure.Newf("Flaky", "first try")})
			return
		}
		out := jsonvalue.NewObject(1)
		out.Set("tp", t.TraceParent)
		done(task.Result{Output: out})
	}()
}

func (f *flaky) Cancel(string, string) {}

type bundle struct {
	ctx    context.Context
	svc    *service.Service
	eng    *engine.Engine
	exp    *memClient
	tracer *tracing.Tracer
	runner *flaky
}

func setup(t *testing.T, all bool) *bundle { return setupRatio(t, all, 0) }

func setupRatio(t *testing.T, all bool, ratio float64) *bundle {
	t.Helper()
	b := &bundle{ctx: context.Background(), exp: newMemClient(), runner: &flaky{parents: map[string][]string{}}}
	s := servertest.New(t, servertest.WithConfig(func(c *config.Serve) { c.WaitTimeScale = 0 }),
		servertest.WithOptions(server.WithTasks(b.runner), server.WithTracing(server.Tracing{Client: b.exp, All: all, Ratio: ratio})))
	b.tracer, b.eng, b.svc = s.Tracer(), s.Engine(), s.Service()
	return b
}

func (b *bundle) create(t *testing.T, name, def string, traced bool) string {
	t.Helper()
	in := &service.CreateStateMachineInput{Name: name, Definition: def, RoleArn: roleArn}
	if traced {
		in.TracingConfiguration = &service.TracingConfiguration{Enabled: &traced}
	}
	out, err := b.svc.CreateStateMachine(b.ctx, in)
	require.NoError(t, err)
	return out.StateMachineArn
}

func (b *bundle) run(t *testing.T, smArn, input string) *service.DescribeExecutionOutput {
	t.Helper()
	out, err := b.svc.StartExecution(b.ctx, &service.StartExecutionInput{StateMachineArn: smArn, Input: &input})
	require.NoError(t, err)
	var d *service.DescribeExecutionOutput
	testwait.Until(t, func() bool {
		d, err = b.svc.DescribeExecution(b.ctx, &service.DescribeExecutionInput{ExecutionArn: out.ExecutionArn})
		require.NoError(t, err)
		return d.Status != "RUNNING"
	}, 10*time.Second, 5*time.Millisecond)
	return d
}

func attr(s tracetest.SpanStub, key string) attribute.Value {
	for _, a := range s.Attributes {
		if string(a.Key) == key {
			return a.Value
		}
	}
	return attribute.Value{}
}

const child = `{"StartAt":"Inner","States":{"Inner":{"Type":"Task","Resource":"arn:aws:lambda:us-east-1:123456789012:function:inner","End":true}}}`

const parent = `{"StartAt":"Prepare","States":{
 "Prepare":{"Type":"Pass","Next":"Work"},
 "Work":{"Type":"Task","Resource":"arn:aws:lambda:us-east-1:123456789012:function:work",
   "Retry":[{"ErrorEquals":["Flaky"],"IntervalSeconds":1,"MaxAttempts":2}],"ResultPath":"$.work","Next":"Both"},
 "Both":{"Type":"Parallel","ResultPath":null,"Branches":[
   {"StartAt":"Left","States":{"Left":{"Type":"Pass","End":true}}},
   {"StartAt":"Right","States":{"Right":{"Type":"Pass","End":true}}}],"Next":"Each"},
 "Each":{"Type":"Map","ItemsPath":"$.items","ItemProcessor":{"StartAt":"Item","States":{"Item":{"Type":"Pass","End":true}}},"ResultPath":null,"Next":"Nested"},
 "Nested":{"Type":"Task","Resource":"arn:aws:states:::states:startExecution.sync:2","Parameters":{"StateMachineArn":"%s"},"Next":"Done"},
 "Done":{"Type":"Succeed"}}}`

// Every state, task, iteration and nested execution is a span of one
// trace, with its parent; the runner gets its task span's traceparent.
func TestExecutionIsOneTrace(t *testing.T) {
	b := setup(t, false)
	childArn := b.create(t, "child", child, true)
	smArn := b.create(t, "parent", fmt.Sprintf(parent, childArn), true)
	d := b.run(t, smArn, `{"items":[1,2]}`)
	require.Equal(t, "SUCCEEDED", d.Status, "%+v", d)
	require.NoError(t, b.tracer.Flush(b.ctx))
	testwait.Until(t, func() bool { require.NoError(t, b.tracer.Flush(b.ctx)); return len(b.exp.GetSpans()) >= 19 }, 10*time.Second, 10*time.Millisecond)
	spans := b.exp.GetSpans()

	byID := map[trace.SpanID]tracetest.SpanStub{}
	traces := map[trace.TraceID]bool{}
	for _, s := range spans {
		byID[s.SpanContext.SpanID()] = s
		traces[s.SpanContext.TraceID()] = true
	}
	require.Len(t, traces, 1, "one trace")
	require.Len(t, byID, len(spans), "no span exported twice")
	path := func(s tracetest.SpanStub) string {
		var names []string
		for {
			names = append([]string{s.Name}, names...)
			p, ok := byID[s.Parent.SpanID()]
			if !s.Parent.IsValid() || !ok {
				return strings.Join(names, "/")
			}
			s = p
		}
	}
	var paths []string
	for _, s := range spans {
		paths = append(paths, path(s))
	}
	sort.Strings(paths)
	fn := "arn:aws:lambda:us-east-1:123456789012:function:"
	require.Equal(t, []string{
		"parent",
		"parent/Both",
		"parent/Both/Left",
		"parent/Both/Right",
		"parent/Done",
		"parent/Each",
		"parent/Each/Map iteration",
		"parent/Each/Map iteration",
		"parent/Each/Map iteration/Item",
		"parent/Each/Map iteration/Item",
		"parent/Nested",
		"parent/Nested/states:startExecution.sync:2",
		"parent/Nested/states:startExecution.sync:2/child",
		"parent/Nested/states:startExecution.sync:2/child/Inner",
		"parent/Nested/states:startExecution.sync:2/child/Inner/" + fn + "inner",
		"parent/Prepare",
		"parent/Work",
		"parent/Work/" + fn + "work",
		"parent/Work/" + fn + "work",
	}, paths)

	var work []tracetest.SpanStub
	for _, s := range spans {
		switch {
		case s.Name == fn+"work":
			work = append(work, s)
		case s.Name == "Work":
			require.Equal(t, "Task", attr(s, "stepwise.state.type").AsString())
			require.EqualValues(t, 2, attr(s, "stepwise.state.attempts").AsInt64())
			require.EqualValues(t, 1, attr(s, "stepwise.state.retries").AsInt64())
		case s.Name == "parent":
			require.Equal(t, "SUCCEEDED", attr(s, "stepwise.execution.status").AsString())
			require.False(t, s.Parent.IsValid())
		}
	}
	sort.Slice(work, func(i, j int) bool { return work[i].StartTime.Before(work[j].StartTime) })
	require.EqualValues(t, 0, attr(work[0], "stepwise.task.attempt").AsInt64())
	require.Equal(t, codes.Error, work[0].Status.Code)
	require.Equal(t, "Flaky", attr(work[0], "error.type").AsString())
	require.Equal(t, "first try", attr(work[0], "stepwise.cause").AsString())
	require.EqualValues(t, 1, attr(work[1], "stepwise.task.attempt").AsInt64())
	require.Equal(t, codes.Unset, work[1].Status.Code)
	require.Equal(t, fn+"work", attr(work[1], "stepwise.task.resource").AsString())
	require.Equal(t, trace.SpanKindClient, work[1].SpanKind)
	require.Equal(t, "work", attr(work[1], "faas.invoked_name").AsString())
	require.Equal(t, "aws", attr(work[1], "faas.invoked_provider").AsString())

	// The runner was given each attempt's own span.
	b.runner.mu.Lock()
	defer b.runner.mu.Unlock()
	require.Equal(t, []string{tracing.TraceParent(sc(work[0])), tracing.TraceParent(sc(work[1]))}, b.runner.parents["Work"])
	for _, s := range spans {
		if s.Name == fn+"inner" {
			require.Equal(t, []string{tracing.TraceParent(sc(s))}, b.runner.parents["Inner"])
		}
	}
}

// A state machine without tracing enabled is not traced, its tasks get no
// traceparent; --trace-all traces it.
func TestTracingConfiguration(t *testing.T) {
	b := setup(t, false)
	smArn := b.create(t, "plain", child, false)
	require.Equal(t, "SUCCEEDED", b.run(t, smArn, `{}`).Status)
	require.NoError(t, b.tracer.Flush(b.ctx))
	require.Empty(t, b.exp.GetSpans())
	require.Equal(t, []string{""}, b.runner.parents["Inner"])

	all := setup(t, true)
	smArn = all.create(t, "plain", child, false)
	require.Equal(t, "SUCCEEDED", all.run(t, smArn, `{}`).Status)
	testwait.Until(t, func() bool { require.NoError(t, all.tracer.Flush(all.ctx)); return len(all.exp.GetSpans()) == 3 }, 10*time.Second, 10*time.Millisecond)
	require.NotEmpty(t, all.runner.parents["Inner"][0])
}

func TestParseHeader(t *testing.T) {
	sc, ok := tracing.ParseHeader("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
	require.True(t, ok)
	require.Equal(t, "0af7651916cd43dd8448eb211c80319c", sc.TraceID().String())
	require.Equal(t, "b7ad6b7169203331", sc.SpanID().String())
	x, ok := tracing.ParseHeader(tracing.XRayHeader(sc))
	require.True(t, ok)
	require.Equal(t, sc.TraceID(), x.TraceID())
	require.Equal(t, sc.SpanID(), x.SpanID())
	require.Equal(t, "Root=1-0af76519-16cd43dd8448eb211c80319c;Parent=b7ad6b7169203331;Sampled=1", tracing.XRayHeader(sc))
	for _, bad := range []string{"", "00-xyz-b7ad6b7169203331-01", "Root=2-1-2", "Parent=b7ad6b7169203331"} {
		_, ok := tracing.ParseHeader(bad)
		require.False(t, ok, bad)
	}
	// Without a header, the trace is the ARN's, the same every time.
	a := tracing.Parent("arn:aws:states:us-east-1:1:execution:m:e", "")
	require.Equal(t, a.TraceID(), tracing.Parent("arn:aws:states:us-east-1:1:execution:m:e", "").TraceID())
	require.NotEqual(t, a.TraceID(), tracing.Parent("arn:aws:states:us-east-1:1:execution:m:f", "").TraceID())
}

// A distributed Map's map run is a span under its Map state; each child
// execution is a trace of its own whose root links to the map run's span.
func TestMapRunLinks(t *testing.T) {
	// Traced by --trace-all, or by the state machine's own tracing
	// configuration: its children are traced as it is.
	for _, all := range []bool{true, false} {
		t.Run(fmt.Sprintf("all=%v", all), func(t *testing.T) { mapRunLinks(t, all) })
	}
}

func mapRunLinks(t *testing.T, all bool) {
	b := setup(t, all)
	smArn := b.create(t, "dist", `{"StartAt":"Fan","States":{"Fan":{"Type":"Map","ItemsPath":"$.items",
	 "ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"One","States":{"One":{"Type":"Pass","End":true}}},
	 "End":true}}}`, !all)
	d := b.run(t, smArn, `{"items":[1,2,3]}`)
	require.Equal(t, "SUCCEEDED", d.Status, "%+v", d)
	var run tracetest.SpanStub
	var children []tracetest.SpanStub
	testwait.Until(t, func() bool {
		require.NoError(t, b.tracer.Flush(b.ctx))
		children = children[:0]
		for _, s := range b.exp.GetSpans() {
			switch {
			case s.Name == "Map run":
				run = s
			case len(s.Links) > 0:
				children = append(children, s)
			}
		}
		return run.Name != "" && len(children) == 3
	}, 10*time.Second, 10*time.Millisecond)
	require.NotEmpty(t, attr(run, "stepwise.map_run.arn").AsString())
	for _, c := range children {
		require.Equal(t, run.SpanContext.SpanID(), c.Links[0].SpanContext.SpanID())
		require.Equal(t, run.SpanContext.TraceID(), c.Links[0].SpanContext.TraceID())
		require.NotEqual(t, run.SpanContext.TraceID(), c.SpanContext.TraceID(), "a child execution is a trace of its own")
		require.False(t, c.Parent.IsValid())
	}
}

// With a ratio, an execution is traced whole or not at all, by its trace
// id, and an untraced one's tasks get no traceparent.
func TestSampledByTraceID(t *testing.T) {
	b := setupRatio(t, true, 0.5)
	smArn := b.create(t, "sampled", child, false)
	traced := map[string]bool{}
	for range 16 {
		d := b.run(t, smArn, `{}`)
		require.Equal(t, "SUCCEEDED", d.Status)
		id := tracing.Parent(d.ExecutionArn, "").TraceID()
		traced[id.String()] = binary.BigEndian.Uint64(id[8:])>>1 < 1<<62
	}
	require.NoError(t, b.tracer.Flush(b.ctx))
	got := map[string]int{}
	for _, s := range b.exp.GetSpans() {
		got[s.SpanContext.TraceID().String()]++
	}
	want := map[string]int{}
	n := 0
	for id, on := range traced {
		if on {
			want[id] = 3
			n++
		}
	}
	require.Equal(t, want, got)
	require.Greater(t, n, 0)
	require.Less(t, n, 16)
	empty := 0
	for _, tp := range b.runner.parents["Inner"] {
		if tp == "" {
			empty++
		}
	}
	require.Equal(t, 16-n, empty)
}

func TestRatioFromEnv(t *testing.T) {
	for _, c := range []struct {
		sampler, arg string
		want         float64
		err          string
	}{
		{"", "", 0, ""},
		{"always_on", "", 0, ""},
		{"traceidratio", "0.25", 0.25, ""},
		{"parentbased_traceidratio", "1", 0, ""},
		{"traceidratio", "2", 0, `OTEL_TRACES_SAMPLER_ARG "2": a ratio in (0, 1] is expected`},
		{"jaeger_remote", "", 0, `OTEL_TRACES_SAMPLER "jaeger_remote": supported are always_on, traceidratio and their parentbased_ forms`},
	} {
		t.Setenv("OTEL_TRACES_SAMPLER", c.sampler)
		t.Setenv("OTEL_TRACES_SAMPLER_ARG", c.arg)
		r, err := tracing.RatioFromEnv()
		if c.err != "" {
			require.EqualError(t, err, c.err)
			continue
		}
		require.NoError(t, err)
		require.Equal(t, c.want, r)
	}
}

// A redriven execution goes on in its trace: a Redrive span under the
// execution's, the states run again under it.
func TestRedriveContinuesTrace(t *testing.T) {
	b := setup(t, true)
	smArn := b.create(t, "redriven", `{"StartAt":"Work","States":{"Work":{"Type":"Task","Resource":"arn:aws:lambda:us-east-1:123456789012:function:work","End":true}}}`, false)
	d := b.run(t, smArn, `{}`)
	require.Equal(t, "FAILED", d.Status)
	_, err := b.svc.RedriveExecution(b.ctx, &service.RedriveExecutionInput{ExecutionArn: d.ExecutionArn})
	require.NoError(t, err)
	testwait.Until(t, func() bool {
		d, err := b.svc.DescribeExecution(b.ctx, &service.DescribeExecutionInput{ExecutionArn: d.ExecutionArn})
		require.NoError(t, err)
		require.NoError(t, b.tracer.Flush(b.ctx))
		return d.Status == "SUCCEEDED" && len(b.exp.GetSpans()) == 6
	}, 10*time.Second, 10*time.Millisecond)
	byName := map[string][]tracetest.SpanStub{}
	for _, s := range b.exp.GetSpans() {
		byName[s.Name] = append(byName[s.Name], s)
		require.Equal(t, tracing.Parent(d.ExecutionArn, "").TraceID(), sc(s).TraceID())
	}
	root, redrive := byName["redriven"][0], byName["Redrive"][0]
	require.Equal(t, "FAILED", attr(root, "stepwise.execution.status").AsString())
	require.Equal(t, root.SpanContext.SpanID(), redrive.Parent.SpanID())
	require.Len(t, byName["Work"], 2)
	parents := []trace.SpanID{byName["Work"][0].Parent.SpanID(), byName["Work"][1].Parent.SpanID()}
	require.ElementsMatch(t, []trace.SpanID{root.SpanContext.SpanID(), redrive.SpanContext.SpanID()}, parents)
}
