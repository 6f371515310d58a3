package deploy

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/scheduler"
)

const smArn = "arn:aws:states:us-east-1:123456789012:stateMachine:nightly"

const schedules = `
Parameters:
  Every: {Type: String, Default: rate(1 hour)}
  Team: {Type: String, Default: night}
  Name: {Type: String, Default: nightly-run}
  Retries: {Type: Number, Default: 2}
Resources:
  Group:
    Type: AWS::Scheduler::ScheduleGroup
    Properties:
      Tags: [{Key: team, Value: !Ref Team}]
  Run:
    Type: AWS::Scheduler::Schedule
    Properties:
      Name: !Ref Name
      GroupName: !Ref Group
      ScheduleExpression: !Ref Every
      FlexibleTimeWindow: {Mode: "OFF"}
      StartDate: "2030-01-01T00:00:00Z"
      Target:
        Arn: ` + smArn + `
        RoleArn: arn:aws:iam::123456789012:role/scheduler
        Input: '{"job": "nightly"}'
        RetryPolicy: {MaximumRetryAttempts: !Ref Retries}
Outputs:
  Group: {Value: !Ref Group}
  GroupArn: {Value: !GetAtt Group.Arn}
  GroupState: {Value: !GetAtt Group.State}
  Run: {Value: !Ref Run}
  RunArn: {Value: !GetAtt Run.Arn}
`

func (b *testBed) schedule(t *testing.T, group, name string) *scheduler.Schedule {
	t.Helper()
	s, err := b.d.Scheduler.GetSchedule(context.Background(), group, name)
	require.NoError(t, err)
	return s
}

func TestSchedulesCreatedUnchangedUpdatedReplacedDeleted(t *testing.T) {
	b := newTestBed(t)
	ctx := context.Background()
	sched := b.d.Scheduler

	r, err := b.deploy(t, schedules, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"Group created", "Run created"}, actions(r))
	require.Equal(t, map[string]string{
		"Group":      "app-Group",
		"GroupArn":   "arn:aws:scheduler:us-east-1:123456789012:schedule-group/app-Group",
		"GroupState": "ACTIVE",
		"Run":        "nightly-run",
		"RunArn":     "arn:aws:scheduler:us-east-1:123456789012:schedule/app-Group/nightly-run",
	}, outputs(r))
	s := b.schedule(t, "app-Group", "nightly-run")
	require.Equal(t, "rate(1 hour)", s.ScheduleExpression)
	require.Equal(t, smArn, s.Target.Arn)
	require.Equal(t, `{"job": "nightly"}`, *s.Target.Input)
	require.Equal(t, 2, *s.Target.RetryPolicy.MaximumRetryAttempts, "a number from a parameter, given as a string")
	require.Equal(t, "2030-01-01T00:00:00Z", s.StartDate.Format("2006-01-02T15:04:05Z07:00"))
	tags, err := sched.ListTagsForResource(ctx, outputs(r)["GroupArn"])
	require.NoError(t, err)
	require.Equal(t, []scheduler.Tag{{Key: "team", Value: "night"}}, tags)

	puts := b.records.puts
	r, err = b.deploy(t, schedules, nil)
	require.NoError(t, err)
	require.False(t, r.Changed(), "%v", actions(r))
	require.Equal(t, puts, b.records.puts)

	// A new expression and new tags: both updated in place.
	r, err = b.deploy(t, schedules, map[string]string{"Every": "rate(5 minutes)", "Team": "day"})
	require.NoError(t, err)
	require.Equal(t, []string{"Group updated", "Run updated"}, actions(r))
	require.Equal(t, "rate(5 minutes)", b.schedule(t, "app-Group", "nightly-run").ScheduleExpression)
	tags, err = sched.ListTagsForResource(ctx, outputs(r)["GroupArn"])
	require.NoError(t, err)
	require.Equal(t, []scheduler.Tag{{Key: "team", Value: "day"}}, tags)

	// A new name: a new schedule, the old one deleted.
	params := map[string]string{"Every": "rate(5 minutes)", "Team": "day", "Name": "renamed"}
	r, err = b.deploy(t, schedules, params)
	require.NoError(t, err)
	require.Equal(t, []string{"Group unchanged", "Run replaced"}, actions(r))
	b.schedule(t, "app-Group", "renamed")
	_, err = sched.GetSchedule(ctx, "app-Group", "nightly-run")
	require.ErrorContains(t, err, "ResourceNotFoundException")

	// Deleted by hand: made again.
	require.NoError(t, sched.DeleteSchedule(ctx, "app-Group", "renamed"))
	r, err = b.deploy(t, schedules, params)
	require.NoError(t, err)
	require.Equal(t, []string{"Group unchanged", "Run created"}, actions(r))

	// The stack deleted: the schedule, then its group.
	r, err = b.d.Delete(ctx, "app")
	require.NoError(t, err)
	require.Equal(t, []string{"Run deleted", "Group deleted"}, actions(r))
	_, err = sched.GetScheduleGroup(ctx, "app-Group")
	require.ErrorContains(t, err, "ResourceNotFoundException")
}

