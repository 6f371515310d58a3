package e2e

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	schedtypes "github.com/aws/aws-sdk-go-v2/service/scheduler/types"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// The console's lists in a real Chromium: the state machines searched by
// name, a state machine's executions filtered, and a schedule disabled
// from its page.
func TestConsoleListsInTheBrowser(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	s := startServer(t, filepath.Join(t.TempDir(), "lists.db"))
	c := s.client(t)
	pass := `{"StartAt": "P", "States": {"P": {"Type": "Pass", "End": true}}}`
	night := createMachine(t, c, "jobnet-night", pass)
	createMachine(t, c, "jobnet-day", pass)
	createMachine(t, c, "report", pass)
	for _, name := range []string{"nightly-20261127T020000", "by-hand"} {
		waitDone(t, c, startExecution(t, c, night, name, `{}`))
	}

	// Search the state machines: the form sends q, the list keeps the
	// two whose name starts with it, each with its last run.
	rows := func() []string {
		return eval[[]string](t, ctx, `[...document.querySelectorAll('#state-machines tbody tr')].map(r => r.dataset.stateMachine)`)
	}
	do(t, ctx, chromedp.Navigate(s.url()+"/"), chromedp.WaitVisible(css(`#state-machines`)))
	require.ElementsMatch(t, []string{"jobnet-night", "jobnet-day", "report"}, rows())
	do(t, ctx, chromedp.SendKeys(css(`#machine-search input[name="q"]`), "JOBNET"),
		chromedp.Submit(css(`#machine-search input[name="q"]`)),
		chromedp.WaitVisible(css(`#machine-search [data-field="matches"]`)))
	require.ElementsMatch(t, []string{"jobnet-night", "jobnet-day"}, rows())
	require.Equal(t, "SUCCEEDED", eval[string](t, ctx,
		`document.querySelector('tr[data-state-machine="jobnet-night"] [data-field="last-run"] .status').textContent`))
	screenshot(t, ctx, "console-search")

	// A state machine's executions by name prefix.
	do(t, ctx, chromedp.Click(css(`tr[data-state-machine="jobnet-night"] a`)), chromedp.WaitVisible(css(`#execution-search`)),
		chromedp.SendKeys(css(`#execution-search input[name="prefix"]`), "nightly"),
		chromedp.Submit(css(`#execution-search input[name="prefix"]`)),
		chromedp.WaitVisible(css(`#execution-search a[href="?"]`)))
	require.Equal(t, []string{"nightly-20261127T020000"},
		eval[[]string](t, ctx, `[...document.querySelectorAll('#executions tbody tr')].map(r => r.dataset.execution)`))

	// A schedule, disabled from its page.
	sc := s.schedulerClient(t)
	_, err := sc.CreateSchedule(context.Background(), &scheduler.CreateScheduleInput{Name: aws.String("nightly"),
		ScheduleExpression: aws.String("cron(0 2 * * ? *)"), ScheduleExpressionTimezone: aws.String("Asia/Tokyo"),
		FlexibleTimeWindow: &schedtypes.FlexibleTimeWindow{Mode: schedtypes.FlexibleTimeWindowModeOff},
		Target:             &schedtypes.Target{Arn: aws.String(night), RoleArn: aws.String(roleArn)}})
	require.NoError(t, err)
	do(t, ctx, chromedp.Navigate(s.url()+"/schedule-list"), chromedp.WaitVisible(css(`#schedules`)),
		chromedp.Click(css(`tr[data-schedule="default/nightly"] a[href^="/schedule-list/"]`)),
		chromedp.WaitVisible(css(`main[data-page="schedule"] button[data-action="disable"]`)))
	require.Equal(t, 10, eval[int](t, ctx, `document.querySelectorAll('#next-runs li').length`))
	require.Equal(t, []string{"nightly-20261127T020000"},
		eval[[]string](t, ctx, `[...document.querySelectorAll('#executions tbody tr')].map(r => r.dataset.execution)`))
	do(t, ctx, chromedp.Click(css(`button[data-action="disable"]`)), chromedp.WaitVisible(css(`button[data-action="enable"]`)))
	require.Equal(t, "DISABLED", eval[string](t, ctx, `document.querySelector('[data-field="state"]').dataset.state`))
	require.Equal(t, 0, eval[int](t, ctx, `document.querySelectorAll('#next-runs li').length`))
	screenshot(t, ctx, "console-schedule")
	got, err := sc.GetSchedule(context.Background(), &scheduler.GetScheduleInput{Name: aws.String("nightly")})
	require.NoError(t, err)
	require.Equal(t, schedtypes.ScheduleStateDisabled, got.State)
	require.Equal(t, "Asia/Tokyo", aws.ToString(got.ScheduleExpressionTimezone))
	require.Equal(t, s.url()+"/schedule-list/default/nightly", eval[string](t, ctx, `location.href`))
}
