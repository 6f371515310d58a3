package metrics_test

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"stepwise/engine"
	"stepwise/history"
	"stepwise/internal/warnrule"
	"stepwise/interp"
	"stepwise/observe/metrics"
	"stepwise/store"
)

const (
	smArn  = "arn:aws:states:us-east-1:123456789012:stateMachine:m"
	xArn   = "arn:aws:states:us-east-1:123456789012:execution:m:x"
	actArn = "arn:aws:states:us-east-1:123456789012:activity:work"
)

var t0 = time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)

func ev(id, prev int64, typ history.EventType, at time.Duration) *history.Event {
	return &history.Event{ID: id, PreviousEventID: prev, Type: typ, Timestamp: t0.Add(at)}
}

func step(status, previous history.ExecutionStatus, task *interp.TaskRequest, events ...*history.Event) *engine.CommittedStep {
	return &engine.CommittedStep{Execution: &store.Execution{Arn: xArn, StateMachineArn: smArn, Status: status, StartDate: t0},
		Previous: previous, Events: events, Task: task}
}

// An activity is counted by its ARN from its scheduled event on: its
// start and end name no resource, and are traced back through
// previousEventId; after a restart the step's task names it.
func TestActivityCountsAndTimes(t *testing.T) {
	m := metrics.New()
	scheduled := ev(3, 2, history.EventActivityScheduled, time.Second)
	scheduled.ActivityScheduledEventDetails = &history.ActivityScheduledEventDetails{Resource: actArn}
	m.StepCommitted(step("RUNNING", "", nil, ev(1, 0, history.EventExecutionStarted, 0), scheduled))
	m.StepCommitted(step("RUNNING", "RUNNING", nil, ev(4, 3, history.EventActivityStarted, 3*time.Second)))
	m.StepCommitted(step("SUCCEEDED", "RUNNING", nil, ev(5, 4, history.EventActivitySucceeded, 10*time.Second),
		ev(6, 5, history.EventExecutionSucceeded, 11*time.Second)))

	reg := m.Registry()
	for name, want := range map[string]float64{
		"stepwise_activities_scheduled_total": 1, "stepwise_activities_started_total": 1, "stepwise_activities_succeeded_total": 1,
	} {
		require.Equal(t, want, value(t, reg, name, "activity_arn", actArn), name)
	}
	require.Equal(t, 1, testutil.CollectAndCount(reg, "stepwise_activity_run_time_seconds"))
	require.Equal(t, 1.0, value(t, reg, "stepwise_executions_started_total", "state_machine_arn", smArn))
	require.Equal(t, 1.0, value(t, reg, "stepwise_executions_succeeded_total", "state_machine_arn", smArn))

	// A process that did not see the scheduling names the activity from
	// the step's task.
	m2 := metrics.New()
	m2.StepCommitted(step("RUNNING", "RUNNING", &interp.TaskRequest{Resource: actArn}, ev(9, 8, history.EventActivitySucceeded, time.Second)))
	require.Equal(t, 1.0, value(t, m2.Registry(), "stepwise_activities_succeeded_total", "activity_arn", actArn))
}

// A service integration's task events name their resource.
func TestServiceIntegrationCounts(t *testing.T) {
	m := metrics.New()
	const res = "arn:aws:states:::lambda:invoke"
	scheduled := ev(3, 2, history.EventTaskScheduled, 0)
	scheduled.TaskScheduledEventDetails = &history.TaskScheduledEventDetails{Resource: res}
	started := ev(4, 3, history.EventTaskStarted, time.Millisecond)
	started.TaskStartedEventDetails = &history.TaskEventDetails{Resource: res}
	failed := ev(5, 4, history.EventTaskFailed, 2*time.Millisecond)
	failed.TaskFailedEventDetails = &history.TaskEventDetails{Resource: res}
	m.StepCommitted(step("RUNNING", "RUNNING", nil, scheduled, started, failed))
	reg := m.Registry()
	require.Equal(t, 1.0, value(t, reg, "stepwise_service_integrations_scheduled_total", "resource", res))
	require.Equal(t, 1.0, value(t, reg, "stepwise_service_integrations_failed_total", "resource", res))
	require.Zero(t, value(t, reg, "stepwise_service_integrations_succeeded_total", "resource", res))
}