func TestScheduleErrors(t *testing.T) {
	b := newTestBed(t)
	_, err := b.deploy(t, "Resources:\n  S: {Type: AWS::Scheduler::Schedule, Properties: {ScheduleExpression: rate(1 hour), Every: 5}}\n", nil)
	require.ErrorContains(t, err, `resource S (AWS::Scheduler::Schedule): Properties: unknown field "Every"`)
	_, err = b.deploy(t, "Resources:\n  S: {Type: AWS::Scheduler::Schedule, Properties: {ScheduleExpression: rate(1 hour), FlexibleTimeWindow: {Mode: \"OFF\"}}}\n", nil)
	require.ErrorContains(t, err, "resource S (AWS::Scheduler::Schedule): ValidationException: 1 validation error detected: Value null at 'target' failed to satisfy constraint: Member must not be null")
	b.d.Scheduler = nil
	_, err = b.deploy(t, schedules, nil)
	require.ErrorContains(t, err, "resource Group (AWS::Scheduler::ScheduleGroup): this server has no scheduler to run schedules on")
}

// eventsRun is a deploy of stack "app" after prev, for calling the SAM
// events' hook as the state machine's kind does.
func (b *testBed) eventsRun(prev *stackRecord) *run {
	return &run{d: b.d, opts: Options{StackName: "app"}, prev: prev,
		rec:    &stackRecord{Name: "app", Resources: map[string]*Record{}},
		report: &Report{Stack: "app", Changes: []Change{}}}
}

func eventsMachine(events map[string]any) *resource {
	return &resource{ID: "Machine", Type: "AWS::Serverless::StateMachine", Props: map[string]any{"Events": events}}
}

