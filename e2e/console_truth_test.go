package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"stepwise/internal/testkit/testwait"
)

// A redriven execution in the browser: after a redrive that succeeded,
// every node shows its last attempt (the job green, its Parallel green,
// not caught), the Parallel's retries are on its node (data-retries),
// and its details list the attempts that failed before.
func TestConsoleRedrivenExecution(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	s := startServer(t, filepath.Join(t.TempDir(), "redriven.db"))
	c := s.client(t)
	sm := createMachine(t, c, "nightly", `{"StartAt": "Nightly", "States": {
		"Nightly": {"Type": "Parallel", "Next": "Report",
			"Retry": [{"ErrorEquals": ["JobFailed"], "MaxAttempts": 2, "IntervalSeconds": 1, "BackoffRate": 1}],
			"Branches": [
				{"StartAt": "Extract", "States": {"Extract": {"Type": "Pass", "End": true}}},
				{"StartAt": "Job", "States": {
					"Job": {"Type": "Choice", "Choices": [{"Variable": "$$.Execution.RedriveCount", "NumericEquals": 0, "Next": "JobFails"}], "Default": "JobDone"},
					"JobFails": {"Type": "Fail", "Error": "JobFailed", "Cause": "`+strings.Repeat("the first night went wrong; ", 40)+`"},
					"JobDone": {"Type": "Pass", "End": true}}}]},
		"Report": {"Type": "Pass", "End": true}}}`)
	arn := startExecution(t, c, sm, "night-1127", `{}`)
	require.Equal(t, "FAILED", string(waitDone(t, c, arn).Status))

	// Failed: the Parallel failed after two retries.
	do(t, ctx, chromedp.Navigate(executionURL(s, arn)), chromedp.WaitVisible(css(`#graph [data-state="Nightly"]`)))
	require.Equal(t, "failed", nodeStatuses(t, ctx)["Nightly"])
	require.Equal(t, "2", eval[string](t, ctx, `document.querySelector('#graph [data-state="Nightly"]').dataset.retries`))
	// The long cause wraps in its box.
	require.True(t, eval[bool](t, ctx, `(() => { const e = document.querySelector('[data-field="cause"]');
		return e.textContent.length > 500 && e.scrollWidth <= e.parentElement.clientWidth + 1 })()`), "the execution's cause wraps")

	_, err := c.RedriveExecution(context.Background(), &sfn.RedriveExecutionInput{ExecutionArn: aws.String(arn)})
	require.NoError(t, err)
	require.Equal(t, "SUCCEEDED", string(waitDone(t, c, arn).Status))

	do(t, ctx, chromedp.Navigate(executionURL(s, arn)), chromedp.WaitVisible(css(`#graph [data-state="Nightly"]`)))
	require.Equal(t, map[string]string{"Nightly": "succeeded", "Extract": "succeeded", "Job": "succeeded", "JobFails": "not-run",
		"JobDone": "succeeded", "Report": "succeeded"}, nodeStatuses(t, ctx))
	retries := eval[map[string]string](t, ctx, `Object.fromEntries([...document.querySelectorAll('#graph [data-retries]')]
		.map(n => [n.dataset.state, n.dataset.retries]))`)
	require.Equal(t, map[string]string{"Nightly": "3"}, retries, "only the states that can retry carry data-retries")

	do(t, ctx, chromedp.Click(css(`#graph [data-state="Nightly"]`)), chromedp.WaitVisible(css(`#state-details ol.attempts`)))
	testwait.Until(t, func() bool {
		return eval[int](t, ctx, `document.querySelectorAll('#state-details ol.attempts li').length`) == 5
	}, 30*time.Second, 50*time.Millisecond, "the Parallel's five attempts are listed")
	require.Equal(t, []string{"failed", "failed", "failed", "failed", "succeeded"}, eval[[]string](t, ctx,
		`[...document.querySelectorAll('#state-details ol.attempts li')].map(li => li.dataset.status)`))
	require.True(t, eval[bool](t, ctx, `document.querySelector('#state-details ol.attempts li:last-child').hasAttribute('data-current')`))
	screenshot(t, ctx, "console-redriven-attempts")
}
