package scheduler_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdk "github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/aws/aws-sdk-go-v2/service/scheduler/types"
	"github.com/stretchr/testify/require"

	"stepwise/scheduler"
)

func TestParseCalendar(t *testing.T) {
	t.Parallel()
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	require.NoError(t, err)
	day := func(d int) time.Time { return time.Date(2026, 11, d, 2, 0, 0, 0, tokyo) }

	jp := jpCalendar(t)
	require.True(t, jp.Business(day(20)))  // Friday
	require.False(t, jp.Business(day(21))) // Saturday
	require.False(t, jp.Business(day(22))) // Sunday
	require.False(t, jp.Business(day(23))) // Labor Thanksgiving Day
	require.True(t, jp.Business(day(24)))
	// The date is the zone's: 02:00 on the 23rd in Tokyo is the 22nd in UTC.
	require.False(t, jp.Business(day(24).Add(-24*time.Hour).UTC().Add(-3*time.Hour)))

	// A weekend of Friday and Saturday; none at all.
	fs, err := scheduler.ParseCalendar("fs", strings.NewReader("weekend fri,sat\n"))
	require.NoError(t, err)
	require.False(t, fs.Business(day(20)))
	require.True(t, fs.Business(day(22)))
	all, err := scheduler.ParseCalendar("all", strings.NewReader("weekend  # every day a business day\n2026-11-23\n"))
	require.NoError(t, err)
	require.True(t, all.Business(day(21)))
	require.False(t, all.Business(day(23)))

	for _, tc := range []struct{ text, want string }{
		{"2026-11-31\n", `line 1: "2026-11-31" is not a date (YYYY-MM-DD) nor a weekend line`},
		{"# ok\n\n26/11/23\n", `line 3: "26/11/23" is not a date (YYYY-MM-DD) nor a weekend line`},
		{"weekend sat sunday funday\n", `line 1: "funday" is not a weekday (sun, mon, tue, wed, thu, fri, sat)`},
		{"weekend sun mon tue wed thu fri sat\n", `line 1: a weekend of every day leaves no business day`},
		{"weekend sat\nweekend sun\n", `line 2: a second weekend line`},
	} {
		_, err := scheduler.ParseCalendar("bad", strings.NewReader(tc.text))
		require.EqualError(t, err, tc.want, tc.text)
	}

	dir := t.TempDir()
	path := filepath.Join(dir, "jp.txt")
	require.NoError(t, os.WriteFile(path, []byte("2026-11-23\n"), 0o600))
	cals, err := scheduler.LoadCalendars(map[string]string{"jp": path})
	require.NoError(t, err)
	require.False(t, cals["jp"].Business(day(23)))
	_, err = scheduler.LoadCalendars(map[string]string{"jp": filepath.Join(dir, "nope.txt")})
	require.ErrorIs(t, err, os.ErrNotExist)
	// Only a regular file is read, at most 1 MiB.
	fifo := filepath.Join(dir, "fifo.txt")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	big := filepath.Join(dir, "big.txt")
	require.NoError(t, os.WriteFile(big, []byte(strings.Repeat("2026-11-23 Labour Thanksgiving Day\n", 40_000)), 0o600))
	for file, want := range map[string]string{
		"/dev/zero": "calendar jp: /dev/zero is not a regular file (a device)",
		fifo:        "calendar jp: " + fifo + " is not a regular file (a named pipe)",
		big:         "calendar jp: " + big + " is larger than 1 MiB, the most read of such a file",
	} {
		done := make(chan error, 1)
		go func() {
			_, err := scheduler.LoadCalendars(map[string]string{"jp": file})
			done <- err
		}()
		select {
		case err := <-done:
			require.EqualError(t, err, want)
		case <-time.After(10 * time.Second):
			t.Fatalf("reading %s: still running after 10s", file)
		}
	}
	_, err = scheduler.LoadCalendars(map[string]string{"j p": path})
	require.EqualError(t, err, `calendar "j p": a name is 1 to 64 of [0-9A-Za-z_.-]`)
	require.NoError(t, os.WriteFile(path, []byte("weekend caturday\n"), 0o600))
	_, err = scheduler.LoadCalendars(map[string]string{"jp": path})
	require.EqualError(t, err, `calendar jp (`+path+`): line 1: "caturday" is not a weekday (sun, mon, tue, wed, thu, fri, sat)`)
}

