package scheduler_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	sdk "github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/aws/aws-sdk-go-v2/service/scheduler/types"
	"github.com/stretchr/testify/require"

	"stepwise/scheduler"
	"stepwise/scheduler/restjson"
	"stepwise/store"
	"stepwise/store/sqlitestore"
)

const (
	region  = "us-east-1"
	account = "123456789012"
	smArn   = "arn:aws:states:us-east-1:123456789012:stateMachine:jobnet"
	role    = "arn:aws:iam::123456789012:role/scheduler"
)

type bundle struct {
	svc    *scheduler.Service
	exec   store.Executor
	client *sdk.Client
	srv    *httptest.Server
	now    time.Time
	cfg    scheduler.Config
}

func setup(t *testing.T) *bundle {
	t.Helper()
	return setupWith(t, nil)
}

// setupWith is setup with the server's calendars.
func setupWith(t *testing.T, calendars map[string]*scheduler.Calendar) *bundle {
	t.Helper()
	return setupConfig(t, func(c *scheduler.Config) { c.Calendars = calendars })
}

// setupConfig is setup with the service's configuration set by set.
func setupConfig(t *testing.T, set func(*scheduler.Config)) *bundle {
	t.Helper()
	ctx := context.Background()
	drv, err := sqlitestore.Open(ctx, filepath.Join(t.TempDir(), "db"), sqlitestore.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { drv.Close() })
	b := &bundle{now: time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC), exec: drv.Executor()}
	b.cfg = scheduler.Config{Region: region, Account: account, Now: func() time.Time { return b.now }}
	set(&b.cfg)
	b.svc = scheduler.New(drv.Executor(), b.cfg)
	b.srv = httptest.NewServer(restjson.New(b.svc, nil))
	t.Cleanup(b.srv.Close)
	cfg, err := config.LoadDefaultConfig(ctx, config.WithRegion(region),
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", "")))
	require.NoError(t, err)
	b.client = sdk.NewFromConfig(cfg, func(o *sdk.Options) {
		o.BaseEndpoint = aws.String(b.srv.URL)
		o.RetryMaxAttempts = 1
	})
	return b
}

func createInput(name string) *sdk.CreateScheduleInput {
	return &sdk.CreateScheduleInput{
		Name:               aws.String(name),
		ScheduleExpression: aws.String("cron(0 9 * * ? *)"),
		FlexibleTimeWindow: &types.FlexibleTimeWindow{Mode: types.FlexibleTimeWindowModeOff},
		Target:             &types.Target{Arn: aws.String(smArn), RoleArn: aws.String(role), Input: aws.String(`{"a":1}`)},
	}
}

