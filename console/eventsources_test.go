package console_test

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/console"
)

// The event sources' page lists each stack's wiring: what triggers
// what, whether it runs (and why not), and its last delivery; in
// Japanese too.
func TestEventSourcesPage(t *testing.T) {
	t.Parallel()
	last := time.Date(2026, 11, 29, 1, 2, 3, 0, time.UTC)
	sm := "arn:aws:states:us-east-1:123456789012:stateMachine:orders"
	b := setupWith(t, console.Options{EventSources: func(context.Context) []console.EventSource {
		return []console.EventSource{
			{Stack: "app", ID: "Worker/Queue", Kind: "sqs", Source: `{"queue":"arn:aws:sqs:us-east-1:123456789012:jobs"}`,
				TargetType: "function", Target: "arn:aws:lambda:us-east-1:123456789012:function:worker", Running: true,
				Delivered: 7, LastDelivery: &last, LastError: "function worker failed: ValueError: bad"},
			{Stack: "app", ID: "Orders/Placed", Kind: "rule", Source: `{"pattern":{"source":["shop"]}}`,
				TargetType: "statemachine", Target: sm, Problem: "no endpoint is given for events"},
		}
	}})
	code, page := b.get(t, "/event-sources")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, page, `<a href="/event-sources">Event sources</a>`)
	require.Contains(t, page, `data-source="app/Worker/Queue"`)
	require.Contains(t, page, `<td data-field="delivered">7</td>`)
	require.Contains(t, page, "function worker failed: ValueError: bad")
	require.Contains(t, page, `data-running="false">Not delivered<br><small data-field="problem">no endpoint is given for events</small>`)
	require.Contains(t, page, `href="/state-machines/`+sm+`"`)

	req, err := http.NewRequest(http.MethodGet, b.srv.URL+"/event-sources", nil)
	require.NoError(t, err)
	req.Header.Set("Accept-Language", "ja")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Contains(t, string(body), "<h1>イベントソース</h1>")
	require.Contains(t, string(body), `data-running="true">配信中`)

	// A console without event sources has neither the page nor its link.
	plain := setup(t)
	code, page = plain.get(t, "/event-sources")
	require.Equal(t, http.StatusNotFound, code)
	require.NotContains(t, page, `<a href="/event-sources">Event sources</a>`)
}
