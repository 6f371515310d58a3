package scheduler_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdk "github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/aws/aws-sdk-go-v2/service/scheduler/types"
	"github.com/stretchr/testify/require"

	"stepwise/scheduler"
)

// jpCalendar is a calendar of November 2026 in Japan: Monday the 23rd
// (Labor Thanksgiving Day) off, weekends off.
func jpCalendar(t *testing.T) *scheduler.Calendar {
	t.Helper()
	c, err := scheduler.ParseCalendar("jp", strings.NewReader(`# public holidays
2026-11-03 Culture Day
2026-11-23 Labor Thanksgiving Day  # a Monday
`))
	require.NoError(t, err)
	return c
}

func TestExecutionNameFormatsAndOffsets(t *testing.T) {
	t.Parallel()
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	require.NoError(t, err)
	jp := jpCalendar(t)
	sch := &scheduler.Schedule{Arn: "arn:aws:scheduler:us-east-1:123456789012:schedule/default/nightly",
		Name: "nightly", GroupName: "default", ScheduleExpressionTimezone: "Asia/Tokyo"}
	at := func(y int, m time.Month, d, h int) time.Time { return time.Date(y, m, d, h, 0, 0, 0, tokyo) }
	for _, tc := range []struct {
		template string
		slot     time.Time
		cal      *scheduler.Calendar
		want     string
	}{
		{"jobnet-<stepwise.scheduled-date>", at(2026, 11, 28, 2), nil, "jobnet-20261128"},
		{"jobnet-<stepwise.scheduled-local-time>", at(2026, 11, 28, 2), nil, "jobnet-20261128T020000"},
		// The night after midnight is named by the day before.
		{"jobnet-<stepwise.scheduled-date:yyyyMMdd:-1d>", at(2026, 11, 28, 2), nil, "jobnet-20261127"},
		{"jobnet-<stepwise.scheduled-date::-1d>", at(2026, 11, 28, 2), nil, "jobnet-20261127"},
		// Month, year and leap-day boundaries.
		{"<stepwise.scheduled-date:yyyyMMdd:-1d>", at(2026, 12, 1, 2), nil, "20261130"},
		{"<stepwise.scheduled-date:yyyy-MM-dd:-1d>", at(2027, 1, 1, 2), nil, "2026-12-31"},
		{"<stepwise.scheduled-date:yyyyMMdd:-1d>", at(2028, 3, 1, 2), nil, "20280229"},
		{"<stepwise.scheduled-date:yyyyMMdd:+1d>", at(2026, 1, 31, 2), nil, "20260201"},
		{"<stepwise.scheduled-date:yyyyMMdd:+1d>", at(2026, 12, 31, 23), nil, "20270101"},
		// A business day that starts at 05:00: hours move the date.
		{"<stepwise.scheduled-date::-5h>", at(2026, 11, 28, 2), nil, "20261127"},
		{"<stepwise.scheduled-date::-5h>", at(2026, 11, 28, 6), nil, "20261128"},
		{"<stepwise.scheduled-local-time:yy.MM.dd_HH-mm-ss:+36h>", at(2026, 11, 28, 2), nil, "26.11.29_14-00-00"},
		{"<stepwise.scheduled-local-time:HHmm:-1d+2h>", at(2026, 11, 28, 23), nil, "0100"},
		// Business days: Monday the 30th's night is Friday the 27th's;
		// Tuesday the 24th's the Friday before the holiday.
		{"jobnet-<stepwise.scheduled-date::-1bd>", at(2026, 11, 30, 2), jp, "jobnet-20261127"},
		{"jobnet-<stepwise.scheduled-date::-1bd>", at(2026, 11, 24, 2), jp, "jobnet-20261120"},
		{"jobnet-<stepwise.scheduled-date::-1bd>", at(2026, 11, 24, 2), nil, "jobnet-20261123"}, // weekdays only
		{"<stepwise.scheduled-date::+1bd>", at(2026, 11, 20, 2), jp, "20261124"},
		{"<stepwise.scheduled-date::-2bd>", at(2026, 11, 25, 2), jp, "20261120"},
		{"<stepwise.scheduled-date::-5h-1bd>", at(2026, 11, 24, 4), jp, "20261120"}, // 23:00 Monday the 23rd, less a business day
		// AWS's placeholders beside them.
		{"<stepwise.scheduled-date>-<aws.scheduler.scheduled-time>", at(2026, 11, 28, 2), nil, "20261128-20261127T170000Z"},
	} {
		t.Run(tc.template, func(t *testing.T) {
			require.NoError(t, scheduler.CheckTemplate(tc.template))
			require.Equal(t, tc.want, scheduler.ExecutionName(tc.template, sch, tc.slot, tc.cal))
		})
	}
}

