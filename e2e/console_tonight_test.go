package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	schedtypes "github.com/aws/aws-sdk-go-v2/service/scheduler/types"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"stepwise/internal/testkit/testwait"
)

// Tonight's page in a browser in Tokyo, in Japanese: the page takes the
// browser's zone; a schedule that fired this minute shows its execution
// running with its job flagged late (past twice its usual duration); the
// schedules firing later show "not yet"; the executions started by hand
// today are listed. The execution's timeline then draws the failed try,
// the Wait shaded and the critical path through the slow branch.
func TestConsoleTonight(t *testing.T) {
	t.Parallel()
	ctx := browserIn(t, "Asia/Tokyo")
	s := startServer(t, filepath.Join(t.TempDir(), "tonight.db"))
	c := s.client(t)
	bg := context.Background()
	act, err := c.CreateActivity(bg, &sfn.CreateActivityInput{Name: aws.String("extract")})
	require.NoError(t, err)
	sm := createMachine(t, c, "jobnet", `{"StartAt": "Night", "States": {
		"Night": {"Type": "Parallel", "Next": "Report", "Branches": [
			{"StartAt": "Extract", "States": {
				"Extract": {"Type": "Task", "Resource": "`+*act.ActivityArn+`", "Next": "Load",
					"Retry": [{"ErrorEquals": ["States.ALL"], "IntervalSeconds": 1, "MaxAttempts": 1}]},
				"Load": {"Type": "Pass", "End": true}}},
			{"StartAt": "Settle", "States": {
				"Settle": {"Type": "Wait", "Seconds": 1, "Next": "Index"},
				"Index": {"Type": "Pass", "End": true}}}]},
		"Report": {"Type": "Pass", "End": true}}}`)
	work := func(fail bool) {
		task, err := c.GetActivityTask(bg, &sfn.GetActivityTaskInput{ActivityArn: act.ActivityArn, WorkerName: aws.String("batch-1")})
		require.NoError(t, err)
		require.NotNil(t, task.TaskToken)
		if fail {
			_, err = c.SendTaskFailure(bg, &sfn.SendTaskFailureInput{TaskToken: task.TaskToken, Error: aws.String("DiskFull")})
		} else {
			_, err = c.SendTaskSuccess(bg, &sfn.SendTaskSuccessInput{TaskToken: task.TaskToken, Output: aws.String("{}")})
		}
		require.NoError(t, err)
	}
	// Three runs by hand: the usual durations.
	for i := 1; i <= 3; i++ {
		arn := startExecution(t, c, sm, fmt.Sprintf("rerun-%d", i), `{}`)
		work(false)
		require.Equal(t, "SUCCEEDED", string(waitDone(t, c, arn).Status))
	}

	// A schedule firing the next minute in Tokyo, and two later ones.
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	require.NoError(t, err)
	soon := time.Now().In(tokyo).Add(time.Minute).Truncate(time.Minute)
	sc := s.schedulerClient(t)
	for name, cron := range map[string]string{
		"jobnet":  fmt.Sprintf("cron(%d %d * * ? *)", soon.Minute(), soon.Hour()),
		"weekly":  fmt.Sprintf("cron(%d %d * * ? *)", soon.Add(3*time.Hour).Minute(), soon.Add(3*time.Hour).Hour()),
		"morning": "cron(0 6 * * ? *)",
	} {
		_, err = sc.CreateSchedule(bg, &scheduler.CreateScheduleInput{Name: aws.String(name), ScheduleExpression: aws.String(cron),
			ScheduleExpressionTimezone: aws.String("Asia/Tokyo"), FlexibleTimeWindow: &schedtypes.FlexibleTimeWindow{Mode: schedtypes.FlexibleTimeWindowModeOff},
			Target: &schedtypes.Target{Arn: aws.String(sm), RoleArn: aws.String(roleArn)}})
		require.NoError(t, err)
	}
	fired := "arn:aws:states:us-east-1:123456789012:execution:jobnet:jobnet-" + soon.Format("20060102T150405")
	testwait.Until(t, func() bool {
		_, err := c.DescribeExecution(bg, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(fired)})
		return err == nil
	}, 90*time.Second, 200*time.Millisecond, "the schedule fired")
	time.Sleep(500 * time.Millisecond) // its job runs past twice its usual duration

	do(t, ctx, chromedp.Navigate(s.url()+"/tonight"), chromedp.WaitVisible(css(`main[data-page="tonight"][data-zone="Asia/Tokyo"]`)))
	do(t, ctx, chromedp.Click(css(`a[data-lang="ja"]`)), chromedp.WaitVisible(css(`html[lang="ja"] #tonight`)))
	require.Contains(t, eval[string](t, ctx, `location.search`), "tz=Asia%2FTokyo")
	row := `[...document.querySelectorAll('#tonight tr')].find(r => r.textContent.includes('jobnet-` + soon.Format("20060102T150405") + `'))`
	require.Equal(t, "running", eval[string](t, ctx, row+`.getAttribute('data-status')`))
	require.Equal(t, "遅延: Extract", eval[string](t, ctx, row+`.querySelector('.late-flag').textContent`))
	require.Contains(t, eval[string](t, ctx, row+`.querySelector('time').textContent`), soon.Format("2006-01-02 15:04:05"), "in Tokyo's time")
	require.GreaterOrEqual(t, eval[int](t, ctx, `document.querySelectorAll('#tonight tr[data-status="not-yet"]').length`), 3, "tomorrow's and later ones")
	require.Equal(t, 3, eval[int](t, ctx, `document.querySelectorAll('#by-hand tbody tr[data-status="succeeded"]').length`))
	text := eval[string](t, ctx, `document.body.innerText`)
	require.Empty(t, englishStatus.FindAllString(text, -1), text)
	require.Contains(t, text, "今夜の予定")
	screenshot(t, ctx, "console-tonight-ja")

	// The execution's page: late too; then its job fails once, is
	// retried and succeeds.
	do(t, ctx, chromedp.Navigate(executionURL(s, fired)), chromedp.WaitVisible(css(`.late-warning[data-late-state="Extract"]`)))
	work(true)
	time.Sleep(300 * time.Millisecond)
	work(false)
	require.Equal(t, "SUCCEEDED", string(waitDone(t, c, fired).Status))
	do(t, ctx, chromedp.Navigate(executionURL(s, fired)), chromedp.WaitVisible(css(`#timeline-panel svg.timeline`)))
	require.Equal(t, 1, eval[int](t, ctx, `document.querySelectorAll('#timeline-panel g[data-state="Extract"] rect.seg-retry').length`))
	require.Equal(t, 1, eval[int](t, ctx, `document.querySelectorAll('#timeline-panel g[data-state="Settle"] rect.seg-wait').length`))
	require.Equal(t, []string{"Night", "Extract", "Load", "Report"}, eval[[]string](t, ctx,
		`[...document.querySelectorAll('#timeline-panel g.critical')].map(g => g.getAttribute('data-state'))`))
	require.Equal(t, 0, eval[int](t, ctx, `document.querySelectorAll('.late-warning').length`))
	text = eval[string](t, ctx, `document.querySelector('#timeline-panel').innerText`)
	require.Contains(t, text, "タイムライン")
	require.Contains(t, text, "クリティカルパス: Night → Extract → Load → Report")
	screenshot(t, ctx, "console-timeline-ja")
}
