package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	schedtypes "github.com/aws/aws-sdk-go-v2/service/scheduler/types"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"stepwise/internal/testkit/testwait"
)

// browserIn starts a headless Chromium whose time zone is zone (its TZ),
// or skips the test as browser does.
func browserIn(t testing.TB, zone string) context.Context {
	t.Helper()
	path := os.Getenv("STEPWISE_CHROMIUM")
	if path == "" {
		path, _ = exec.LookPath("chromium")
	}
	if path == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("Chromium is required on CI: run scripts/install-chromium.sh")
		}
		t.Skip("skipping the browser test: Chromium is not installed (scripts/install-chromium.sh installs it)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.WindowSize(1400, 1000),
		chromedp.Env("TZ="+zone))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel2 := chromedp.NewContext(actx)
	t.Cleanup(cancel2)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate("about:blank")))
	return ctx
}

// English status and panel words a Japanese page must not show (event
// types as ExecutionSucceeded are AWS's names, and stay).
var englishStatus = regexp.MustCompile(`\b(SUCCEEDED|FAILED|RUNNING|ABORTED|TIMED_OUT|PENDING_REDRIVE|ENABLED|DISABLED|` +
	`[Ss]ucceeded|[Ff]ailed|[Cc]aught|[Rr]unning|[Cc]ancelled|[Nn]ot run|Retries|Duration|Input|Output|Started|Stopped|Attempts|last attempt)\b`)

