package console_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/console"
	"stepwise/internal/testkit/testwait"
	"stepwise/service"
	"stepwise/workflowtest"
)

// The execution page offers the execution as a test file, which passes
// as a test.
func TestExecutionDownloadedAsATest(t *testing.T) {
	t.Parallel()
	b := setup(t)
	def := `{"StartAt": "Fan", "States": {
		"Fan": {"Type": "Map", "ItemProcessor": {"ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"}, "StartAt": "Twice", "States": {
			"Twice": {"Type": "Pass", "Parameters": {"v.$": "States.MathAdd($, $)"}, "End": true}}}, "Next": "Big"},
		"Big": {"Type": "Choice", "Choices": [{"Variable": "$[0].v", "NumericGreaterThan": 1, "Next": "Yes"}], "Default": "No"},
		"Yes": {"Type": "Succeed"}, "No": {"Type": "Fail", "Error": "Small"}}}`
	sm := b.create(t, "fan", def)
	x := b.start(t, sm, "night", `[1, 2]`)
	require.Equal(t, "SUCCEEDED", b.wait(t, x))

	status, page := b.get(t, "/executions/"+url.PathEscape(x))
	require.Equal(t, 200, status)
	require.True(t, strings.Contains(page, `<a id="download-test" href="/console/executions/recording?arn=`+strings.ToLower(url.QueryEscape(x))+`">Download as a test</a>`),
		"the page links to the download (without the download attribute, so that a refusal shows in the tab)")

	resp, err := http.Get(b.srv.URL + "/console/executions/recording?arn=" + url.QueryEscape(x))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	require.Equal(t, `attachment; filename="night.test.json"`, resp.Header.Get("Content-Disposition"))
	_, body := b.get(t, "/console/executions/recording?arn="+url.QueryEscape(x))
	f, err := workflowtest.LoadData("night.test.json", []byte(body))
	require.NoError(t, err)
	require.Equal(t, []string{"Fan", "Big", "Yes"}, f.Cases[0].Expect.Path)
	res := (&workflowtest.Runner{}).Run(f, f.Cases[0])
	require.True(t, res.Passed, res.Failure)

	status, body = b.get(t, "/console/executions/recording?arn="+url.QueryEscape(x+"-not"))
	require.Equal(t, 404, status, body)
	require.Contains(t, body, "ExecutionDoesNotExist")
}

// fanDefinition is a distributed Map of STANDARD children, each with a
// Pass state.
const fanDefinition = `{"StartAt": "Fan", "States": {
	"Fan": {"Type": "Map", "ItemProcessor": {"ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"},
		"StartAt": "Twice", "States": {"Twice": {"Type": "Pass", "Parameters": {"v.$": "States.MathAdd($, $)"}, "End": true}}}, "End": true}}}`

// download GETs an execution's recording with header.
func (b *bundle) download(t *testing.T, arn string, header http.Header) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, b.srv.URL+"/console/executions/recording?arn="+url.QueryEscape(arn), nil)
	require.NoError(t, err)
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(body)
}

// The download is the console's own page's: a browser that says the GET
// comes from another site (an <img> or a link of another page) is
// refused, before anything is read; the console's link (same-origin), a
// typed address and a client that says nothing are answered.
func TestRecordingSameOriginOnly(t *testing.T) {
	t.Parallel()
	b := setup(t)
	x := b.start(t, b.create(t, "fan", fanDefinition), "night", `[1, 2]`)
	require.Equal(t, "SUCCEEDED", b.wait(t, x))
	for _, h := range []http.Header{
		{"Sec-Fetch-Site": {"cross-site"}, "Sec-Fetch-Dest": {"image"}},
		{"Sec-Fetch-Site": {"same-site"}},
		{"Origin": {"http://evil.example"}},
		{"Origin": {"null"}},
	} {
		resp, body := b.download(t, x, h)
		require.Equal(t, http.StatusForbidden, resp.StatusCode, "%v", h)
		require.Empty(t, resp.Header.Get("Content-Disposition"))
		require.Contains(t, body, "The download of an execution as a test is only for the console's own page", "%v", h)
	}
	host := strings.TrimPrefix(b.srv.URL, "http://")
	for _, h := range []http.Header{
		{"Sec-Fetch-Site": {"same-origin"}, "Sec-Fetch-Mode": {"navigate"}, "Sec-Fetch-Dest": {"document"}},
		{"Sec-Fetch-Site": {"none"}},
		{"Origin": {"http://" + host}},
		nil,
	} {
		resp, body := b.download(t, x, h)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%v: %s", h, body)
		require.Equal(t, `attachment; filename="night.test.json"`, resp.Header.Get("Content-Disposition"))
	}
}

