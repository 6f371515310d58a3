package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

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
	require.True(t, strings.Contains(page, `<a id="download-test" href="/console/executions/recording?arn=`+strings.ToLower(url.QueryEscape(x))+`" download>Download as a test</a>`),
		"the page links to the download")

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