// value reads one labelled series of a counter (0 when absent).
func value(t *testing.T, reg *prometheus.Registry, name, label, want string) float64 {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.Metric {
			for _, l := range m.Label {
				if l.GetName() == label && l.GetValue() == want {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

// A STANDARD execution's billable state transitions are counted, with
// what they would cost on AWS at the server's price: two states entered
// and a task retried make three; an EXPRESS step counts none.
func TestStateTransitionsAndCost(t *testing.T) {
	m := metrics.New()
	m.SetPrices(history.Prices{Transition: 0.5})
	entered := ev(2, 1, history.StateEnteredType("Task"), 0)
	scheduled := ev(3, 2, history.EventTaskScheduled, 0)
	retried := ev(4, 3, history.EventTaskScheduled, time.Second) // not right after its state was entered
	pass := ev(5, 4, history.StateEnteredType("Pass"), time.Second)
	for _, e := range []*history.Event{scheduled, retried} {
		e.TaskScheduledEventDetails = &history.TaskScheduledEventDetails{Resource: "arn:aws:states:::lambda:invoke"}
	}
	m.StepCommitted(step("RUNNING", "", nil, ev(1, 0, history.EventExecutionStarted, 0), entered, scheduled, retried, pass))
	express := step("RUNNING", "", nil, ev(1, 0, history.EventExecutionStarted, 0), ev(2, 1, history.StateEnteredType("Pass"), 0))
	express.Express = true
	m.StepCommitted(express)
	reg := m.Registry()
	require.Equal(t, 3.0, value(t, reg, "stepwise_state_transitions_total", "state_machine_arn", smArn))
	require.Equal(t, 1.5, value(t, reg, "stepwise_estimated_aws_cost_usd_total", "state_machine_arn", smArn))
}

// A Task whose result meets its state's warning rule, kept with the
// execution, is counted by state machine and state; one that does not,
// or a state without a rule, is not.
func TestTaskWarnings(t *testing.T) {
	m := metrics.New()
	rules, err := warnrule.FromTags(map[string]string{"stepwise:warning/Job": "rc:1-8"})
	require.NoError(t, err)
	policies, err := warnrule.Embed("", rules)
	require.NoError(t, err)
	succeeded := func(id int64, state, output string) *engine.CommittedStep {
		e := ev(id, id-1, history.EventTaskSucceeded, time.Second)
		e.TaskSucceededEventDetails = &history.TaskEventDetails{Output: &output}
		s := step("RUNNING", "RUNNING", &interp.TaskRequest{StateName: state, Resource: "arn:aws:states:::lambda:invoke"}, e)
		s.Execution.Policies = policies
		return s
	}
	m.StepCommitted(succeeded(5, "Job", `{"Payload": {"rc": 4}}`))
	m.StepCommitted(succeeded(9, "Job", `{"rc": 8}`))
	m.StepCommitted(succeeded(13, "Job", `{"rc": 9}`))
	m.StepCommitted(succeeded(17, "Other", `{"rc": 4}`))
	reg := m.Registry()
	require.Equal(t, 2.0, value(t, reg, "stepwise_task_warnings_total", "state", "Job"))
	require.Equal(t, 1, testutil.CollectAndCount(reg, "stepwise_task_warnings_total"), "one series: {%s, Job}", smArn)
	require.Equal(t, 2.0, value(t, reg, "stepwise_task_warnings_total", "state_machine_arn", smArn))
}

// Each state machine, and each kind of task with its resource, counts on
// its own series, however many steps of others came before.
func TestCountsKeptApartByLabel(t *testing.T) {
	t.Parallel()
	m := metrics.New()
	const other = "arn:aws:states:us-east-1:123456789012:stateMachine:other"
	run := func(sm, x string, typ history.EventType, n int) {
		for i := range n {
			id := int64(10 * (i + 1))
			scheduled := ev(id, id-1, typ, 0)
			switch typ {
			case history.EventActivityScheduled:
				scheduled.ActivityScheduledEventDetails = &history.ActivityScheduledEventDetails{Resource: actArn}
			case history.EventLambdaFunctionScheduled:
				scheduled.LambdaFunctionScheduledEventDetails = &history.LambdaFunctionScheduledEventDetails{Resource: actArn}
			}
			s := step("RUNNING", "", nil, ev(1, 0, history.EventExecutionStarted, 0), scheduled)
			s.Execution.Arn, s.Execution.StateMachineArn = x, sm
			m.StepCommitted(s)
		}
	}
	run(smArn, xArn, history.EventActivityScheduled, 3)
	run(other, xArn+"2", history.EventLambdaFunctionScheduled, 2)
	run(smArn, xArn+"3", history.EventActivityScheduled, 1)
	reg := m.Registry()
	require.Equal(t, 4.0, value(t, reg, "stepwise_executions_started_total", "state_machine_arn", smArn))
	require.Equal(t, 2.0, value(t, reg, "stepwise_executions_started_total", "state_machine_arn", other))
	require.Equal(t, 4.0, value(t, reg, "stepwise_activities_scheduled_total", "activity_arn", actArn))
	require.Equal(t, 2.0, value(t, reg, "stepwise_lambda_functions_scheduled_total", "lambda_function_arn", actArn))
}

// BenchmarkStepCommitted is the observer's cost of an activity task's
// steps: its scheduling, its hand-out and its result.
func BenchmarkStepCommitted(b *testing.B) {
	m := metrics.New()
	scheduled := ev(3, 2, history.EventActivityScheduled, time.Second)
	scheduled.ActivityScheduledEventDetails = &history.ActivityScheduledEventDetails{Resource: actArn}
	entered := ev(2, 1, history.StateEnteredType("Task"), 0)
	steps := []*engine.CommittedStep{
		step("RUNNING", "RUNNING", nil, entered, scheduled),
		step("RUNNING", "RUNNING", &interp.TaskRequest{Resource: actArn}, ev(4, 3, history.EventActivityStarted, 2*time.Second)),
		step("RUNNING", "RUNNING", &interp.TaskRequest{Resource: actArn}, ev(5, 4, history.EventActivitySucceeded, 3*time.Second)),
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, s := range steps {
			m.StepCommitted(s)
		}
	}
}
