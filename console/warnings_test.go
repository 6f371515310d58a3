package console_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/service"
)

// A Task whose result meets its state's warning rule (a tag of the state
// machine, kept by the execution from its start) is shown amber: the
// graph's status "warning", the legend, the count on the execution page
// and on its state machine's list; the live poll says the same. A Task
// whose result does not is succeeded, as on AWS.
func TestWarningsShown(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	act, err := b.svc.CreateActivity(ctx, &service.CreateActivityInput{Name: "jobs"})
	require.NoError(t, err)
	task := func(name, next string) string {
		end := `"End": true`
		if next != "" {
			end = `"Next": "` + next + `"`
		}
		return `"` + name + `": {"Type": "Task", "Resource": "` + act.ActivityArn + `", "Parameters": {"job": "` + name + `"}, ` + end + `}`
	}
	sm := b.create(t, "net", `{"StartAt": "Extract", "States": {`+task("Extract", "Load")+`, `+task("Load", "Report")+`, `+task("Report", "")+`}}`)
	_, err = b.svc.TagResource(ctx, &service.TagResourceInput{ResourceArn: sm, Tags: []service.Tag{
		{Key: ptr("stepwise:warning/Extract"), Value: ptr("rc:1-8")},
		{Key: ptr("stepwise:warning/Load"), Value: ptr("rc:1-8")},
		{Key: ptr("stepwise:warning/Report"), Value: ptr(`jsonata:$contains(log, "WARN")`)},
	}})
	require.NoError(t, err)
	arn := b.start(t, sm, "night", `{}`)
	answers := map[string]string{"Extract": `{"rc": 4}`, "Load": `{"rc": 0}`, "Report": `{"log": "WARN disk at 91%"}`}
	for range 3 {
		got, err := b.svc.GetActivityTask(ctx, &service.GetActivityTaskInput{ActivityArn: act.ActivityArn})
		require.NoError(t, err)
		require.NotNil(t, got.TaskToken)
		var in struct{ Job string }
		require.NoError(t, json.Unmarshal([]byte(*got.Input), &in))
		_, err = b.svc.SendTaskSuccess(ctx, &service.SendTaskSuccessInput{TaskToken: *got.TaskToken, Output: answers[in.Job]})
		require.NoError(t, err)
	}
	require.Equal(t, "SUCCEEDED", b.wait(t, arn))

	code, page := b.get(t, "/executions/"+arn)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, map[string]string{"Extract": "warning", "Load": "succeeded", "Report": "warning"}, graphStatus(t, page))
	require.Contains(t, page, `<li data-status="warning">Ended with warning</li>`)
	require.Contains(t, page, `<dd id="warnings"><span class="status" data-status="warning">2 warnings</span> Extract (rc 4), Report</dd>`)

	code, body := b.get(t, "/console/executions/status?arn="+url.QueryEscape(arn))
	require.Equal(t, http.StatusOK, code)
	var poll struct {
		States   map[string]string
		Warnings int
	}
	require.NoError(t, json.Unmarshal([]byte(body), &poll))
	require.Equal(t, "warning", poll.States["Extract"])
	require.Equal(t, 2, poll.Warnings)

	_, page = b.get(t, "/state-machines/"+url.PathEscape(sm))
	require.Contains(t, page, `data-warnings="2">2 warnings</span>`)

	// In Japanese, 警告終了.
	req, err := http.NewRequest(http.MethodGet, b.srv.URL+"/executions/"+arn, nil)
	require.NoError(t, err)
	req.AddCookie(&http.Cookie{Name: "stepwise-lang", Value: "ja"})
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var sb strings.Builder
	_, err = io.Copy(&sb, resp.Body)
	require.NoError(t, err)
	require.Contains(t, sb.String(), `<li data-status="warning">警告終了</li>`)
}
