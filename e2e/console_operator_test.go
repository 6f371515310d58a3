package e2e

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"stepwise/internal/testkit/testwait"
)

// The operator controls in the console, in Japanese, signed in: hold a
// state picked on the graph, suspend and resume, skip the held Task with
// an output (a bad one refused in the page), kill the next Task's running
// job; the held state and the suspended execution on the graph and in
// the header; the operator log naming the console's user; a state
// machine's hold for every execution. docs/console-operator-ja.png is
// its screenshot.
func TestConsoleOperatorControlsInTheBrowser(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	s := startAuthServer(t)
	c := s.clientAs(t, authKeyID, authSecret, "")
	bg := context.Background()
	act, err := c.CreateActivity(bg, &sfn.CreateActivityInput{Name: aws.String("batch")})
	require.NoError(t, err)
	sm := createMachine(t, c, "nightly", `{"StartAt": "Extract", "States": {
		"Extract": {"Type": "Wait", "Seconds": 2, "Next": "Load"},
		"Load": {"Type": "Task", "Resource": "`+aws.ToString(act.ActivityArn)+`", "Next": "Report"},
		"Report": {"Type": "Task", "Resource": "`+aws.ToString(act.ActivityArn)+`", "Catch": [{"ErrorEquals": ["Ops.Killed"], "Next": "Stopped"}], "End": true},
		"Stopped": {"Type": "Fail", "Error": "Ops.Killed", "Cause": "killed by an operator"}}}`)

	// Sign in, in Japanese.
	do(t, ctx, chromedp.Navigate(s.url()+"/activities"), chromedp.WaitVisible(css(`main[data-page="sign-in"]`)),
		chromedp.Click(css(`a[data-lang="ja"]`)), chromedp.WaitVisible(css(`html[lang="ja"] main[data-page="sign-in"]`)),
		chromedp.SendKeys(css(`input[name="access_key_id"]`), authKeyID),
		chromedp.SendKeys(css(`input[name="secret_access_key"]`), authSecret),
		chromedp.Click(css(`form.signin button[type="submit"]`)),
		chromedp.WaitNotPresent(css(`main[data-page="sign-in"]`)))
	arn := startExecution(t, c, sm, "night-1", `{}`)
	start := time.Now()
	page := s.url() + "/executions/" + url.PathEscape(arn)
	navigate(t, ctx, page)
	do(t, ctx, chromedp.WaitVisible(css(`html[lang="ja"] #operator-form`)))
	require.Equal(t, "運用操作", strings.TrimSpace(eval[string](t, ctx, `document.querySelector('#operator-controls h2').textContent`)))
	eval[bool](t, ctx, `(window.confirm = () => true, true)`)

	// Hold Load, picked on the graph.
	do(t, ctx, chromedp.Click(css(`#graph [data-state="Load"]`)))
	require.Equal(t, "Load", eval[string](t, ctx, `document.querySelector('#operator-form select[name="state"]').value`))
	do(t, ctx, chromedp.Click(css(`#operator-form button[data-op="HoldState"]`)), chromedp.WaitVisible(css(`#held-badge`)))
	require.Equal(t, "保留中: Load", eval[string](t, ctx, `document.querySelector('#held-badge').textContent`))
	// Past Extract: parked before Load, which the graph shows held.
	time.Sleep(time.Until(start.Add(2500 * time.Millisecond)))
	require.False(t, entered(t, c, arn, "Load"))
	navigate(t, ctx, page)
	do(t, ctx, chromedp.WaitVisible(css(`#graph [data-state="Load"][data-status="held"]`)))

	// Suspend: the header and the graph say so.
	do(t, ctx, chromedp.Click(css(`#operator-controls button[data-op="SuspendExecution"]`)), chromedp.WaitVisible(css(`#suspended-badge`)))
	require.Equal(t, "中断中", eval[string](t, ctx, `document.querySelector('#suspended-badge').textContent`))
	require.True(t, eval[bool](t, ctx, `document.querySelector('.graph-panel').hasAttribute('data-suspended')`))
	require.Equal(t, []string{"保留中", "中断中"}, eval[[]string](t, ctx,
		`[...document.querySelectorAll('ul.legend li[data-status="held"], ul.legend li[data-status="suspended"]')].map(l => l.textContent)`))
	do(t, ctx, chromedp.WaitVisible(css(`#graph [data-state="Load"][data-status="held"]`)))
	require.Equal(t, []string{"保留", "中断"}, eval[[]string](t, ctx, `[...document.querySelectorAll('#operator-actions tbody tr')].map(r => r.cells[2].textContent)`))
	require.Equal(t, []string{"console:" + authKeyID, "console:" + authKeyID}, eval[[]string](t, ctx,
		`[...document.querySelectorAll('#operator-actions tbody tr')].map(r => r.cells[1].textContent)`))
	require.Equal(t, "オペレーター操作", strings.TrimSpace(eval[string](t, ctx, `document.querySelector('#operator-actions h2').textContent`)))
	screenshot(t, ctx, "console-operator-ja")

	// Resume; skip the held Load, a bad output first.
	do(t, ctx, chromedp.Click(css(`#operator-controls button[data-op="ResumeExecution"]`)),
		chromedp.WaitVisible(css(`#operator-controls button[data-op="SuspendExecution"]:not([disabled])`)))
	do(t, ctx, chromedp.SetValue(css(`#operator-form select[name="state"]`), "Load"),
		chromedp.SetValue(css(`#operator-form textarea[name="output"]`), `{"rows": `),
		chromedp.Click(css(`#operator-form button[data-op="SkipState"]`)))
	testwait.Until(t, func() bool {
		return eval[bool](t, ctx, `document.querySelector('#operator-form textarea').getAttribute('aria-invalid') === 'true'`)
	}, 10*time.Second, 50*time.Millisecond, "the bad output is marked")
	require.Contains(t, eval[string](t, ctx, `document.querySelector('#operator-form [data-field="action-error"]').textContent`), "出力が正しい JSON ではありません")
	eval[bool](t, ctx, `(window.confirm = () => true, true)`)
	do(t, ctx, chromedp.SetValue(css(`#operator-form textarea[name="output"]`), `{"rows": 42}`),
		chromedp.Click(css(`#operator-form button[data-op="SkipState"]`)))
	testwait.Until(t, func() bool { return entered(t, c, arn, "Report") }, 30*time.Second, 50*time.Millisecond, "Load skipped, Report runs")

	// Kill Report's running task: its Catch applies.
	navigate(t, ctx, page)
	do(t, ctx, chromedp.WaitVisible(css(`#operator-form`)),
		chromedp.SetValue(css(`#operator-form select[name="state"]`), "Report"),
		chromedp.SetValue(css(`#operator-form input[name="error"]`), "Ops.Killed"),
		chromedp.SetValue(css(`#operator-form input[name="cause"]`), "夜間停止"),
	)
	eval[bool](t, ctx, `(window.confirm = () => true, true)`)
	do(t, ctx, chromedp.Click(css(`#operator-form button[data-op="KillState"]`)))
	done := waitDone(t, c, arn)
	require.Equal(t, "FAILED", string(done.Status))
	require.Equal(t, "killed by an operator", aws.ToString(done.Cause))
	// The page reloads after the kill; then read it again, ended.
	do(t, ctx, chromedp.WaitVisible(css(`main[data-status="FAILED"] #operator-actions`)))
	navigate(t, ctx, page)
	do(t, ctx, chromedp.WaitVisible(css(`main[data-status="FAILED"] #operator-actions`)))
	require.Equal(t, []string{"保留", "中断", "再開", "スキップ", "強制終了"}, eval[[]string](t, ctx,
		`[...document.querySelectorAll('#operator-actions tbody tr')].map(r => r.cells[2].textContent)`))
	require.Contains(t, eval[string](t, ctx, `document.querySelector('#operator-actions').textContent`), "夜間停止")
	require.Zero(t, eval[int](t, ctx, `document.querySelectorAll('#operator-form').length`))

	// A state machine's hold, for every execution.
	do(t, ctx, chromedp.Navigate(s.url()+"/state-machines/"+url.PathEscape(sm)), chromedp.WaitVisible(css(`#operator-form`)),
		chromedp.SetValue(css(`#operator-form select[name="state"]`), "Report"),
		chromedp.Click(css(`#operator-form button[data-op="HoldState"]`)),
		chromedp.WaitVisible(css(`#held-states`)))
	require.Contains(t, eval[string](t, ctx, `document.querySelector('#held-states').textContent`), "Report")
	tags, err := c.ListTagsForResource(bg, &sfn.ListTagsForResourceInput{ResourceArn: aws.String(sm)})
	require.NoError(t, err)
	require.Len(t, tags.Tags, 1)
	require.Equal(t, "stepwise:hold/Report", aws.ToString(tags.Tags[0].Key))
	require.Equal(t, "console:"+authKeyID, aws.ToString(tags.Tags[0].Value))
}

// navigate opens page, again when the page a control just reloads
// aborts the navigation (net::ERR_ABORTED).
func navigate(t testing.TB, ctx context.Context, page string) {
	t.Helper()
	var err error
	for range 5 {
		nctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err = chromedp.Do(nctx, chromedp.Navigate(page))
		cancel()
		if err == nil || !strings.Contains(err.Error(), "ERR_ABORTED") {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	require.NoError(t, err)
}