func apiCode(err error) string {
	var ae interface{ ErrorCode() string }
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

func TestScheduleLifecycle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)

	in := createInput("nightly")
	in.ScheduleExpressionTimezone = aws.String("Asia/Tokyo")
	in.Description = aws.String("the nightly jobnet")
	start := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	in.StartDate = &start
	in.ClientToken = aws.String("token-1")
	out, err := b.client.CreateSchedule(ctx, in)
	require.NoError(t, err)
	arn := "arn:aws:scheduler:us-east-1:123456789012:schedule/default/nightly"
	require.Equal(t, arn, aws.ToString(out.ScheduleArn))

	// The same ClientToken again succeeds; another one conflicts.
	_, err = b.client.CreateSchedule(ctx, in)
	require.NoError(t, err)
	in.ClientToken = aws.String("token-2")
	_, err = b.client.CreateSchedule(ctx, in)
	require.Equal(t, "ConflictException", apiCode(err))
	var conflict *types.ConflictException
	require.ErrorAs(t, err, &conflict)
	require.Equal(t, "Schedule nightly already exists.", aws.ToString(conflict.Message))

	got, err := b.client.GetSchedule(ctx, &sdk.GetScheduleInput{Name: aws.String("nightly")})
	require.NoError(t, err)
	require.Equal(t, arn, aws.ToString(got.Arn))
	require.Equal(t, "default", aws.ToString(got.GroupName))
	require.Equal(t, "cron(0 9 * * ? *)", aws.ToString(got.ScheduleExpression))
	require.Equal(t, "Asia/Tokyo", aws.ToString(got.ScheduleExpressionTimezone))
	require.Equal(t, "the nightly jobnet", aws.ToString(got.Description))
	require.Equal(t, types.ScheduleStateEnabled, got.State)
	require.Equal(t, types.ActionAfterCompletionNone, got.ActionAfterCompletion)
	require.Equal(t, start, got.StartDate.UTC())
	require.Nil(t, got.EndDate)
	require.Equal(t, b.now, got.CreationDate.UTC())
	require.Equal(t, b.now, got.LastModificationDate.UTC())
	require.Equal(t, smArn, aws.ToString(got.Target.Arn))
	require.Equal(t, `{"a":1}`, aws.ToString(got.Target.Input))
	require.Equal(t, int32(86400), aws.ToInt32(got.Target.RetryPolicy.MaximumEventAgeInSeconds))
	require.Equal(t, int32(185), aws.ToInt32(got.Target.RetryPolicy.MaximumRetryAttempts))
	require.Equal(t, types.FlexibleTimeWindowModeOff, got.FlexibleTimeWindow.Mode)

	// UpdateSchedule replaces everything.
	b.now = b.now.Add(time.Hour)
	_, err = b.client.UpdateSchedule(ctx, &sdk.UpdateScheduleInput{
		Name:               aws.String("nightly"),
		ScheduleExpression: aws.String("rate(5 minutes)"),
		State:              types.ScheduleStateDisabled,
		FlexibleTimeWindow: &types.FlexibleTimeWindow{Mode: types.FlexibleTimeWindowModeFlexible, MaximumWindowInMinutes: aws.Int32(10)},
		Target: &types.Target{Arn: aws.String(smArn), RoleArn: aws.String(role),
			RetryPolicy: &types.RetryPolicy{MaximumEventAgeInSeconds: aws.Int32(120), MaximumRetryAttempts: aws.Int32(0)}},
	})
	require.NoError(t, err)
	got, err = b.client.GetSchedule(ctx, &sdk.GetScheduleInput{Name: aws.String("nightly"), GroupName: aws.String("default")})
	require.NoError(t, err)
	require.Equal(t, "rate(5 minutes)", aws.ToString(got.ScheduleExpression))
	require.Equal(t, "UTC", aws.ToString(got.ScheduleExpressionTimezone))
	require.Nil(t, got.Description)
	require.Nil(t, got.StartDate)
	require.Equal(t, types.ScheduleStateDisabled, got.State)
	require.Equal(t, int32(10), aws.ToInt32(got.FlexibleTimeWindow.MaximumWindowInMinutes))
	require.Equal(t, int32(120), aws.ToInt32(got.Target.RetryPolicy.MaximumEventAgeInSeconds))
	require.Equal(t, int32(0), aws.ToInt32(got.Target.RetryPolicy.MaximumRetryAttempts))
	require.Equal(t, b.now.Add(-time.Hour), got.CreationDate.UTC())
	require.Equal(t, b.now, got.LastModificationDate.UTC())

	_, err = b.client.UpdateSchedule(ctx, &sdk.UpdateScheduleInput{Name: aws.String("nope"), ScheduleExpression: aws.String("rate(5 minutes)"),
		FlexibleTimeWindow: &types.FlexibleTimeWindow{Mode: types.FlexibleTimeWindowModeOff},
		Target:             &types.Target{Arn: aws.String(smArn), RoleArn: aws.String(role)}})
	var nf *types.ResourceNotFoundException
	require.ErrorAs(t, err, &nf)
	require.Equal(t, "Schedule nope does not exist.", aws.ToString(nf.Message))

	_, err = b.client.DeleteSchedule(ctx, &sdk.DeleteScheduleInput{Name: aws.String("nightly")})
	require.NoError(t, err)
	_, err = b.client.GetSchedule(ctx, &sdk.GetScheduleInput{Name: aws.String("nightly")})
	require.ErrorAs(t, err, &nf)
	_, err = b.client.DeleteSchedule(ctx, &sdk.DeleteScheduleInput{Name: aws.String("nightly")})
	require.ErrorAs(t, err, &nf)
}