// A recording holds at most the limits' children and events: an
// execution past them is refused whole (409, naming the limit and
// `stepwise test --record`), one at them is recorded and passes.
func TestRecordingBounded(t *testing.T) {
	t.Parallel()
	b := setupWith(t, console.Options{Recording: console.RecordingLimits{Children: 4, Events: 200}})
	sm := b.create(t, "fan", fanDefinition)
	at := b.start(t, sm, "four", `[1, 2, 3, 4]`)
	past := b.start(t, sm, "five", `[1, 2, 3, 4, 5]`)
	for _, x := range []string{at, past} {
		require.Equal(t, "SUCCEEDED", b.wait(t, x))
	}

	resp, body := b.download(t, at, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	f, err := workflowtest.LoadData("four.test.json", []byte(body))
	require.NoError(t, err)
	res := (&workflowtest.Runner{}).Run(f, f.Cases[0])
	require.True(t, res.Passed, res.Failure)

	resp, body = b.download(t, past, nil)
	require.Equal(t, http.StatusConflict, resp.StatusCode, body)
	require.Empty(t, resp.Header.Get("Content-Disposition"))
	require.JSONEq(t, `{"message": "cannot record `+past+` here: its distributed Maps ran 5 child executions, and a recording made by the console holds at most 4; `+
		"record it with `stepwise test --record "+past+" --endpoint URL --out FILE`\"}", body)

	// Events: a history and its child's longer than the limit.
	small := setupWith(t, console.Options{Recording: console.RecordingLimits{Events: 5}})
	x := small.start(t, small.create(t, "fan", fanDefinition), "long", `[1]`)
	require.Equal(t, "SUCCEEDED", small.wait(t, x))
	resp, body = small.download(t, x, nil)
	require.Equal(t, http.StatusConflict, resp.StatusCode, body)
	require.Contains(t, body, "its history and its child executions' hold more than 5 events, the most a recording made by the console reads")

	// Bytes: a few events whose input is larger than the limit.
	tight := setupWith(t, console.Options{Recording: console.RecordingLimits{Bytes: 4000}})
	pass := tight.create(t, "pass", `{"StartAt": "P", "States": {"P": {"Type": "Pass", "End": true}}}`)
	x = tight.start(t, pass, "wide", `{"pad": "`+strings.Repeat("x", 3000)+`"}`)
	require.Equal(t, "SUCCEEDED", tight.wait(t, x))
	resp, body = tight.download(t, x, nil)
	require.Equal(t, http.StatusConflict, resp.StatusCode, body)
	require.Contains(t, body, "its history and its child executions' events hold more than 4000 bytes, the most a recording made by the console reads")
	x = tight.start(t, pass, "narrow", `{}`)
	require.Equal(t, "SUCCEEDED", tight.wait(t, x))
	resp, body = tight.download(t, x, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
}

// A redriven execution's page lets one pick the run its download
// records, the latest by default; the download says which run it holds
// (its file's name, its case's name, a header).
func TestRedrivenExecutionDownloadsARun(t *testing.T) {
	t.Parallel()
	b := setup(t)
	sm := b.create(t, "night", `{"StartAt": "Job", "States": {"Job": {"Type": "Fail", "Error": "JobFailed"}}}`)
	x := b.start(t, sm, "night-1", `{}`)
	require.Equal(t, "FAILED", b.wait(t, x))
	_, err := b.svc.RedriveExecution(context.Background(), &service.RedriveExecutionInput{ExecutionArn: x})
	require.NoError(t, err)
	testwait.Until(t, func() bool {
		d, err := b.svc.DescribeExecution(context.Background(), &service.DescribeExecutionInput{ExecutionArn: x})
		return err == nil && d.RedriveCount == 1 && d.Status == "FAILED"
	}, 30*time.Second, 10*time.Millisecond, "the redriven run ends")

	_, page := b.get(t, "/executions/"+url.PathEscape(x))
	require.Contains(t, page, `<select id="download-run"><option value="1">1</option><option value="2" selected>2 (latest)</option></select>`)

	get := func(run string) (*http.Response, string) {
		resp, err := http.Get(b.srv.URL + "/console/executions/recording?arn=" + url.QueryEscape(x) + "&run=" + run)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp, string(body)
	}
	for run, want := range map[string]string{"": "2", "2": "2", "1": "1"} {
		resp, body := get(run)
		require.Equal(t, 200, resp.StatusCode, body)
		require.Equal(t, want+" of 2", resp.Header.Get("X-Stepwise-Recorded-Run"))
		require.Equal(t, `attachment; filename="night-1-run-`+want+`.test.json"`, resp.Header.Get("Content-Disposition"))
		require.Contains(t, body, `"name": "night-1, run `+want+` of 2"`)
	}
	resp, body := get("3")
	require.Equal(t, 400, resp.StatusCode)
	require.Contains(t, body, "the execution has runs 1 to 2")
}
