package deploy

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const samScheduled = `
Transform: AWS::Serverless-2016-10-31
Parameters:
  Every: {Type: String, Default: rate(1 day)}
Resources:
  Jobs:
    Type: AWS::Serverless::StateMachine
    Properties:
      Name: jobs
      Definition: {StartAt: Done, States: {Done: {Type: Succeed}}}
      Events:
        Nightly: {Type: Schedule, Properties: {Schedule: !Ref Every, Input: '{"mode": "full"}'}}
        Hourly: {Type: ScheduleV2, Properties: {ScheduleExpression: rate(1 hour)}}
`

func TestSAMStateMachineEventsDeployedAsSchedules(t *testing.T) {
	b := newTestBed(t)
	ctx := context.Background()
	sched := b.d.Scheduler
	const jobs = "arn:aws:states:us-east-1:123456789012:stateMachine:jobs"

	r, err := b.deploy(t, samScheduled, nil)
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"JobsHourly created", "JobsNightly created", "Jobs created"}, actions(r))
	nightly := b.schedule(t, "default", "app-JobsNightly")
	require.Equal(t, jobs, nightly.Target.Arn)
	require.Equal(t, `{"mode": "full"}`, *nightly.Target.Input)
	require.Equal(t, jobs, b.schedule(t, "default", "JobsHourly").Target.Arn)

	puts := b.records.puts
	r, err = b.deploy(t, samScheduled, nil)
	require.NoError(t, err)
	require.False(t, r.Changed(), "%v", actions(r))
	require.Equal(t, puts, b.records.puts)

	r, err = b.deploy(t, samScheduled, map[string]string{"Every": "rate(2 days)"})
	require.NoError(t, err)
	require.Contains(t, actions(r), "JobsNightly updated")
	require.Equal(t, "rate(2 days)", b.schedule(t, "default", "app-JobsNightly").ScheduleExpression)

	// An event gone from the template: its schedule is deleted.
	r, err = b.deploy(t, strings.Replace(samScheduled, "        Hourly: {Type: ScheduleV2, Properties: {ScheduleExpression: rate(1 hour)}}\n", "", 1), map[string]string{"Every": "rate(2 days)"})
	require.NoError(t, err)
	require.Contains(t, actions(r), "JobsHourly deleted")
	_, err = sched.GetSchedule(ctx, "default", "JobsHourly")
	require.ErrorContains(t, err, "ResourceNotFoundException")

	// The stack deleted: the state machine and its schedules.
	_, err = b.d.Delete(ctx, "app")
	require.NoError(t, err)
	_, err = sched.GetSchedule(ctx, "default", "app-JobsNightly")
	require.ErrorContains(t, err, "ResourceNotFoundException")
}