func TestValidation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)

	cases := []struct {
		name   string
		modify func(in *sdk.CreateScheduleInput)
		msg    string
	}{
		{"BadExpression", func(in *sdk.CreateScheduleInput) { in.ScheduleExpression = aws.String("rate(30 seconds)") },
			"Invalid Schedule Expression rate(30 seconds)."},
		{"BadName", func(in *sdk.CreateScheduleInput) { in.Name = aws.String("a b") },
			"1 validation error detected: Value 'a b' at 'name' failed to satisfy constraint: Member must satisfy regular expression pattern: [0-9a-zA-Z-_.]+"},
		{"BadTimezone", func(in *sdk.CreateScheduleInput) { in.ScheduleExpressionTimezone = aws.String("Mars/Olympus") },
			"Invalid ScheduleExpressionTimezone Mars/Olympus."},
		{"BadWindow", func(in *sdk.CreateScheduleInput) {
			in.FlexibleTimeWindow = &types.FlexibleTimeWindow{Mode: types.FlexibleTimeWindowModeFlexible, MaximumWindowInMinutes: aws.Int32(1441)}
		}, "1 validation error detected: Value '1441' at 'flexibleTimeWindow.maximumWindowInMinutes' failed to satisfy constraint: Member must have value less than or equal to 1440 and greater than or equal to 1"},
		{"FlexibleWithoutWindow", func(in *sdk.CreateScheduleInput) {
			in.FlexibleTimeWindow = &types.FlexibleTimeWindow{Mode: types.FlexibleTimeWindowModeFlexible}
		}, "MaximumWindowInMinutes must be provided when FlexibleTimeWindow Mode is FLEXIBLE."},
		{"BadRetry", func(in *sdk.CreateScheduleInput) {
			in.Target.RetryPolicy = &types.RetryPolicy{MaximumEventAgeInSeconds: aws.Int32(59), MaximumRetryAttempts: aws.Int32(186)}
		}, "2 validation errors detected: Value '59' at 'target.retryPolicy.maximumEventAgeInSeconds' failed to satisfy constraint: Member must have value less than or equal to 86400 and greater than or equal to 60; Value '186' at 'target.retryPolicy.maximumRetryAttempts' failed to satisfy constraint: Member must have value less than or equal to 185 and greater than or equal to 0"},
		{"EndBeforeStart", func(in *sdk.CreateScheduleInput) {
			in.StartDate, in.EndDate = aws.Time(b.now.Add(time.Hour)), aws.Time(b.now)
		}, "The EndDate must be after the StartDate."},
		{"BadAction", func(in *sdk.CreateScheduleInput) { in.ActionAfterCompletion = "KEEP" },
			"1 validation error detected: Value 'KEEP' at 'actionAfterCompletion' failed to satisfy constraint: Member must satisfy enum value set: [NONE, DELETE]"},
		{"EventBridgeParametersOnQueue", func(in *sdk.CreateScheduleInput) {
			in.Target.Arn = aws.String("arn:aws:sqs:us-east-1:123456789012:q")
			in.Target.EventBridgeParameters = &types.EventBridgeParameters{DetailType: aws.String("d"), Source: aws.String("s")}
		}, "EventBridgeParameters are for an event bus target, not arn:aws:sqs:us-east-1:123456789012:q."},
		{"UniversalWithoutMachine", func(in *sdk.CreateScheduleInput) {
			in.Target.Arn, in.Target.Input = aws.String(scheduler.UniversalStartExecution), aws.String(`{"Input":"{}"}`)
		}, "The Input of the target arn:aws:scheduler:::aws-sdk:sfn:startExecution must name the state machine: StateMachineArn."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := createInput("s-" + c.name)
			c.modify(in)
			_, err := b.client.CreateSchedule(ctx, in)
			var ve *types.ValidationException
			require.ErrorAs(t, err, &ve)
			require.Equal(t, c.msg, aws.ToString(ve.Message))
		})
	}

	// A missing group.
	in := createInput("x")
	in.GroupName = aws.String("nogroup")
	_, err := b.client.CreateSchedule(ctx, in)
	var nf *types.ResourceNotFoundException
	require.ErrorAs(t, err, &nf)
	require.Equal(t, "Schedule group nogroup does not exist.", aws.ToString(nf.Message))

	// The universal target with its StartExecution request.
	in = createInput("universal")
	in.Target.Arn = aws.String(scheduler.UniversalStartExecution)
	in.Target.Input = aws.String(`{"StateMachineArn":"` + smArn + `","Name":"jobnet-<aws.scheduler.scheduled-time>","Input":"{}"}`)
	in.ScheduleExpression = aws.String("at(2026-12-01T09:00:00)")
	in.ActionAfterCompletion = types.ActionAfterCompletionDelete
	_, err = b.client.CreateSchedule(ctx, in)
	require.NoError(t, err)
}

