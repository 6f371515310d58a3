package deploy

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

const fnArn = "arn:aws:lambda:us-east-1:123456789012:function:report"

const samFunctionScheduled = `
Transform: AWS::Serverless-2016-10-31
Resources:
  Report:
    Type: AWS::Serverless::Function
    Properties:
      FunctionName: report
      Runtime: python3.12
      Handler: index.handler
      InlineCode: |
        def handler(event, context):
            return event
      Events:
        Nightly: {Type: Schedule, Properties: {Schedule: rate(1 day), Input: '{"mode": "full"}'}}
        Hourly: {Type: ScheduleV2, Properties: {ScheduleExpression: rate(1 hour), State: DISABLED}}
`

// TestSAMFunctionScheduleEvents: a function's Schedule and ScheduleV2
// events become schedules targeting it (not wires), deleted with it.
func TestSAMFunctionScheduleEvents(t *testing.T) {
	b := newTestBed(t)
	ctx := context.Background()
	r, err := b.deploy(t, samFunctionScheduled, nil)
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"Report created", "ReportHourly created", "ReportNightly created"}, actions(r))
	for _, w := range r.Warnings {
		require.NotContains(t, w, "is not delivered here")
	}
	nightly := b.schedule(t, "default", "app-ReportNightly")
	require.Equal(t, fnArn, nightly.Target.Arn)
	require.Equal(t, `{"mode": "full"}`, *nightly.Target.Input)
	hourly := b.schedule(t, "default", "ReportHourly")
	require.Equal(t, fnArn, hourly.Target.Arn)
	require.Equal(t, "DISABLED", hourly.State)

	r, err = b.deploy(t, samFunctionScheduled, nil)
	require.NoError(t, err)
	require.False(t, r.Changed(), "%v", actions(r))

	_, err = b.d.Delete(ctx, "app")
	require.NoError(t, err)
	_, err = b.d.Scheduler.GetSchedule(ctx, "default", "app-ReportNightly")
	require.ErrorContains(t, err, "ResourceNotFoundException")
}

// TestSchedulesOfOtherTargetsDeploy: an AWS::Scheduler::Schedule
// targeting a function (enabled or not) deploys; one whose target is not
// reached here deploys too, with a warning.
func TestSchedulesOfOtherTargetsDeploy(t *testing.T) {
	b := newTestBed(t)
	const tmpl = `
Resources:
  Enabled:
    Type: AWS::Scheduler::Schedule
    Properties:
      ScheduleExpression: rate(1 hour)
      FlexibleTimeWindow: {Mode: "OFF"}
      Target: {Arn: ` + fnArn + `, RoleArn: arn:aws:iam::123456789012:role/r, Input: '{"a": 1}'}
  Disabled:
    Type: AWS::Scheduler::Schedule
    Properties:
      State: DISABLED
      ScheduleExpression: rate(1 hour)
      FlexibleTimeWindow: {Mode: "OFF"}
      Target: {Arn: ` + fnArn + `, RoleArn: arn:aws:iam::123456789012:role/r}
  Ec2:
    Type: AWS::Scheduler::Schedule
    Properties:
      ScheduleExpression: rate(1 hour)
      FlexibleTimeWindow: {Mode: "OFF"}
      Target: {Arn: "arn:aws:scheduler:::aws-sdk:ec2:stopInstances", RoleArn: arn:aws:iam::123456789012:role/r, Input: '{"InstanceIds": ["i-1"]}'}
`
	r, err := b.deploy(t, tmpl, nil)
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"Enabled created", "Disabled created", "Ec2 created"}, actions(r))
	require.Equal(t, fnArn, b.schedule(t, "default", "app-Enabled").Target.Arn)
	require.Equal(t, "DISABLED", b.schedule(t, "default", "app-Disabled").State)
	require.Contains(t, r.Warnings, "Ec2 (AWS::Scheduler::Schedule): the target arn:aws:scheduler:::aws-sdk:ec2:stopInstances is not reached here: "+
		"Stepwise calls the universal targets of lambda, sfn, sns, sqs only; the schedule's slots are skipped")
}

// TestScheduledRule: an AWS::Events::Rule with a ScheduleExpression
// becomes a schedule per target, the target's Input as its input, the
// Scheduled Event without one; a rule of an EventPattern is not handled.
func TestScheduledRule(t *testing.T) {
	b := newTestBed(t)
	ctx := context.Background()
	x := b.eventsRun(nil)
	rule := &resource{ID: "Nightly", Type: "AWS::Events::Rule", Props: map[string]any{
		"ScheduleExpression": "cron(0 2 * * ? *)",
		"Targets": []any{
			map[string]any{"Id": "jobs", "Arn": smArn, "Input": `{"mode": "full"}`, "RetryPolicy": map[string]any{"MaximumRetryAttempts": 3}},
			map[string]any{"Id": "report-fn", "Arn": fnArn},
		}}}
	handled, err := x.scheduledRule(ctx, rule)
	require.NoError(t, err)
	require.True(t, handled)
	require.Equal(t, []string{"Nightlyjobs created", "Nightlyreportfn created"}, actions(x.report))

	jobs := b.schedule(t, "default", "app-Nightlyjobs")
	require.Equal(t, smArn, jobs.Target.Arn)
	require.Equal(t, "cron(0 2 * * ? *)", jobs.ScheduleExpression)
	require.Equal(t, `{"mode": "full"}`, *jobs.Target.Input)
	require.Equal(t, 3, *jobs.Target.RetryPolicy.MaximumRetryAttempts)
	fn := b.schedule(t, "default", "app-Nightlyreportfn")
	require.Equal(t, fnArn, fn.Target.Arn)
	var ev map[string]any
	require.NoError(t, json.Unmarshal([]byte(*fn.Target.Input), &ev))
	require.Equal(t, "Scheduled Event", ev["detail-type"])
	require.Equal(t, "<aws.scheduler.scheduled-time>", ev["time"])
	require.Equal(t, []any{"arn:aws:events:us-east-1:123456789012:rule/app-Nightly"}, ev["resources"])

	pattern := &resource{ID: "OnEvent", Type: "AWS::Events::Rule", Props: map[string]any{
		"EventPattern": map[string]any{"source": []any{"app"}},
		"Targets":      []any{map[string]any{"Id": "jobs", "Arn": smArn}}}}
	handled, err = x.scheduledRule(ctx, pattern)
	require.NoError(t, err)
	require.False(t, handled)
}
