package e2e

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"stepwise/internal/testkit/testwait"
)

// The rerun form of the console, in Japanese, signed in: a failed
// night's page previews a rerun from NEXT (a bad output refused in the
// page), the preview listed; then the rerun as previewed completes the
// night with the output given.
func TestConsoleRerunInTheBrowser(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	s := startAuthServer(t)
	c := s.clientAs(t, authKeyID, authSecret, "")
	bg := context.Background()
	act, err := c.CreateActivity(bg, &sfn.CreateActivityInput{Name: aws.String("load")})
	require.NoError(t, err)
	sm := createMachine(t, c, "nightly", rerunNet(aws.ToString(act.ActivityArn), ""))
	arn := startExecution(t, c, sm, "night-1", `{}`)
	task, err := c.GetActivityTask(bg, &sfn.GetActivityTaskInput{ActivityArn: act.ActivityArn})
	require.NoError(t, err)
	_, err = c.SendTaskFailure(bg, &sfn.SendTaskFailureInput{TaskToken: task.TaskToken, Error: aws.String("Job.Failed")})
	require.NoError(t, err)
	require.Equal(t, types.ExecutionStatusFailed, waitDone(t, c, arn).Status)

	do(t, ctx, chromedp.Navigate(s.url()+"/activities"), chromedp.WaitVisible(css(`main[data-page="sign-in"]`)),
		chromedp.Click(css(`a[data-lang="ja"]`)), chromedp.WaitVisible(css(`html[lang="ja"] main[data-page="sign-in"]`)),
		chromedp.SendKeys(css(`input[name="access_key_id"]`), authKeyID),
		chromedp.SendKeys(css(`input[name="secret_access_key"]`), authSecret),
		chromedp.Click(css(`form.signin button[type="submit"]`)),
		chromedp.WaitNotPresent(css(`main[data-page="sign-in"]`)))
	do(t, ctx, chromedp.Navigate(s.url()+"/executions/"+url.PathEscape(arn)), chromedp.WaitVisible(css(`html[lang="ja"] #rerun-form`)))
	require.Equal(t, "再実行", strings.TrimSpace(eval[string](t, ctx, `document.querySelector('#rerun h2').textContent`)))
	require.True(t, eval[bool](t, ctx, `document.querySelector('#rerun-form button[data-rerun="run"]').disabled`), "no rerun before a preview")

	// NEXT shows the output, hides the state; a bad output is refused.
	do(t, ctx, chromedp.SetValue(css(`#rerun-form select[name="from"]`), "NEXT"))
	eval[bool](t, ctx, `(document.querySelector('#rerun-form select[name="from"]').dispatchEvent(new Event('change')), true)`)
	require.False(t, eval[bool](t, ctx, `document.querySelector('#rerun-form [data-rerun-for="NEXT"]').hidden`))
	require.True(t, eval[bool](t, ctx, `document.querySelector('#rerun-form [data-rerun-for="STATE"]').hidden`))
	do(t, ctx, chromedp.SetValue(css(`#rerun-form textarea[name="output"]`), `{"rows": `),
		chromedp.Click(css(`#rerun-form button[data-rerun="preview"]`)))
	require.Equal(t, "true", eval[string](t, ctx, `document.querySelector('#rerun-form textarea').getAttribute('aria-invalid')`))
	require.Contains(t, eval[string](t, ctx, `document.querySelector('#rerun-form [data-field="action-error"]').textContent`), "出力が正しい JSON ではありません")

	// The preview, then the rerun.
	do(t, ctx, chromedp.SetValue(css(`#rerun-form textarea[name="output"]`), `{"rows": 5}`),
		chromedp.Click(css(`#rerun-form button[data-rerun="preview"]`)),
		chromedp.WaitVisible(css(`#rerun-preview`)))
	require.Equal(t, []string{"モード", "開始する状態", "再実行する状態", "結果を引き継ぐ状態", "追加された状態", "削除された状態", "変更された状態"},
		eval[[]string](t, ctx, `[...document.querySelectorAll('#rerun-preview dt')].map(d => d.textContent)`))
	require.Equal(t, []string{"NEXT", "Report", "Report", "Extract, Load", "なし", "なし", "なし"},
		eval[[]string](t, ctx, `[...document.querySelectorAll('#rerun-preview dd')].map(d => d.textContent)`))
	d, err := c.DescribeExecution(bg, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
	require.NoError(t, err)
	require.Equal(t, types.ExecutionStatusFailed, d.Status, "a preview changes nothing")
	eval[bool](t, ctx, `(window.confirm = () => true, true)`)
	do(t, ctx, chromedp.Click(css(`#rerun-form button[data-rerun="run"]:not([disabled])`)))
	testwait.Until(t, func() bool {
		d, err := c.DescribeExecution(bg, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
		require.NoError(t, err)
		return aws.ToInt32(d.RedriveCount) == 1
	}, 30*time.Second, 20*time.Millisecond, "the rerun is made")
	done := waitDone(t, c, arn)
	require.Equal(t, types.ExecutionStatusSucceeded, done.Status)
	require.JSONEq(t, `{"rows": 5}`, aws.ToString(done.Output))
	require.Equal(t, int32(1), aws.ToInt32(done.RedriveCount))
}