func TestListAndGroups(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)

	_, err := b.client.CreateScheduleGroup(ctx, &sdk.CreateScheduleGroupInput{Name: aws.String("etl"),
		Tags: []types.Tag{{Key: aws.String("team"), Value: aws.String("data")}}})
	require.NoError(t, err)
	_, err = b.client.CreateScheduleGroup(ctx, &sdk.CreateScheduleGroupInput{Name: aws.String("etl")})
	var conflict *types.ConflictException
	require.ErrorAs(t, err, &conflict)

	for _, name := range []string{"a1", "a2", "b1"} {
		_, err := b.client.CreateSchedule(ctx, createInput(name))
		require.NoError(t, err)
	}
	for _, name := range []string{"a3", "c1"} {
		in := createInput(name)
		in.GroupName = aws.String("etl")
		in.State = types.ScheduleStateDisabled
		_, err := b.client.CreateSchedule(ctx, in)
		require.NoError(t, err)
	}

	var names []string
	p := sdk.NewListSchedulesPaginator(b.client, &sdk.ListSchedulesInput{MaxResults: aws.Int32(2)})
	pages := 0
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		require.NoError(t, err)
		pages++
		for _, s := range page.Schedules {
			names = append(names, aws.ToString(s.GroupName)+"/"+aws.ToString(s.Name))
			require.Equal(t, smArn, aws.ToString(s.Target.Arn))
		}
	}
	require.Equal(t, []string{"default/a1", "default/a2", "default/b1", "etl/a3", "etl/c1"}, names)
	require.Equal(t, 3, pages)

	page, err := b.client.ListSchedules(ctx, &sdk.ListSchedulesInput{NamePrefix: aws.String("a"), State: types.ScheduleStateDisabled})
	require.NoError(t, err)
	require.Len(t, page.Schedules, 1)
	require.Equal(t, "a3", aws.ToString(page.Schedules[0].Name))
	require.Equal(t, "arn:aws:scheduler:us-east-1:123456789012:schedule/etl/a3", aws.ToString(page.Schedules[0].Arn))
	page, err = b.client.ListSchedules(ctx, &sdk.ListSchedulesInput{GroupName: aws.String("etl")})
	require.NoError(t, err)
	require.Len(t, page.Schedules, 2)

	groups, err := b.client.ListScheduleGroups(ctx, &sdk.ListScheduleGroupsInput{})
	require.NoError(t, err)
	require.Len(t, groups.ScheduleGroups, 2)
	require.Equal(t, "default", aws.ToString(groups.ScheduleGroups[0].Name))
	require.Equal(t, "etl", aws.ToString(groups.ScheduleGroups[1].Name))
	require.Equal(t, types.ScheduleGroupStateActive, groups.ScheduleGroups[1].State)
	g, err := b.client.GetScheduleGroup(ctx, &sdk.GetScheduleGroupInput{Name: aws.String("etl")})
	require.NoError(t, err)
	groupArn := "arn:aws:scheduler:us-east-1:123456789012:schedule-group/etl"
	require.Equal(t, groupArn, aws.ToString(g.Arn))

	// Tags, on groups only.
	tags, err := b.client.ListTagsForResource(ctx, &sdk.ListTagsForResourceInput{ResourceArn: aws.String(groupArn)})
	require.NoError(t, err)
	require.Equal(t, []types.Tag{{Key: aws.String("team"), Value: aws.String("data")}}, tags.Tags)
	_, err = b.client.TagResource(ctx, &sdk.TagResourceInput{ResourceArn: aws.String(groupArn),
		Tags: []types.Tag{{Key: aws.String("env"), Value: aws.String("prod")}}})
	require.NoError(t, err)
	_, err = b.client.UntagResource(ctx, &sdk.UntagResourceInput{ResourceArn: aws.String(groupArn), TagKeys: []string{"team"}})
	require.NoError(t, err)
	tags, err = b.client.ListTagsForResource(ctx, &sdk.ListTagsForResourceInput{ResourceArn: aws.String(groupArn)})
	require.NoError(t, err)
	require.Equal(t, []types.Tag{{Key: aws.String("env"), Value: aws.String("prod")}}, tags.Tags)
	_, err = b.client.TagResource(ctx, &sdk.TagResourceInput{ResourceArn: aws.String("arn:aws:scheduler:us-east-1:123456789012:schedule/etl/a3"),
		Tags: []types.Tag{{Key: aws.String("env"), Value: aws.String("prod")}}})
	var ve *types.ValidationException
	require.ErrorAs(t, err, &ve)

	// The default group cannot be deleted; deleting another deletes its
	// schedules.
	_, err = b.client.DeleteScheduleGroup(ctx, &sdk.DeleteScheduleGroupInput{Name: aws.String("default")})
	require.ErrorAs(t, err, &ve)
	_, err = b.client.DeleteScheduleGroup(ctx, &sdk.DeleteScheduleGroupInput{Name: aws.String("etl")})
	require.NoError(t, err)
	_, err = b.client.GetSchedule(ctx, &sdk.GetScheduleInput{Name: aws.String("a3"), GroupName: aws.String("etl")})
	var nf *types.ResourceNotFoundException
	require.ErrorAs(t, err, &nf)
	_, err = b.client.GetScheduleGroup(ctx, &sdk.GetScheduleGroupInput{Name: aws.String("etl")})
	require.ErrorAs(t, err, &nf)
	_, err = b.client.ListTagsForResource(ctx, &sdk.ListTagsForResourceInput{ResourceArn: aws.String(groupArn)})
	require.ErrorAs(t, err, &nf)
}

