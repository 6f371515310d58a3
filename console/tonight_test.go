package console_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/console"
	"stepwise/service"
)

// Tonight's page: a firing whose execution succeeded links it with its
// duration and the usual one; a firing not yet started says so; an
// execution started by hand today is listed; a job running past twice its
// usual duration is flagged, and LateJobs names it.
func TestTonight(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var ahead atomic.Int64 // how far the console's clock runs ahead
	var planned []console.PlannedRun
	b := setupWith(t, console.Options{Now: func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) },
		Planned: func(ctx context.Context, from, to time.Time) ([]console.PlannedRun, error) { return planned, nil }})
	act, err := b.svc.CreateActivity(ctx, &service.CreateActivityInput{Name: "extract"})
	require.NoError(t, err)
	sm := b.create(t, "nightly", `{"StartAt":"Extract","States":{"Extract":{"Type":"Task","Resource":"`+act.ActivityArn+`","End":true}}}`)
	work := func() {
		task, err := b.svc.GetActivityTask(ctx, &service.GetActivityTaskInput{ActivityArn: act.ActivityArn})
		require.NoError(t, err)
		require.NotNil(t, task.TaskToken)
		_, err = b.svc.SendTaskSuccess(ctx, &service.SendTaskSuccessInput{TaskToken: *task.TaskToken, Output: "{}"})
		require.NoError(t, err)
	}
	for _, name := range []string{"nightly-1", "nightly-2", "nightly-3"} {
		arn := b.start(t, sm, name, "{}")
		work()
		require.Equal(t, "SUCCEEDED", b.wait(t, arn))
	}
	late := b.start(t, sm, "by-hand", "{}")
	now := time.Now().UTC()
	planned = []console.PlannedRun{
		{Group: "default", Name: "nightly", At: now.Add(-time.Hour), StateMachine: sm, Execution: "nightly-1"},
		{Group: "default", Name: "nightly", At: now.Add(time.Hour), StateMachine: sm, Execution: "nightly-4"},
	}
	// A second ahead: the running job is past twice its usual few
	// milliseconds, and today stays today (an hour could cross midnight
	// in Tokyo).
	ahead.Store(int64(time.Second))

	req, err := http.NewRequest(http.MethodGet, b.srv.URL+"/tonight?tz=Asia/Tokyo", nil)
	require.NoError(t, err)
	req.Header.Set("Accept-Language", "ja")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	body := string(raw)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	require.Contains(t, body, `<a href="/tonight">今夜の予定</a>`)
	require.Contains(t, body, `data-zone="Asia/Tokyo"`)
	require.Contains(t, body, `<a href="/executions/`+escapePath(executionOf(sm, "nightly-1"))+`">nightly-1</a>`)
	require.Contains(t, body, `<span class="status" data-status="not-run">未実行</span>`)
	require.Contains(t, body, `nightly-4`)
	require.Contains(t, body, `<a href="/executions/`+escapePath(late)+`">by-hand</a>`)
	require.Contains(t, body, `<span class="late-flag" data-late-state="Extract">遅延: Extract</span>`)
	require.Contains(t, body, `">nightly-2</a>`) // started today, by no firing
	// The execution's page says so, and draws the job's bar as late.
	status, page := b.get(t, "/executions/"+escapePath(late))
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, page, `<p class="late-warning" role="alert" data-late-state="Extract">Running late: <strong>Extract</strong> `)
	require.Contains(t, page, `seg-late`)
	jobs, err := b.con.LateJobs(ctx)
	require.NoError(t, err)
	require.Len(t, jobs, 1)
	require.Equal(t, late, jobs[0].Execution)
	require.Equal(t, "Extract", jobs[0].State)
	require.Greater(t, jobs[0].Running, 2*jobs[0].Usual)
}

func escapePath(arn string) string { return url.PathEscape(arn) }

func executionOf(sm, name string) string {
	return strings.Replace(sm, ":stateMachine:", ":execution:", 1) + ":" + name
}

func TestMedian(t *testing.T) {
	t.Parallel()
	require.Equal(t, time.Duration(0), console.Median(nil))
	require.Equal(t, 3*time.Second, console.Median([]time.Duration{5 * time.Second, time.Second, 3 * time.Second}))
	require.Equal(t, 2500*time.Millisecond, console.Median([]time.Duration{4 * time.Second, time.Second, 2 * time.Second, 3 * time.Second}))
}