func TestSAMScheduleEventsBecomeSchedules(t *testing.T) {
	b := newTestBed(t)
	ctx := context.Background()
	sched := b.d.Scheduler
	events := map[string]any{
		"Nightly": map[string]any{"Type": "Schedule", "Properties": map[string]any{
			"Schedule": "cron(0 2 * * ? *)", "Input": `{"mode": "full"}`, "Enabled": false, "Description": "the nightly run",
			"RetryPolicy": map[string]any{"MaximumRetryAttempts": 1},
		}},
		"Hourly": map[string]any{"Type": "ScheduleV2", "Properties": map[string]any{
			"ScheduleExpression": "rate(1 hour)", "ScheduleExpressionTimezone": "Europe/Paris",
			"FlexibleTimeWindow": map[string]any{"Mode": "FLEXIBLE", "MaximumWindowInMinutes": 5},
			"RoleArn":            "arn:aws:iam::123456789012:role/own", "Input": `{"mode": "delta"}`,
			"DeadLetterConfig": map[string]any{"Arn": "arn:aws:sqs:us-east-1:123456789012:dlq"},
		}},
		"Other": map[string]any{"Type": "NoSuchSource", "Properties": map[string]any{"Path": "/"}},
	}
	x := b.eventsRun(nil)
	_, err := applySAMEvents(ctx, x, eventsMachine(events), smArn, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"MachineHourly created", "MachineNightly created"}, actions(x.report))
	require.Equal(t, []string{"Machine (AWS::Serverless::StateMachine): event Other of type NoSuchSource is not delivered here"}, x.report.Warnings)

	// SAM's names: a ScheduleV2's is its logical id; a Schedule (a rule
	// in SAM) gets one as a resource without a name does.
	hourly := b.schedule(t, "default", "MachineHourly")
	require.Equal(t, smArn, hourly.Target.Arn)
	require.Equal(t, "arn:aws:iam::123456789012:role/own", hourly.Target.RoleArn)
	require.Equal(t, `{"mode": "delta"}`, *hourly.Target.Input)
	require.Equal(t, "Europe/Paris", hourly.ScheduleExpressionTimezone)
	require.Equal(t, "FLEXIBLE", hourly.FlexibleTimeWindow.Mode)
	require.Equal(t, "arn:aws:sqs:us-east-1:123456789012:dlq", *hourly.Target.DeadLetterConfig.Arn)
	require.Equal(t, "ENABLED", hourly.State)
	nightly := b.schedule(t, "default", "app-MachineNightly")
	require.Equal(t, "DISABLED", nightly.State, "Enabled: false")
	require.Equal(t, "cron(0 2 * * ? *)", nightly.ScheduleExpression)
	require.Equal(t, "the nightly run", *nightly.Description)
	require.Equal(t, 1, *nightly.Target.RetryPolicy.MaximumRetryAttempts)
	require.Equal(t, "arn:aws:iam::123456789012:role/app-MachineNightlyRole", nightly.Target.RoleArn)
	require.Equal(t, "OFF", nightly.FlexibleTimeWindow.Mode)
	require.Equal(t, scheduleType, x.rec.Resources["MachineNightly"].Type)

	// The next deploy finds them in the stack's record: unchanged.
	prev := x.rec
	x = b.eventsRun(prev)
	_, err = applySAMEvents(ctx, x, eventsMachine(events), smArn, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"MachineHourly unchanged", "MachineNightly unchanged"}, actions(x.report))

	// An event changed, another gone: updated, and deleted with what
	// left the template.
	events["Nightly"].(map[string]any)["Properties"].(map[string]any)["Enabled"] = true
	delete(events, "Hourly")
	prev = x.rec
	x = b.eventsRun(prev)
	x.stack = nil
	_, err = applySAMEvents(ctx, x, eventsMachine(events), smArn, nil)
	require.NoError(t, err)
	require.NoError(t, x.removeGone(ctx))
	require.Equal(t, []string{"MachineNightly updated", "MachineHourly deleted"}, actions(x.report))
	require.Equal(t, "ENABLED", b.schedule(t, "default", "app-MachineNightly").State)
	_, err = sched.GetSchedule(ctx, "default", "MachineHourly")
	require.ErrorContains(t, err, "ResourceNotFoundException")
	require.NoError(t, removeSAMEvents(ctx, x, "Machine", nil))
}

func TestSAMScheduleEventErrors(t *testing.T) {
	b := newTestBed(t)
	ctx := context.Background()
	for _, c := range []struct {
		event map[string]any
		want  string
	}{
		{map[string]any{"Type": "Schedule", "Properties": map[string]any{}}, "Properties.Events.E.Properties.Schedule: a Schedule event needs its Schedule"},
		{map[string]any{"Type": "ScheduleV2", "Properties": map[string]any{"ScheduleExpression": "rate(1 hour)", "OmitName": true, "Name": "n"}}, "Properties.Events.E.Properties.Name: Name cannot be set when OmitName is True"},
		{map[string]any{"Type": "ScheduleV2", "Properties": map[string]any{"ScheduleExpression": "every day"}}, "Properties.Events, the schedule MachineE: ValidationException"},
		{map[string]any{"Type": "Schedule", "Properties": map[string]any{"Schedule": "rate(1 hour)", "DeadLetterConfig": map[string]any{"Type": "SQS"}}}, "Properties.Events.E.Properties.DeadLetterConfig.Arn: a dead-letter queue is given by its Arn here"},
	} {
		_, err := applySAMEvents(ctx, b.eventsRun(nil), eventsMachine(map[string]any{"E": c.event}), smArn, nil)
		require.Error(t, err)
		require.True(t, strings.HasPrefix(err.Error(), c.want), "%v\nwant %s", err, c.want)
	}
}

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