func TestInputPlaceholders(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	in := createInput("nightly")
	in.ScheduleExpression = aws.String("cron(0 2 * * ? *)")
	in.ScheduleExpressionTimezone = aws.String("Asia/Tokyo")
	in.Target.Input = aws.String(`{"businessDate":"<stepwise.scheduled-date:yyyy-MM-dd:-1d>"}`)
	_, err := b.client.CreateSchedule(ctx, in)
	require.NoError(t, err)
	sfn := &fakeSFN{}
	b.now = time.Date(2026, 11, 24, 17, 0, 0, 0, time.UTC) // 02:00 on the 25th in Tokyo
	require.NoError(t, b.svc.FireDue(ctx, scheduler.FireConfig{Starter: sfn, Now: func() time.Time { return b.now }}))
	require.Equal(t, []string{"nightly-20261125T020000"}, sfn.names_())
	require.JSONEq(t, `{"businessDate":"2026-11-24"}`, sfn.started[0]["input"])
}

func TestBadTemplates(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ template, want string }{
		{"<stepwise.scheduled-date:yyyMMdd>", `the placeholder <stepwise.scheduled-date:yyyMMdd> is not valid: the format "yyyMMdd" has "yMMdd" where yyyy, yy, MM, dd, HH, mm, ss or a separator (- _ . T) goes`},
		{"<stepwise.scheduled-date:yyyy/MM/dd>", `the placeholder <stepwise.scheduled-date:yyyy/MM/dd> is not valid: the format "yyyy/MM/dd" has "/MM/dd" where yyyy, yy, MM, dd, HH, mm, ss or a separator (- _ . T) goes`},
		{"<stepwise.scheduled-date::1d>", `the placeholder <stepwise.scheduled-date::1d> is not valid: the offset "1d" has "1d" where a signed step goes: +Nd, -Nd, +Nh, -Nh, +Nbd or -Nbd`},
		{"<stepwise.scheduled-date::-1w>", `the placeholder <stepwise.scheduled-date::-1w> is not valid: the offset "-1w" has "-1w" where a signed step goes: +Nd, -Nd, +Nh, -Nh, +Nbd or -Nbd`},
		{"<stepwise.scheduled-date::-1d5h>", `the placeholder <stepwise.scheduled-date::-1d5h> is not valid: the offset "-1d5h" has "5h" where a signed step goes: +Nd, -Nd, +Nh, -Nh, +Nbd or -Nbd`},
		{"<stepwise.scheduled-date:yyyyMMdd:>", `the placeholder <stepwise.scheduled-date:yyyyMMdd:> is not valid: an empty offset: give one, e.g. -1d, +9h or -1bd, or leave out its colon`},
		{"<stepwise.scheduled-date:yyyyMMdd:-1d:x>", `the placeholder <stepwise.scheduled-date:yyyyMMdd:-1d:x> is not valid: too many parts: <stepwise.scheduled-date[:FORMAT[:OFFSET]]>`},
		{"x-<stepwise.business-date>", `the placeholder <stepwise.business-date> is not valid: unknown placeholder (stepwise.scheduled-date and stepwise.scheduled-local-time are Stepwise's)`},
	} {
		t.Run(tc.template, func(t *testing.T) {
			err := scheduler.CheckTemplate(tc.template)
			require.EqualError(t, err, tc.want)
		})
	}
}

func TestBadTemplateRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	message := func(err error) string {
		var ae interface{ ErrorMessage() string }
		require.True(t, errors.As(err, &ae), "%v", err)
		return ae.ErrorMessage()
	}

	in := createInput("nightly")
	in.Target.Arn = aws.String(scheduler.UniversalStartExecution)
	in.Target.Input = aws.String(`{"StateMachineArn":"` + smArn + `","Name":"jobnet-<stepwise.scheduled-date:yyyymmdd:-1d>"}`)
	_, err := b.client.CreateSchedule(ctx, in)
	require.Equal(t, "ValidationException", apiCode(err))
	require.Equal(t, `The Name in the Input of the target arn:aws:scheduler:::aws-sdk:sfn:startExecution: the placeholder <stepwise.scheduled-date:yyyymmdd:-1d> is not valid: the format "yyyymmdd" has minutes (mm) without hours (HH): the month is MM.`, message(err))

	in.Target.Input = aws.String(`{"StateMachineArn":"` + smArn + `","Name":"jobnet-<stepwise.scheduled-date:yyyyMMdd:-1d>"}`)
	_, err = b.client.CreateSchedule(ctx, in)
	require.NoError(t, err)

	// UpdateSchedule refuses the same, on a state machine target's Input.
	_, err = b.client.UpdateSchedule(ctx, &sdk.UpdateScheduleInput{Name: in.Name, ScheduleExpression: in.ScheduleExpression,
		FlexibleTimeWindow: in.FlexibleTimeWindow,
		Target:             &types.Target{Arn: aws.String(smArn), RoleArn: aws.String(role), Input: aws.String(`{"date":"<stepwise.scheduled-date::-1day>"}`)}})
	require.Equal(t, "ValidationException", apiCode(err), "%v", err)
	require.Equal(t, `The Input of the target `+smArn+`: the placeholder <stepwise.scheduled-date::-1day> is not valid: the offset "-1day" has "ay" where a signed step goes: +Nd, -Nd, +Nh, -Nh, +Nbd or -Nbd.`, message(err))
}