// In a browser in Asia/Tokyo the console writes an execution's times in
// Tokyo's time, names the zone in its header, and switches to UTC (and
// remembers it); a schedule's times are in the schedule's zone; and a
// Japanese page, with a state's panel open, shows no English status word.
func TestConsoleTimeZonesAndJapanese(t *testing.T) {
	t.Parallel()
	ctx := browserIn(t, "Asia/Tokyo")
	s := startServer(t, filepath.Join(t.TempDir(), "zones.db"))
	c := s.client(t)
	sm := createMachine(t, c, "jobnet", `{"StartAt": "Night", "States": {
		"Night": {"Type": "Parallel", "Next": "Report",
			"Retry": [{"ErrorEquals": ["JobFailed"], "MaxAttempts": 1, "IntervalSeconds": 1}],
			"Catch": [{"ErrorEquals": ["States.ALL"], "Next": "Recover"}],
			"Branches": [
				{"StartAt": "Extract", "States": {"Extract": {"Type": "Pass", "End": true}}},
				{"StartAt": "Job", "States": {"Job": {"Type": "Fail", "Error": "JobFailed", "Cause": "ジョブが異常終了"}}}]},
		"Recover": {"Type": "Pass", "End": true},
		"Report": {"Type": "Pass", "End": true}}}`)
	arn := startExecution(t, c, sm, "jobnet-20261127", `{"date": "20261127"}`)
	x := waitDone(t, c, arn)
	require.Equal(t, "SUCCEEDED", string(x.Status))
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	require.NoError(t, err)
	inTokyo := aws.ToTime(x.StartDate).In(tokyo).Format("2006-01-02 15:04:05.000") + " UTC+9"
	inUTC := aws.ToTime(x.StartDate).UTC().Format("2006-01-02 15:04:05.000") + " UTC"

	started := `document.querySelector('dl.facts time').textContent`
	do(t, ctx, chromedp.Navigate(executionURL(s, arn)), chromedp.WaitVisible(css(`#graph [data-state="Night"]`)),
		chromedp.WaitVisible(css(`[data-field="time-zone"] button[data-tz="utc"]`)))
	require.Equal(t, "Asia/Tokyo", eval[string](t, ctx, `Intl.DateTimeFormat().resolvedOptions().timeZone`))
	require.Equal(t, inTokyo, eval[string](t, ctx, started), "the start date in Tokyo's time")
	require.Contains(t, eval[string](t, ctx, `document.querySelector('[data-field="time-zone"]').textContent`), "Asia/Tokyo (UTC+9)")
	require.Equal(t, "true", eval[string](t, ctx, `document.querySelector('[data-tz="local"]').getAttribute('aria-pressed')`))
	// Every time of the history too.
	require.True(t, eval[bool](t, ctx, `[...document.querySelectorAll('#history time')].every(e => e.textContent.endsWith(' UTC+9'))`))

	// The switch to UTC, remembered on the next page.
	do(t, ctx, chromedp.Click(css(`[data-field="time-zone"] button[data-tz="utc"]`)))
	testwait.Until(t, func() bool { return eval[string](t, ctx, started) == inUTC }, 30*time.Second, 50*time.Millisecond, "the start date in UTC")
	require.True(t, eval[bool](t, ctx, `[...document.querySelectorAll('#history time')].every(e => e.textContent.endsWith(' UTC'))`))
	do(t, ctx, chromedp.Reload(), chromedp.WaitVisible(css(`[data-field="time-zone"] button[data-tz="utc"][aria-pressed="true"]`)))
	require.Equal(t, inUTC, eval[string](t, ctx, started))
	do(t, ctx, chromedp.Click(css(`[data-field="time-zone"] button[data-tz="local"]`)))
	testwait.Until(t, func() bool { return eval[string](t, ctx, started) == inTokyo }, 30*time.Second, 50*time.Millisecond, "back in Tokyo's time")

	// In Japanese, with the Parallel's panel open (its status, retries,
	// attempts): no English status word, and its attempts in Tokyo's time.
	do(t, ctx, chromedp.Click(css(`a[data-lang="ja"]`)), chromedp.WaitVisible(css(`html[lang="ja"] #graph [data-state="Night"]`)),
		chromedp.Click(css(`#graph [data-state="Night"]`)), chromedp.WaitVisible(css(`#state-details ol.attempts time`)))
	require.Equal(t, "成功", eval[string](t, ctx, `document.querySelector('h1 [data-field="status"]').textContent`))
	require.Equal(t, "キャッチ済み", eval[string](t, ctx, `document.querySelector('#state-details .details-head .badge').textContent`))
	require.Equal(t, []string{"開始", "終了"}, eval[[]string](t, ctx, `['__start__', '__end__'].map(id => document.querySelector('#graph [data-state="' + id + '"] text').textContent)`))
	require.True(t, eval[bool](t, ctx, `[...document.querySelectorAll('#state-details time')].every(e => / UTC\+9$/.test(e.textContent))`))
	require.Contains(t, eval[string](t, ctx, `document.querySelector('[data-field="time-zone"]').textContent`), "タイムゾーン")
	text := eval[string](t, ctx, `document.body.innerText`)
	require.Empty(t, englishStatus.FindAllString(text, -1), text)
	screenshot(t, ctx, "console-execution-ja-tokyo")

	// The state machines and the activities in Japanese.
	for _, page := range []string{"/", "/activities"} {
		do(t, ctx, chromedp.Navigate(s.url()+page), chromedp.WaitVisible(css(`html[lang="ja"] main h1`)))
		text = eval[string](t, ctx, `document.body.innerText`)
		require.Empty(t, englishStatus.FindAllString(text, -1), text)
	}
	require.Contains(t, text, "アクティビティ")

	// The state machine's list in Japanese: its status filters too.
	do(t, ctx, chromedp.Navigate(s.url()+"/state-machines/"+sm), chromedp.WaitVisible(css(`nav.filters`)))
	text = eval[string](t, ctx, `document.body.innerText`)
	require.Empty(t, englishStatus.FindAllString(text, -1), text)
	require.Contains(t, eval[string](t, ctx, `document.querySelector('nav.filters').innerText`), "成功")

	// A schedule in Europe/London: its next runs at 02:00 London time,
	// in a browser in Tokyo.
	_, err = s.schedulerClient(t).CreateSchedule(context.Background(), &scheduler.CreateScheduleInput{
		Name: aws.String("nightly"), ScheduleExpression: aws.String("cron(0 2 * * ? *)"),
		ScheduleExpressionTimezone: aws.String("Europe/London"),
		FlexibleTimeWindow:         &schedtypes.FlexibleTimeWindow{Mode: schedtypes.FlexibleTimeWindowModeOff},
		Target:                     &schedtypes.Target{Arn: aws.String(sm), RoleArn: aws.String(roleArn)},
	})
	require.NoError(t, err)
	do(t, ctx, chromedp.Navigate(s.url()+"/schedule-list"), chromedp.WaitVisible(css(`[data-schedule="default/nightly"] [data-field="next"] time`)))
	next := eval[[]string](t, ctx, `[...document.querySelectorAll('[data-schedule="default/nightly"] [data-field="next"] time')].map(e => e.textContent)`)
	require.NotEmpty(t, next)
	for _, n := range next {
		require.True(t, strings.HasSuffix(n, " 02:00:00 UTC") || strings.HasSuffix(n, " 02:00:00 UTC+1"), "a next run in London's time: %q", n)
	}
	text = eval[string](t, ctx, `document.body.innerText`)
	require.Empty(t, englishStatus.FindAllString(text, -1), text)
	require.Contains(t, text, "有効")
	screenshot(t, ctx, "console-schedules-ja")
}
