package console_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/service"
)

// A FAILED, TIMED_OUT or ABORTED execution's page offers a rerun: the
// modes, the states of the graph for STATE, the output for NEXT, a
// preview and the rerun; a running or succeeded one does not. In
// Japanese, the form speaks Japanese.
func TestRerunFormOnTheExecutionPage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	sm := b.create(t, "net", `{"StartAt": "Extract", "States": {"Extract": {"Type": "Pass", "Next": "W"},
		"W": {"Type": "Wait", "Seconds": 3600, "Next": "Load"}, "Load": {"Type": "Pass", "End": true}}}`)
	arn := b.start(t, sm, "night-1", `{}`)
	_, page := b.get(t, "/executions/"+url.PathEscape(arn))
	require.NotContains(t, page, `id="rerun-form"`)

	_, err := b.svc.StopExecution(ctx, &service.StopExecutionInput{ExecutionArn: arn})
	require.NoError(t, err)
	require.Equal(t, "ABORTED", b.wait(t, arn))
	status, page := b.get(t, "/executions/"+url.PathEscape(arn))
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, page, `<form id="rerun-form" data-arn="`+arn+`">`)
	require.Contains(t, page, `<h2>Rerun</h2>`)
	require.Contains(t, page, `<select name="from"><option value="FAILED">The failed states (FAILED)</option><option value="NEXT">The state after the failed one (NEXT)</option><option value="STATE">A state (STATE)</option><option value="TOP">The first state (TOP)</option><option value="WARNINGS">The states that ended with warning (WARNINGS)</option></select>`)
	require.Contains(t, page, `<label data-rerun-for="STATE" hidden>State <select name="state"><option value="Extract">Extract</option><option value="W">W</option><option value="Load">Load</option></select></label>`)
	require.Contains(t, page, `<label data-rerun-for="NEXT" hidden>The failed state&#39;s output (JSON) <textarea name="output"`)
	require.Contains(t, page, `<button type="submit" data-rerun="preview">Preview</button>`)
	require.Contains(t, page, `<button type="submit" data-rerun="run" disabled>Rerun</button>`)
	require.Contains(t, page, `"confirmRerun":"Rerun this execution as previewed?"`)

	req, err := http.NewRequest(http.MethodGet, b.srv.URL+"/executions/"+url.PathEscape(arn), nil)
	require.NoError(t, err)
	req.Header.Set("Accept-Language", "ja")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	ja := string(body)
	require.Contains(t, ja, `<h2>再実行</h2>`)
	require.Contains(t, ja, `<option value="NEXT">失敗した状態の次から</option>`)
	require.Contains(t, ja, `<button type="submit" data-rerun="preview">プレビュー</button>`)
	require.Contains(t, ja, `<button type="submit" data-rerun="run" disabled>再実行</button>`)
	require.Contains(t, ja, `"rerunStates":"再実行する状態"`)

	done := b.create(t, "quick", `{"StartAt": "P", "States": {"P": {"Type": "Pass", "End": true}}}`)
	arn = b.start(t, done, "night-1", `{}`)
	require.Equal(t, "SUCCEEDED", b.wait(t, arn))
	_, page = b.get(t, "/executions/"+url.PathEscape(arn))
	require.NotContains(t, page, `id="rerun-form"`)
}

// The operator log on an execution's page lists its reruns (mode, state,
// the corrected definition) and the redrives with a caller.
func TestRerunAndRedriveInTheOperatorLogOnThePage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	def := `{"StartAt": "Extract", "States": {"Extract": {"Type": "Pass", "Next": "W"},
		"W": {"Type": "Wait", "Seconds": 3600, "Next": "Load"}, "Load": {"Type": "Pass", "End": true}}}`
	sm := b.create(t, "net", def)
	arn := b.start(t, sm, "night-1", `{}`)
	stop := func() {
		t.Helper()
		_, err := b.svc.StopExecution(ctx, &service.StopExecutionInput{ExecutionArn: arn})
		require.NoError(t, err)
		require.Equal(t, "ABORTED", b.wait(t, arn))
	}
	stop()
	_, err := b.svc.RerunExecution(ctx, &service.RerunExecutionInput{ExecutionArn: arn, From: "STATE:W", Definition: def, By: "console:AKIDOPS"})
	require.NoError(t, err)
	stop()
	_, err = b.svc.RedriveExecution(ctx, &service.RedriveExecutionInput{ExecutionArn: arn, By: "AKIDCLI"})
	require.NoError(t, err)
	_, page := b.get(t, "/executions/"+url.PathEscape(arn))
	require.Contains(t, page, `id="operator-actions"`)
	require.Regexp(t, `<tr data-action="Rerun"><td>.*</td><td>console:AKIDOPS</td><td>Rerun</td><td>W</td>\s*<td>STATE <details><summary>Corrected definition</summary><pre>{&#34;StartAt&#34;`, page)
	require.Regexp(t, `<tr data-action="Redrive"><td>.*</td><td>AKIDCLI</td><td>Redrive</td><td></td>`, page)
}
