package console_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/console"
	"stepwise/server/servertest"
)

// The schedules page lists the file-arrival triggers: where each looks,
// its pattern, state machine and state, and its last files started with
// their executions, in English and Japanese; without triggers' access, no
// such section.
func TestFileTriggersOnSchedulesPage(t *testing.T) {
	t.Parallel()
	svc := servertest.New(t).Service()
	sm := "arn:aws:states:us-east-1:123456789012:stateMachine:jobnet"
	exec := "arn:aws:states:us-east-1:123456789012:execution:jobnet:ledger-0123456789abcdef01234567"
	at := time.Date(2026, 11, 25, 2, 0, 0, 0, time.UTC)
	views := []console.FileTriggerView{
		{Name: "ledger", Watched: "/var/spool/ledger", Pattern: "*.csv", StateMachineArn: sm, State: "ENABLED",
			Started: []console.FileStartView{{File: "/var/spool/ledger/a.csv 4 1764036000000", ExecutionArn: exec, StartedAt: at}}},
		{Name: "drops", Watched: "s3://drops/in/", Pattern: "*", StateMachineArn: sm, State: "DISABLED"},
	}
	none := func(context.Context) ([]console.ScheduleView, error) { return nil, nil }
	con, err := console.NewWith(svc, console.Options{Schedules: none, FileTriggers: func(context.Context) ([]console.FileTriggerView, error) { return views, nil }})
	require.NoError(t, err)
	srv := httptest.NewServer(con)
	t.Cleanup(srv.Close)
	b := &bundle{svc: svc, srv: srv}

	code, page := b.get(t, "/schedule-list")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, page, `<h2 id="file-triggers">File-arrival triggers</h2>`)
	require.Contains(t, page, `<th>Folder or bucket</th><th>Pattern</th><th>State machine</th><th>Status</th><th>Last files started</th>`)
	require.Contains(t, page, `<tr data-trigger="ledger"><td>ledger</td>`)
	require.Contains(t, page, `<td data-field="watched"><code>/var/spool/ledger</code></td>`)
	require.Contains(t, page, `<td data-field="pattern"><code>*.csv</code></td>`)
	require.Contains(t, page, `<a href="/state-machines/`+sm+`">`+sm+`</a>`)
	require.Contains(t, page, `<code>/var/spool/ledger/a.csv 4 1764036000000</code> → <a href="/executions/`+exec+`">ledger-0123456789abcdef01234567</a>`)
	require.Contains(t, page, `<td data-field="watched"><code>s3://drops/in/</code></td>`)
	require.Contains(t, page, `data-state="DISABLED">DISABLED</td>`)

	req, err := http.NewRequest(http.MethodGet, srv.URL+"/schedule-list", nil)
	require.NoError(t, err)
	req.Header.Set("Accept-Language", "ja")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	ja, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Contains(t, string(ja), `<h2 id="file-triggers">ファイル到着トリガー</h2>`)
	require.Contains(t, string(ja), `<th>フォルダーまたはバケット</th><th>パターン</th><th>ステートマシン</th><th>ステータス</th><th>最近開始したファイル</th>`)
	require.Contains(t, string(ja), `data-state="DISABLED">無効</td>`)

	plain, err := console.NewWith(svc, console.Options{Schedules: none})
	require.NoError(t, err)
	rec := httptest.NewRecorder()
	plain.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/schedule-list", nil))
	require.NotContains(t, rec.Body.String(), "file-triggers")
}
