package console_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/service"
)

// A running execution held at a state and suspended: its page says so in
// its header, colours the held state on the graph (and the live poll
// keeps it so), lists the operator log, and offers the controls; the
// state machine's page shows its holds and the form to hold a state of
// every execution.
func TestOperatorOnTheExecutionPage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	sm := b.create(t, "net", `{"StartAt": "W", "States": {"W": {"Type": "Wait", "Seconds": 3600, "Next": "Load"},
		"Load": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "End": true}}}`)
	arn := b.start(t, sm, "night-1", `{}`)
	get := func(path string) string {
		res, err := http.Get(b.srv.URL + path)
		require.NoError(t, err)
		defer res.Body.Close()
		body, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, res.StatusCode, path)
		return string(body)
	}
	page := get("/executions/" + url.PathEscape(arn))
	require.Contains(t, page, `id="operator-form"`)
	require.Contains(t, page, `<option value="Load">Load</option>`)
	require.NotContains(t, page, `id="held-badge"`)
	require.NotContains(t, page, `id="operator-actions"`)

	_, err := b.svc.HoldState(ctx, &service.HoldStateInput{Arn: arn, State: "Load", By: "console:AKIDOPS"})
	require.NoError(t, err)
	_, err = b.svc.SuspendExecution(ctx, &service.ExecutionControlInput{ExecutionArn: arn, By: "AKIDCLI"})
	require.NoError(t, err)

	page = get("/executions/" + url.PathEscape(arn))
	require.Contains(t, page, `<span class="status" id="held-badge" data-status="held">Held: Load</span>`)
	require.Contains(t, page, `<span class="status" id="suspended-badge" data-status="suspended">Suspended</span>`)
	require.Contains(t, page, `<section class="graph-panel" data-suspended>`)
	require.Contains(t, page, `<li data-status="held">Held</li><li data-status="suspended">Suspended</li>`)
	require.Contains(t, page, `"Load":"held"`)
	require.Contains(t, page, `<button type="button" data-op="SuspendExecution" disabled>`)
	require.Contains(t, page, `<button type="button" data-op="ResumeExecution">`)
	require.Contains(t, page, `id="operator-actions"`)
	require.Regexp(t, `<tr data-action="Hold"><td>.*</td><td>console:AKIDOPS</td><td>Hold</td><td>Load</td>`, page)
	require.Regexp(t, `<tr data-action="Suspend"><td>.*</td><td>AKIDCLI</td><td>Suspend</td><td></td>`, page)

	var status struct {
		States    map[string]string `json:"states"`
		Held      []string          `json:"held"`
		Suspended bool              `json:"suspended"`
	}
	require.NoError(t, json.Unmarshal([]byte(get("/console/executions/status?arn="+url.QueryEscape(arn))), &status))
	require.Equal(t, "held", status.States["Load"])
	require.Equal(t, []string{"Load"}, status.Held)
	require.True(t, status.Suspended)

	// The state machine's holds.
	page = get("/state-machines/" + url.PathEscape(sm))
	require.Contains(t, page, `<form id="operator-form" data-arn="`+sm+`">`)
	require.NotContains(t, page, `id="held-states"`)
	_, err = b.svc.HoldState(ctx, &service.HoldStateInput{Arn: sm, State: "W", By: "console:AKIDOPS"})
	require.NoError(t, err)
	page = get("/state-machines/" + url.PathEscape(sm))
	require.Contains(t, page, `<p id="held-states"><span class="status" data-status="held">Held</span> W</p>`)

	// Once the execution ended, the controls are gone, the log stays.
	_, err = b.svc.StopExecution(ctx, &service.StopExecutionInput{ExecutionArn: arn})
	require.NoError(t, err)
	page = get("/executions/" + url.PathEscape(arn))
	require.NotContains(t, page, `id="operator-form"`)
	require.NotContains(t, page, `id="held-badge"`)
	require.NotContains(t, page, `data-status="held"`)
	require.Contains(t, page, `id="operator-actions"`)
}

// A start of an exclusive group that waits for an earlier execution says
// so in its header, in English and Japanese, linking that execution; it
// is not shown as held by an operator.
func TestExclusiveWaitOnTheExecutionPage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	sm := b.create(t, "ledger", `{"StartAt": "W", "States": {"W": {"Type": "Wait", "Seconds": 3600, "End": true}}}`)
	_, err := b.svc.TagResource(ctx, &service.TagResourceInput{ResourceArn: sm,
		Tags: []service.Tag{{Key: ptr("stepwise:exclusive"), Value: ptr("ledger")}}})
	require.NoError(t, err)
	first := b.start(t, sm, "night-1", `{}`)
	second := b.start(t, sm, "night-2", `{}`)
	_, page := b.get(t, "/executions/"+url.PathEscape(second))
	require.Contains(t, page, `<span class="status" id="waiting-badge" data-status="held">Waiting for <a href="/executions/`+url.PathEscape(first)+`" title="`+first+`">night-1</a></span>`)
	require.NotContains(t, page, `id="held-badge"`)
	req, err := http.NewRequest(http.MethodGet, b.srv.URL+"/executions/"+url.PathEscape(second), nil)
	require.NoError(t, err)
	req.Header.Set("Accept-Language", "ja")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.Contains(t, string(body), `">night-1</a> の終了待ち</span>`)
	_, page = b.get(t, "/executions/"+url.PathEscape(first))
	require.NotContains(t, page, `id="waiting-badge"`)
}