// TestCalendarRules fires a schedule of Saturdays and Mondays at 02:00 in
// Tokyo over two weeks of November 2026 (Saturday the 21st, Monday the
// 23rd a holiday, Saturday the 28th, Monday the 30th) under each rule,
// looking every hour with a new Service each time (as after a restart).
func TestCalendarRules(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		tag  string
		want map[string]string // execution name → when it was started (Tokyo)
	}{
		{"jp", map[string]string{ // skip by default
			"jobnet-20261127": "2026-11-30T02:00",
		}},
		{"jp:skip", map[string]string{
			"jobnet-20261127": "2026-11-30T02:00",
		}},
		// Saturday the 21st and the holiday move to Tuesday the 24th,
		// once; Saturday the 28th to Monday the 30th, which it shares
		// with Monday's own.
		{"jp:next", map[string]string{
			"jobnet-20261120": "2026-11-24T02:00",
			"jobnet-20261127": "2026-11-30T02:00",
		}},
		// Saturday the 21st and the holiday move to Friday the 20th, a
		// day before their slot; Saturday the 28th to Friday the 27th.
		{"jp:previous", map[string]string{
			"jobnet-20261119": "2026-11-20T02:00",
			"jobnet-20261126": "2026-11-27T02:00",
			"jobnet-20261127": "2026-11-30T02:00",
		}},
		// The group's calendar detached from the schedule: every slot
		// fires, named by the weekday before (the holiday unknown).
		{"none", map[string]string{
			"jobnet-20261120": "2026-11-21T02:00", // and Monday the 23rd's, the same name: once
			"jobnet-20261127": "2026-11-28T02:00", // and Monday the 30th's
		}},
	} {
		t.Run(tc.tag, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			tokyo, err := time.LoadLocation("Asia/Tokyo")
			require.NoError(t, err)
			jp := jpCalendar(t)
			b := setupWith(t, map[string]*scheduler.Calendar{"jp": jp})
			b.now = time.Date(2026, 11, 19, 21, 30, 0, 0, tokyo) // a Thursday evening
			groupArn := "arn:aws:scheduler:us-east-1:123456789012:schedule-group/default"
			tags := []types.Tag{{Key: aws.String("stepwise:calendar/jobnet"), Value: aws.String(tc.tag)}}
			if tc.tag == "none" {
				tags = append(tags, types.Tag{Key: aws.String("stepwise:calendar"), Value: aws.String("jp:next")})
			}
			_, err = b.client.TagResource(ctx, &sdk.TagResourceInput{ResourceArn: aws.String(groupArn), Tags: tags})
			require.NoError(t, err)

			in := createInput("jobnet")
			in.ScheduleExpression = aws.String("cron(0 2 ? * SAT,MON *)")
			in.ScheduleExpressionTimezone = aws.String("Asia/Tokyo")
			in.Target.Arn = aws.String(scheduler.UniversalStartExecution)
			// Named by the business day before the night's.
			in.Target.Input = aws.String(`{"StateMachineArn":"` + smArn + `","Name":"jobnet-<stepwise.scheduled-date::-1bd>"}`)
			_, err = b.client.CreateSchedule(ctx, in)
			require.NoError(t, err)

			sfn := &fakeSFN{}
			got := map[string]string{}
			for end := time.Date(2026, 12, 1, 12, 0, 0, 0, tokyo); b.now.Before(end); b.now = b.now.Add(30 * time.Minute) {
				svc := scheduler.New(b.exec, b.cfg) // as after a restart: nothing kept in memory
				require.NoError(t, svc.FireDue(ctx, scheduler.FireConfig{Starter: sfn, Now: func() time.Time { return b.now }}))
				for _, name := range sfn.names_() {
					if _, ok := got[name]; !ok {
						got[name] = b.now.In(tokyo).Format("2006-01-02T15:04")
					}
				}
			}
			require.Equal(t, tc.want, got)
		})
	}
}

func TestCalendarTagsRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupWith(t, map[string]*scheduler.Calendar{"jp": jpCalendar(t)})
	groupArn := "arn:aws:scheduler:us-east-1:123456789012:schedule-group/default"
	message := func(err error) string {
		var ae interface{ ErrorMessage() string }
		require.True(t, errors.As(err, &ae), "%v", err)
		return ae.ErrorMessage()
	}
	for _, tc := range []struct{ key, value, want string }{
		{"stepwise:calendar", "us", `The tag stepwise:calendar=us names the calendar "us", which the server does not have; its calendars: jp.`},
		{"stepwise:calendar/jobnet", "jp:nearest", `The tag stepwise:calendar/jobnet=jp:nearest names the rule "nearest": a calendar's rule is skip, next or previous.`},
		{"stepwise:calendar", "none", `The tag stepwise:calendar=none names the calendar "none", which the server does not have; its calendars: jp.`},
	} {
		_, err := b.client.TagResource(ctx, &sdk.TagResourceInput{ResourceArn: aws.String(groupArn),
			Tags: []types.Tag{{Key: aws.String(tc.key), Value: aws.String(tc.value)}}})
		require.Equal(t, "ValidationException", apiCode(err))
		require.Equal(t, tc.want, message(err))
	}
	_, err := b.client.CreateScheduleGroup(ctx, &sdk.CreateScheduleGroupInput{Name: aws.String("nights"),
		Tags: []types.Tag{{Key: aws.String("stepwise:calendar"), Value: aws.String("us:next")}}})
	require.Equal(t, "ValidationException", apiCode(err))
	require.Equal(t, `The tag stepwise:calendar=us:next names the calendar "us", which the server does not have; its calendars: jp.`, message(err))

	// A server without calendars says how to give one.
	bare := setup(t)
	_, err = bare.client.TagResource(ctx, &sdk.TagResourceInput{ResourceArn: aws.String(groupArn),
		Tags: []types.Tag{{Key: aws.String("stepwise:calendar"), Value: aws.String("jp")}}})
	require.Equal(t, `The tag stepwise:calendar=jp names the calendar "jp", which the server does not have; its calendars: none (serve --calendar NAME=FILE gives one).`, message(err))
}

func TestOverviewCalendar(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	require.NoError(t, err)
	b := setupWith(t, map[string]*scheduler.Calendar{"jp": jpCalendar(t)})
	b.now = time.Date(2026, 11, 22, 12, 0, 0, 0, tokyo) // a Sunday
	_, err = b.client.TagResource(ctx, &sdk.TagResourceInput{ResourceArn: aws.String("arn:aws:scheduler:us-east-1:123456789012:schedule-group/default"),
		Tags: []types.Tag{{Key: aws.String("stepwise:calendar"), Value: aws.String("jp:next")}}})
	require.NoError(t, err)
	in := createInput("jobnet")
	in.ScheduleExpression = aws.String("cron(0 2 ? * SAT,MON *)")
	in.ScheduleExpressionTimezone = aws.String("Asia/Tokyo")
	in.Target.Arn = aws.String(scheduler.UniversalStartExecution)
	in.Target.Input = aws.String(`{"StateMachineArn":"` + smArn + `","Name":"jobnet-<stepwise.scheduled-date::-1bd>"}`)
	_, err = b.client.CreateSchedule(ctx, in)
	require.NoError(t, err)
	plain := createInput("plain")
	_, err = b.client.CreateSchedule(ctx, plain)
	require.NoError(t, err)
	_, err = b.client.TagResource(ctx, &sdk.TagResourceInput{ResourceArn: aws.String("arn:aws:scheduler:us-east-1:123456789012:schedule-group/default"),
		Tags: []types.Tag{{Key: aws.String("stepwise:calendar/plain"), Value: aws.String("none")}}})
	require.NoError(t, err)

	list, err := b.svc.Overview(ctx, 3)
	require.NoError(t, err)
	require.Len(t, list, 2)
	o := list[0]
	require.Equal(t, "jobnet", o.Name)
	require.Equal(t, "jp:next", o.Calendar)
	var next []string
	for _, n := range o.Next {
		next = append(next, n.In(tokyo).Format("2006-01-02T15:04"))
	}
	// The holiday's slot moves to Tuesday; Saturdays' to the Monday they
	// share with Monday's own.
	require.Equal(t, []string{"2026-11-24T02:00", "2026-11-30T02:00", "2026-12-07T02:00"}, next)
	require.Equal(t, []scheduler.Difference{
		{Kind: scheduler.DiffCalendar, Calendar: "jp", Rule: "next"},
		{Kind: scheduler.DiffNamePlaceholders},
	}, o.NotAWS)
	var words []string
	for _, d := range o.NotAWS {
		words = append(words, d.String())
	}
	require.Equal(t, []string{
		"The calendar jp (rule next, from the group's tags) moves a slot that falls on a day off to the next business day: EventBridge Scheduler fires every slot of the expression.",
		"The execution name uses Stepwise's placeholders (<stepwise.…>): EventBridge Scheduler passes the Name as written, and StartExecution refuses its < and >.",
	}, words)
	require.Equal(t, "plain", list[1].Name)
	require.Empty(t, list[1].Calendar)
	require.Empty(t, list[1].NotAWS)
}