// TestExecutionNameAcrossDST: a day back is the calendar's day before
// (its 02:30 does not exist; it comes out within that day); 24 hours back
// is elapsed time, an hour earlier on the clock.
func TestExecutionNameAcrossDST(t *testing.T) {
	t.Parallel()
	ny, err := time.LoadLocation("America/New_York")
	require.NoError(t, err)
	sch := &scheduler.Schedule{Arn: "arn:aws:scheduler:us-east-1:123456789012:schedule/default/nightly",
		Name: "nightly", GroupName: "default", ScheduleExpressionTimezone: "America/New_York"}
	slot := time.Date(2026, 3, 9, 2, 30, 0, 0, ny) // the day after clocks went forward at 02:00
	require.Equal(t, "20260308", scheduler.ExecutionName("<stepwise.scheduled-date:yyyyMMdd:-1d>", sch, slot, nil))
	require.Equal(t, "20260310T0230", scheduler.ExecutionName("<stepwise.scheduled-local-time:yyyyMMddTHHmm:+1d>", sch, slot, nil))
	require.Equal(t, "20260308T0130", scheduler.ExecutionName("<stepwise.scheduled-local-time:yyyyMMddTHHmm:-24h>", sch, slot, nil))
	require.Equal(t, "20260309T0230", scheduler.ExecutionName("<stepwise.scheduled-local-time:yyyyMMddTHHmm>", sch, slot, nil))
}

// The offsets of a text's placeholders add up to at most ten years of
// days: a placeholder of a thousand steps of -9999bd is refused when the
// schedule is written, and, written before, is left as it is when it
// fires rather than walked day by day.
func TestTemplateOffsetsBounded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	message := func(err error) string {
		var ae interface{ ErrorMessage() string }
		require.True(t, errors.As(err, &ae), "%v", err)
		return ae.ErrorMessage()
	}
	const tooFar = "the offsets of its placeholders add up to %d days, more than the 3660 (ten years) they may (a business day counts as a day, 24 hours as a day)"
	bomb := "<stepwise.scheduled-date::" + strings.Repeat("-9999bd", 1000) + ">"
	require.EqualError(t, scheduler.CheckTemplate(bomb), fmt.Sprintf(tooFar, 9999000))
	require.NoError(t, scheduler.CheckTemplate("<stepwise.scheduled-date::-3000d><stepwise.scheduled-date::-600bd-1440h>"))
	require.EqualError(t, scheduler.CheckTemplate("<stepwise.scheduled-date::-3000d><stepwise.scheduled-date::-600bd-1441h>"), fmt.Sprintf(tooFar, 3661))

	in := createInput("nightly")
	in.Target.Arn = aws.String(scheduler.UniversalStartExecution)
	in.Target.Input = aws.String(`{"StateMachineArn":"` + smArn + `","Name":"` + bomb + `"}`)
	_, err := b.client.CreateSchedule(ctx, in)
	require.Equal(t, "ValidationException", apiCode(err))
	require.Equal(t, "The Name in the Input of the target arn:aws:scheduler:::aws-sdk:sfn:startExecution: "+fmt.Sprintf(tooFar, 9999000)+".", message(err))

	in.Target.Input = aws.String(`{"StateMachineArn":"` + smArn + `","Name":"jobnet-<stepwise.scheduled-date::-1bd>"}`)
	_, err = b.client.CreateSchedule(ctx, in)
	require.NoError(t, err)
	_, err = b.client.UpdateSchedule(ctx, &sdk.UpdateScheduleInput{Name: in.Name, ScheduleExpression: in.ScheduleExpression,
		FlexibleTimeWindow: in.FlexibleTimeWindow,
		Target:             &types.Target{Arn: aws.String(smArn), RoleArn: aws.String(role), Input: aws.String(`{"dates":"` + bomb + `"}`)}})
	require.Equal(t, "ValidationException", apiCode(err), "%v", err)
	require.Equal(t, "The Input of the target "+smArn+": "+fmt.Sprintf(tooFar, 9999000)+".", message(err))

	sch := &scheduler.Schedule{Arn: "arn:aws:scheduler:us-east-1:123456789012:schedule/default/nightly", Name: "nightly", GroupName: "default", ScheduleExpressionTimezone: "UTC"}
	start := time.Now()
	name := scheduler.ExecutionName("a-<stepwise.scheduled-date::-1bd>-"+bomb, sch, time.Date(2026, 11, 24, 2, 0, 0, 0, time.UTC), nil)
	require.Less(t, time.Since(start), time.Second)
	require.Equal(t, "a-20261123-"+bomb, name)
}
