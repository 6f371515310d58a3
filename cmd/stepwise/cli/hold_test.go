package cli

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/stretchr/testify/require"

	"stepwise/config"
	"stepwise/server/servertest"
)

// TestHoldNextCommand: `stepwise hold-next` on a server whose clock skips
// holds the next night only: advancing the clock over two nights starts
// the second one alone. An unknown schedule is refused with its reason.
func TestHoldNextCommand(t *testing.T) {
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
	run := func(args ...string) (string, string, int) {
		var out, errOut bytes.Buffer
		code := (&CLI{Out: &out, Err: &errOut}).Execute(append(args, "--endpoint", s.URL))
		return out.String(), errOut.String(), code
	}
	now := s.Engine().Now()
	night := time.Date(now.Year(), now.Month(), now.Day(), 2, 0, 0, 0, time.UTC)
	if !night.After(now) {
		night = night.AddDate(0, 0, 1)
	}

	out, errOut, code := run("hold-next", "nightly")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "held: the run of nightly at "+night.Format(time.RFC3339)+" is skipped\n", out)
	_, errOut, code = run("hold-next", "nosuch")
	require.Equal(t, 1, code)
	require.Equal(t, "stepwise: Schedule nosuch does not exist.\n", errOut)
	_, errOut, code = run("hold-next")
	require.Equal(t, 2, code, errOut)

	_, errOut, code = run("clock", "advance", "--to", night.AddDate(0, 0, 1).Add(30*time.Minute).Format(time.RFC3339))
	require.Equal(t, 0, code, errOut)
	list, err := s.SFN.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: sm.StateMachineArn})
	require.NoError(t, err)
	var names []string
	for _, x := range list.Executions {
		names = append(names, aws.ToString(x.Name))
	}
	require.Equal(t, []string{"nightly-" + night.AddDate(0, 0, 1).Format("20060102T150405")}, names)

	out, errOut, code = run("hold-next", "nightly", "--release")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "nightly was not held\n", out)
}