// A NextToken pages only the list it was given for: the same list with
// other filters, or the other list, refuses it as AWS refuses a token
// that is not its own; the SDK's paginator, which sends the same filters
// back, pages on.
func TestListTokenScope(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	_, err := b.client.CreateScheduleGroup(ctx, &sdk.CreateScheduleGroupInput{Name: aws.String("etl")})
	require.NoError(t, err)
	for _, name := range []string{"a1", "a2", "a3", "b1"} {
		_, err := b.client.CreateSchedule(ctx, createInput(name))
		require.NoError(t, err)
	}

	page, err := b.client.ListSchedules(ctx, &sdk.ListSchedulesInput{NamePrefix: aws.String("a"), MaxResults: aws.Int32(1)})
	require.NoError(t, err)
	require.NotNil(t, page.NextToken)
	token := page.NextToken
	next, err := b.client.ListSchedules(ctx, &sdk.ListSchedulesInput{NamePrefix: aws.String("a"), MaxResults: aws.Int32(2), NextToken: token})
	require.NoError(t, err)
	require.Len(t, next.Schedules, 2)
	require.Equal(t, "a2", aws.ToString(next.Schedules[0].Name))

	refused := func(err error) {
		t.Helper()
		var ve *types.ValidationException
		require.ErrorAs(t, err, &ve)
		require.Equal(t, "Invalid NextToken.", aws.ToString(ve.Message))
	}
	_, err = b.client.ListSchedules(ctx, &sdk.ListSchedulesInput{NamePrefix: aws.String("b"), NextToken: token})
	refused(err)
	_, err = b.client.ListSchedules(ctx, &sdk.ListSchedulesInput{NextToken: token})
	refused(err)
	_, err = b.client.ListSchedules(ctx, &sdk.ListSchedulesInput{NamePrefix: aws.String("a"), State: types.ScheduleStateDisabled, NextToken: token})
	refused(err)
	_, err = b.client.ListSchedules(ctx, &sdk.ListSchedulesInput{NamePrefix: aws.String("a"), GroupName: aws.String("etl"), NextToken: token})
	refused(err)
	_, err = b.client.ListScheduleGroups(ctx, &sdk.ListScheduleGroupsInput{NextToken: token})
	refused(err)
	_, err = b.client.ListSchedules(ctx, &sdk.ListSchedulesInput{NextToken: aws.String("not-a-token")})
	refused(err)

	groups, err := b.client.ListScheduleGroups(ctx, &sdk.ListScheduleGroupsInput{MaxResults: aws.Int32(1)})
	require.NoError(t, err)
	require.NotNil(t, groups.NextToken)
	_, err = b.client.ListScheduleGroups(ctx, &sdk.ListScheduleGroupsInput{NamePrefix: aws.String("e"), NextToken: groups.NextToken})
	refused(err)
	_, err = b.client.ListSchedules(ctx, &sdk.ListSchedulesInput{NextToken: groups.NextToken})
	refused(err)
	more, err := b.client.ListScheduleGroups(ctx, &sdk.ListScheduleGroupsInput{NextToken: groups.NextToken})
	require.NoError(t, err)
	require.Equal(t, "etl", aws.ToString(more.ScheduleGroups[0].Name))

	var names []string
	p := sdk.NewListSchedulesPaginator(b.client, &sdk.ListSchedulesInput{NamePrefix: aws.String("a"), MaxResults: aws.Int32(1)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		require.NoError(t, err)
		for _, s := range page.Schedules {
			names = append(names, aws.ToString(s.Name))
		}
	}
	require.Equal(t, []string{"a1", "a2", "a3"}, names)
}

// A NextToken of the form the Scheduler gave before its tokens were the
// front door's (the base64 of [group, name], of [name] for groups) still
// pages on, so that a client paging across an upgrade is not refused.
func TestListTokenOfBefore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	for _, name := range []string{"a1", "a2", "a3"} {
		_, err := b.client.CreateSchedule(ctx, createInput(name))
		require.NoError(t, err)
	}
	for _, g := range []string{"g1", "g2"} {
		_, err := b.client.CreateScheduleGroup(ctx, &sdk.CreateScheduleGroupInput{Name: aws.String(g)})
		require.NoError(t, err)
	}
	old := func(parts ...string) *string {
		b, err := json.Marshal(parts)
		require.NoError(t, err)
		return aws.String(base64.RawURLEncoding.EncodeToString(b))
	}
	next, err := b.client.ListSchedules(ctx, &sdk.ListSchedulesInput{NextToken: old("default", "a1")})
	require.NoError(t, err)
	require.Len(t, next.Schedules, 2)
	require.Equal(t, "a2", aws.ToString(next.Schedules[0].Name))

	groups, err := b.client.ListScheduleGroups(ctx, &sdk.ListScheduleGroupsInput{NextToken: old("g1")})
	require.NoError(t, err)
	require.Len(t, groups.ScheduleGroups, 1)
	require.Equal(t, "g2", aws.ToString(groups.ScheduleGroups[0].Name))

	var ve *types.ValidationException
	_, err = b.client.ListSchedules(ctx, &sdk.ListSchedulesInput{NextToken: old("g1")})
	require.ErrorAs(t, err, &ve, "a group's token is not a schedule's")
}