// TestCalendarPreviousBeforeCreation: a slot moved to before the
// schedule was created (or last changed) folds into that change and does
// not fire.
func TestCalendarPreviousBeforeCreation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	require.NoError(t, err)
	b := setupWith(t, map[string]*scheduler.Calendar{"jp": jpCalendar(t)})
	b.now = time.Date(2026, 11, 20, 12, 0, 0, 0, tokyo) // Friday noon: Saturday's slot would move to 02:00 today
	_, err = b.client.TagResource(ctx, &sdk.TagResourceInput{ResourceArn: aws.String("arn:aws:scheduler:us-east-1:123456789012:schedule-group/default"),
		Tags: []types.Tag{{Key: aws.String("stepwise:calendar"), Value: aws.String("jp:previous")}}})
	require.NoError(t, err)
	in := createInput("jobnet")
	in.ScheduleExpression = aws.String("cron(0 2 ? * SAT *)")
	in.ScheduleExpressionTimezone = aws.String("Asia/Tokyo")
	_, err = b.client.CreateSchedule(ctx, in)
	require.NoError(t, err)
	sfn := &fakeSFN{}
	for end := time.Date(2026, 11, 28, 12, 0, 0, 0, tokyo); b.now.Before(end); b.now = b.now.Add(time.Hour) {
		require.NoError(t, b.svc.FireDue(ctx, scheduler.FireConfig{Starter: sfn, Now: func() time.Time { return b.now }}))
	}
	// Saturday the 21st's folded; Saturday the 28th's fired on Friday the 27th.
	require.Equal(t, []string{"jobnet-20261127T020000"}, sfn.names_())
}

func TestNotAWSLogged(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupWith(t, map[string]*scheduler.Calendar{"jp": jpCalendar(t)})
	var logs strings.Builder
	cfg := b.cfg
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	svc := scheduler.New(b.exec, cfg)
	_, err := b.client.TagResource(ctx, &sdk.TagResourceInput{ResourceArn: aws.String("arn:aws:scheduler:us-east-1:123456789012:schedule-group/default"),
		Tags: []types.Tag{{Key: aws.String("stepwise:calendar/jobnet"), Value: aws.String("jp")}}})
	require.NoError(t, err)
	input := `{"date":"<stepwise.scheduled-date::-1bd>"}`
	_, err = svc.CreateSchedule(ctx, &scheduler.Schedule{Name: "jobnet", ScheduleExpression: "cron(0 2 * * ? *)",
		FlexibleTimeWindow: &scheduler.FlexibleTimeWindow{Mode: "OFF"},
		Target:             &scheduler.Target{Arn: smArn, RoleArn: role, Input: &input}})
	require.NoError(t, err)
	require.Contains(t, logs.String(), `msg="scheduler: not as on AWS: The calendar jp (rule skip, from the group's tags) skips a slot that falls on a day off: EventBridge Scheduler fires every slot of the expression."`)
	require.Contains(t, logs.String(), `msg="scheduler: not as on AWS: The input uses Stepwise's placeholders (<stepwise.…>): EventBridge Scheduler substitutes only its own (<aws.scheduler.…>) and leaves these as written."`)

	_, err = b.client.TagResource(ctx, &sdk.TagResourceInput{ResourceArn: aws.String("arn:aws:scheduler:us-east-1:123456789012:schedule-group/default"),
		Tags: []types.Tag{{Key: aws.String("stepwise:calendar/"), Value: aws.String("jp")}}})
	require.Equal(t, "ValidationException", apiCode(err))
	require.ErrorContains(t, err, "The tag stepwise:calendar/ names no schedule: stepwise:calendar/<schedule name> attaches a calendar to one schedule of the group.")
}

