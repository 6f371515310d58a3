package cli

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/stretchr/testify/require"

	"stepwise/config"
	"stepwise/server/servertest"
)

// TestClockCommand: `stepwise clock advance --to` on a server whose clock
// skips runs the night it passes (the schedule made a moment before),
// and prints the clock's new reading; `stepwise clock` reads it; bad
// usage and a time in the past are refused.
func TestClockCommand(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := servertest.New(t, servertest.WithConfig(func(c *config.Serve) { c.TimeSkip = true }))
	sm, err := s.SFN.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("nightly"), RoleArn: aws.String("arn:aws:iam::123456789012:role/r"),
		Definition: aws.String(`{"StartAt": "P", "States": {"P": {"Type": "Pass", "End": true}}}`)})
	require.NoError(t, err)
	resp, err := http.Post(s.URL+"/schedules/nightly", "application/json", strings.NewReader(fmt.Sprintf(`{"ScheduleExpression": "cron(0 2 * * ? *)",
		"FlexibleTimeWindow": {"Mode": "OFF"}, "Target": {"Arn": %q, "RoleArn": "arn:aws:iam::123456789012:role/r"}}`, aws.ToString(sm.StateMachineArn))))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	// The slots of the executions the schedule started, in order, each
	// checked to have started at its slot.
	nights := func() []time.Time {
		out, err := s.SFN.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: sm.StateMachineArn})
		require.NoError(t, err)
		var slots []time.Time
		for _, x := range out.Executions {
			slot, err := time.Parse("nightly-20060102T150405", aws.ToString(x.Name))
			require.NoError(t, err)
			require.Equal(t, 2, slot.Hour())
			require.False(t, x.StartDate.Before(slot), "started at %v, before its slot %v", x.StartDate, slot)
			require.Less(t, x.StartDate.Sub(slot), time.Second, "started at %v, its slot %v", x.StartDate, slot)
			slots = append(slots, slot)
		}
		slices.SortFunc(slots, time.Time.Compare)
		return slots
	}
	run := func(args ...string) (string, string, int) {
		var out, errOut bytes.Buffer
		code := (&CLI{Out: &out, Err: &errOut}).Execute(append(args, "--endpoint", s.URL))
		return out.String(), errOut.String(), code
	}
	now := s.Engine().Now()
	// The next night's slot, today's if 02:00 is still ahead.
	night := time.Date(now.Year(), now.Month(), now.Day(), 2, 0, 0, 0, time.UTC)
	if !night.After(now) {
		night = night.AddDate(0, 0, 1)
	}
	to := night.Add(30 * time.Minute)
	out, errOut, code := run("clock", "advance", "--to", to.Format(time.RFC3339))
	require.Equal(t, 0, code, errOut)
	// The clock's reading once there: the goal, or a moment past it as
	// the clock runs on.
	reached, err := time.Parse(time.RFC3339Nano, strings.TrimSuffix(out, " (virtual)\n"))
	require.NoError(t, err, out)
	require.False(t, reached.Before(to), out)
	require.Less(t, reached.Sub(to), 5*time.Second, out)
	require.Equal(t, []time.Time{night}, nights())

	out, errOut, code = run("clock")
	require.Equal(t, 0, code, errOut)
	read, err := time.Parse(time.RFC3339Nano, strings.TrimSuffix(out, " (virtual)\n"))
	require.NoError(t, err, out)
	require.False(t, read.Before(to))

	_, errOut, code = run("clock", "advance", "--to", now.Format(time.RFC3339))
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "stepwise: the clock never goes back: ")
	_, errOut, code = run("clock", "advance", "24h", "--to", to.Format(time.RFC3339))
	require.Equal(t, 2, code)
	require.Equal(t, "stepwise: clock advance: give a DURATION or --to TIME, not both\n", errOut)
	_, errOut, code = run("clock", "advance", "soon")
	require.Equal(t, 2, code)
	require.Equal(t, "stepwise: clock advance: \"soon\" is not a duration (24h, 90m, 1h30m)\n", errOut)
	_, errOut, code = run("clock", "advance")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "give a DURATION (24h) or --to TIME")
	require.Len(t, nights(), 1)
}
