package e2e

import (
	"context"
	"net/url"
	"os"
	"os/exec"
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

// The console in a real headless Chromium (Debian's chromium package,
// installed by scripts/install-chromium.sh): the graph colored by what
// happened, a node turning from running to succeeded without a reload,
// Stop and Redrive, and Japanese. Screenshots land in
// $STEPWISE_SCREENSHOTS when it is set (docs/ has a few).

// browser starts a headless Chromium for the test, or skips it.
func browser(t testing.TB) context.Context {
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
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.WindowSize(1400, 1000))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel2 := chromedp.NewContext(actx)
	t.Cleanup(cancel2)
	// The first call starts the browser: no timeout on it.
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate("about:blank")))
	return ctx
}

// do runs browser steps, for 30 s at the most.
func do(t testing.TB, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	require.NoError(t, chromedp.Do(ctx, steps...))
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](t testing.TB, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	require.NoError(t, err, expr)
	return v
}

type css = chromedp.CSS

func screenshot(t testing.TB, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("STEPWISE_SCREENSHOTS")
	if dir == "" {
		return
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644))
}

// nodeStatuses reads the data-status of every node of the drawn graph.
func nodeStatuses(t testing.TB, ctx context.Context) map[string]string {
	t.Helper()
	return eval[map[string]string](t, ctx, `Object.fromEntries([...document.querySelectorAll('#graph [data-state]')]
		.filter(n => !n.dataset.state.startsWith('__') && n.dataset.state !== 'Start' && n.dataset.state !== 'End')
		.map(n => [n.dataset.state, n.dataset.status]))`)
}

func executionURL(s *server, arn string) string {
	return s.url() + "/executions/" + url.PathEscape(arn)
}

func TestConsoleInTheBrowser(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	s := startServer(t, filepath.Join(t.TempDir(), "console.db"))
	c := s.client(t)

	// A Parallel: one branch fails and is caught, one is cancelled, one
	// succeeds; the state after the Parallel never runs.
	par := createMachine(t, c, "parallel", `{"StartAt": "P", "States": {
		"P": {"Type": "Parallel", "Branches": [
			{"StartAt": "Slow", "States": {"Slow": {"Type": "Wait", "Seconds": 60, "End": true}}},
			{"StartAt": "Quick", "States": {"Quick": {"Type": "Pass", "End": true}}},
			{"StartAt": "Boom", "States": {"Boom": {"Type": "Fail", "Error": "Boom", "Cause": "on purpose"}}}],
			"Catch": [{"ErrorEquals": ["States.ALL"], "Next": "Caught"}], "Next": "Never"},
		"Caught": {"Type": "Pass", "End": true},
		"Never": {"Type": "Succeed"}}}`)
	exec := startExecution(t, c, par, "caught", `{"order": 7}`)
	require.Equal(t, "SUCCEEDED", string(waitDone(t, c, exec).Status))
	do(t, ctx, chromedp.Navigate(executionURL(s, exec)), chromedp.WaitVisible(css(`#graph [data-state="Boom"]`)))
	require.Equal(t, map[string]string{"P": "caught", "Slow": "cancelled", "Quick": "succeeded", "Boom": "failed", "Caught": "succeeded", "Never": "not-run"},
		nodeStatuses(t, ctx))
	// A click on a node shows its details.
	do(t, ctx, chromedp.Click(css(`#graph [data-state="Boom"]`)))
	testwait.Until(t, func() bool {
		return strings.Contains(eval[string](t, ctx, `document.querySelector('#state-details').textContent`), "on purpose")
	}, 30*time.Second, 50*time.Millisecond, "the details of Boom show its cause")
	screenshot(t, ctx, "console-execution")

	// A Map's iterations: a click on one opens it, with the states that
	// ran within it.
	mapped := createMachine(t, c, "mapped", `{"StartAt": "Each", "States": {"Each": {"Type": "Map", "End": true,
		"ItemProcessor": {"StartAt": "Check", "States": {
			"Check": {"Type": "Choice", "Choices": [{"Variable": "$", "NumericEquals": 2, "Next": "Bad"}], "Default": "Good"},
			"Bad": {"Type": "Fail", "Error": "Two", "Cause": "item two"},
			"Good": {"Type": "Pass", "End": true}}}}}}`)
	mapExec := startExecution(t, c, mapped, "items", `[1, 2, 3]`)
	require.Equal(t, "FAILED", string(waitDone(t, c, mapExec).Status))
	do(t, ctx, chromedp.Navigate(executionURL(s, mapExec)), chromedp.WaitVisible(css(`#graph [data-state="Each"]`)),
		chromedp.Click(css(`#graph [data-state="Each"]`)),
		chromedp.WaitVisible(css(`#state-details button.link[data-index="1"]`)),
		chromedp.Click(css(`#state-details button.link[data-index="1"]`)),
		chromedp.WaitVisible(css(`#state-details article.iteration-state[data-state="Bad"][data-status="failed"]`)))
	require.Equal(t, []string{"Check", "Bad"}, eval[[]string](t, ctx,
		`[...document.querySelectorAll('#state-details article.iteration-state')].map(a => a.dataset.state)`))
	require.Contains(t, eval[string](t, ctx, `document.querySelector('#state-details').textContent`), "item two")
	screenshot(t, ctx, "console-map-iteration")
	// Back to the Map's own details.
	do(t, ctx, chromedp.Click(css(`#state-details button.back`)), chromedp.WaitVisible(css(`#state-details button.link[data-index="0"]`)))

	// A running execution's node turns from running to succeeded, live.
	slow := createMachine(t, c, "slow", `{"StartAt": "Hold", "States": {"Hold": {"Type": "Wait", "Seconds": 3, "Next": "Done"}, "Done": {"Type": "Pass", "End": true}}}`)
	running := startExecution(t, c, slow, "live", `{}`)
	do(t, ctx, chromedp.Navigate(executionURL(s, running)), chromedp.WaitVisible(css(`#graph [data-state="Hold"]`)))
	eval[bool](t, ctx, `window.__stillHere = true`)
	require.Equal(t, "running", nodeStatuses(t, ctx)["Hold"])
	do(t, ctx, chromedp.WaitVisible(css(`#graph [data-state="Done"][data-status="succeeded"]`)))
	require.Equal(t, "succeeded", nodeStatuses(t, ctx)["Hold"])
	require.True(t, eval[bool](t, ctx, `window.__stillHere === true`), "the page updated without a reload")

	// Stop, then Redrive, through the API.
	stopping := startExecution(t, c, slow, "stop-me", `{}`)
	do(t, ctx, chromedp.Navigate(executionURL(s, stopping)), chromedp.WaitVisible(css(`button[data-action="StopExecution"]`)))
	eval[bool](t, ctx, `(window.confirm = () => true, true)`)
	do(t, ctx, chromedp.Click(css(`button[data-action="StopExecution"]`)))
	testwait.Until(t, func() bool {
		d, err := c.DescribeExecution(context.Background(), &sfn.DescribeExecutionInput{ExecutionArn: aws.String(stopping)})
		return err == nil && d.Status == "ABORTED"
	}, 30*time.Second, 50*time.Millisecond)
	// The page reloads after the stop: Redrive is on once it has.
	do(t, ctx, chromedp.WaitVisible(css(`main[data-status="ABORTED"] button[data-action="RedriveExecution"]:not([disabled])`)))
	eval[bool](t, ctx, `(window.confirm = () => true, true)`)
	do(t, ctx, chromedp.Click(css(`button[data-action="RedriveExecution"]`)))
	testwait.Until(t, func() bool {
		d, err := c.DescribeExecution(context.Background(), &sfn.DescribeExecutionInput{ExecutionArn: aws.String(stopping)})
		return err == nil && aws.ToInt32(d.RedriveCount) == 1
	}, 30*time.Second, 50*time.Millisecond)

	// Japanese.
	do(t, ctx, chromedp.WaitVisible(css(`main[data-status="RUNNING"][data-page="execution"]`)))
	screenshot(t, ctx, "console-redriven")
	do(t, ctx, chromedp.Navigate(s.url()+"/"), chromedp.WaitVisible(css(`main[data-page="state-machines"] a`)), chromedp.Click(css(`a[data-lang="ja"]`)),
		chromedp.WaitVisible(css(`html[lang="ja"] main[data-page="state-machines"] h1`)))
	require.Equal(t, "ステートマシン", strings.TrimSpace(eval[string](t, ctx, `document.querySelector('h1').textContent`)))
	screenshot(t, ctx, "console-state-machines-ja")
	do(t, ctx, chromedp.Navigate(s.url()+"/state-machines/"+url.PathEscape(par)), chromedp.WaitVisible(css(`#graph [data-state="P"]`)))
	screenshot(t, ctx, "console-state-machine")
}