// TestCalendarFoldedOneTime: a one-time schedule whose slot folds (moved
// before its creation) arms the alarm for the slot's own time, and is
// deleted then (ActionAfterCompletion DELETE), having started nothing.
func TestCalendarFoldedOneTime(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	require.NoError(t, err)
	b := setupWith(t, map[string]*scheduler.Calendar{"jp": jpCalendar(t)})
	b.now = time.Date(2026, 11, 20, 12, 0, 0, 0, tokyo)
	_, err = b.client.TagResource(ctx, &sdk.TagResourceInput{ResourceArn: aws.String("arn:aws:scheduler:us-east-1:123456789012:schedule-group/default"),
		Tags: []types.Tag{{Key: aws.String("stepwise:calendar/once"), Value: aws.String("jp:previous")}}})
	require.NoError(t, err)
	in := createInput("once")
	in.ScheduleExpression = aws.String("at(2026-11-21T02:00:00)")
	in.ScheduleExpressionTimezone = aws.String("Asia/Tokyo")
	in.ActionAfterCompletion = types.ActionAfterCompletionDelete
	_, err = b.client.CreateSchedule(ctx, in)
	require.NoError(t, err)

	sfn := &fakeSFN{}
	var alarm time.Time
	cfg := scheduler.FireConfig{Starter: sfn, Now: func() time.Time { return b.now },
		Alarm: func(at time.Time, _ func(context.Context)) { alarm = at }}
	require.NoError(t, b.svc.FireDue(ctx, cfg))
	require.Equal(t, time.Date(2026, 11, 21, 2, 0, 0, 0, tokyo), alarm.In(tokyo))
	_, err = b.client.GetSchedule(ctx, &sdk.GetScheduleInput{Name: aws.String("once")})
	require.NoError(t, err)

	b.now = alarm
	require.NoError(t, b.svc.FireDue(ctx, cfg))
	_, err = b.client.GetSchedule(ctx, &sdk.GetScheduleInput{Name: aws.String("once")})
	require.Equal(t, "ResourceNotFoundException", apiCode(err))
	require.Empty(t, sfn.names_())
}

// TestPlanned: a window's firings, calendars applied, each with the
// execution it starts; a slot moved into the window is in it, one before
// the schedule was created is not.
func TestPlanned(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	require.NoError(t, err)
	b := setupWith(t, map[string]*scheduler.Calendar{"jp": jpCalendar(t)})
	b.now = time.Date(2026, 11, 22, 12, 0, 0, 0, tokyo) // a Sunday
	_, err = b.client.TagResource(ctx, &sdk.TagResourceInput{ResourceArn: aws.String("arn:aws:scheduler:us-east-1:123456789012:schedule-group/default"),
		Tags: []types.Tag{{Key: aws.String("stepwise:calendar/jobnet"), Value: aws.String("jp:next")}}})
	require.NoError(t, err)
	in := createInput("jobnet")
	in.ScheduleExpression = aws.String("cron(0 2 ? * SAT,MON *)")
	in.ScheduleExpressionTimezone = aws.String("Asia/Tokyo")
	in.Target.Arn = aws.String(scheduler.UniversalStartExecution)
	in.Target.Input = aws.String(`{"StateMachineArn":"` + smArn + `","Name":"jobnet-<stepwise.scheduled-date>"}`)
	_, err = b.client.CreateSchedule(ctx, in)
	require.NoError(t, err)
	hourly := createInput("hourly")
	hourly.ScheduleExpression = aws.String("cron(30 22,23 * * ? *)")
	hourly.ScheduleExpressionTimezone = aws.String("Asia/Tokyo")
	_, err = b.client.CreateSchedule(ctx, hourly)
	require.NoError(t, err)

	// Monday (a holiday) and Tuesday, in Tokyo.
	from := time.Date(2026, 11, 23, 0, 0, 0, 0, tokyo)
	list, err := b.svc.Planned(ctx, from, from.AddDate(0, 0, 2))
	require.NoError(t, err)
	var got []string
	for _, p := range list {
		got = append(got, p.Name+" "+p.At.In(tokyo).Format("01-02T15:04")+" "+p.Execution)
	}
	require.Equal(t, []string{
		"hourly 11-23T22:30 hourly-20261123T223000",
		"hourly 11-23T23:30 hourly-20261123T233000",
		"jobnet 11-24T02:00 jobnet-20261124",
		"hourly 11-24T22:30 hourly-20261124T223000",
		"hourly 11-24T23:30 hourly-20261124T233000",
	}, got)
	require.Equal(t, smArn, list[2].StateMachine)
}