// An execution whose distributed Map ran shows its map run in the
// browser: the counts and the children, each opening its own page with
// the ItemProcessor's graph colored and a way back to the parent.
func TestConsoleMapRun(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	s := startServer(t, filepath.Join(t.TempDir(), "maprun.db"))
	c := s.client(t)
	def, err := os.ReadFile("../examples/distributed-map.asl.json")
	require.NoError(t, err)
	sm := createMachine(t, c, "grades", string(def))
	arn := startExecution(t, c, sm, "class-7b", `{"class": "7b", "passMark": 50, "students": [{"name": "ada", "score": 91},
		{"name": "alan", "score": 40}, {"name": "grace", "score": -1}, {"name": "edsger", "score": 77}, {"name": "barbara", "score": 66}]}`)
	require.Equal(t, "SUCCEEDED", string(waitDone(t, c, arn).Status))

	do(t, ctx, chromedp.Navigate(executionURL(s, arn)), chromedp.WaitVisible(css(`#map-runs .map-run`)))
	counts := eval[[]string](t, ctx, `[...document.querySelectorAll('#map-runs tr[data-counts="items"] td')].map(td => td.textContent)`)
	require.Equal(t, []string{"0", "0", "3", "2", "0", "0", "5"}, counts)
	require.Equal(t, 3, eval[int](t, ctx, `document.querySelectorAll('#map-runs table.children tbody tr').length`))
	screenshot(t, ctx, "console-map-run")

	// A failed child: its page colors the ItemProcessor's graph.
	do(t, ctx, chromedp.Click(css(`#map-runs table.children tr:has([data-status="failed"]) a`)),
		chromedp.WaitVisible(css(`#parent-map-run`)), chromedp.WaitVisible(css(`#graph [data-state="BadScore"][data-status="failed"]`)))
	require.Equal(t, "succeeded", nodeStatuses(t, ctx)["Check"])
	require.True(t, eval[bool](t, ctx, `document.querySelector('[data-action="RedriveExecution"]').disabled`), "a child is redriven with its parent")
	require.Equal(t, "/state-machines/"+url.PathEscape(sm), eval[string](t, ctx, `document.querySelector('.crumbs a:nth-of-type(2)').getAttribute('href')`))
	screenshot(t, ctx, "console-map-run-child")
	do(t, ctx, chromedp.Click(css(`#parent-map-run a`)), chromedp.WaitVisible(css(`#map-runs`)))
}
