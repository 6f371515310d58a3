package console_test

import (
	"context"
	"encoding/json"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/internal/testkit/testwait"
	"stepwise/service"
)

var retriesRE = regexp.MustCompile(`<script type="application/json" id="graph-retries">(.*?)</script>`)

func graphRetries(t testing.TB, page string) map[string]int {
	t.Helper()
	m := retriesRE.FindStringSubmatch(page)
	require.NotNil(t, m, "no graph retries in the page")
	var r map[string]int
	require.NoError(t, json.Unmarshal([]byte(m[1]), &r))
	return r
}

type stateDetails struct {
	Status   string
	Retries  int
	Runs     int
	Error    string
	Attempts []struct {
		Status, Error, Cause, Started string
		Current                       bool
	}
	Child *struct {
		Arn, Href string
	}
	MapRun *struct {
		Arn, Href, Status, Summary string
		Executions                 struct{ Succeeded, Failed, Total int }
	}
}

func (b *bundle) details(t testing.TB, arn, state string) stateDetails {
	t.Helper()
	code, body := b.get(t, "/console/executions/state?arn="+url.QueryEscape(arn)+"&state="+url.QueryEscape(state))
	require.Equal(t, 200, code, body)
	var d stateDetails
	require.NoError(t, json.Unmarshal([]byte(body), &d))
	return d
}

// redrivenDefinition: a Parallel (retried twice) whose job fails while
// the execution has not been redriven, then succeeds.
const redrivenDefinition = `{"StartAt": "Nightly", "States": {
	"Nightly": {"Type": "Parallel", "Next": "Report", "Retry": [{"ErrorEquals": ["JobFailed"], "MaxAttempts": 2, "IntervalSeconds": 1, "BackoffRate": 1}],
		"Branches": [
			{"StartAt": "Extract", "States": {"Extract": {"Type": "Pass", "End": true}}},
			{"StartAt": "Job", "States": {
				"Job": {"Type": "Choice", "Choices": [{"Variable": "$$.Execution.RedriveCount", "NumericEquals": 0, "Next": "JobFails"}], "Default": "JobDone"},
				"JobFails": {"Type": "Fail", "Error": "JobFailed", "Cause": "the first night"},
				"JobDone": {"Type": "Pass", "End": true}}}]},
	"Report": {"Type": "Pass", "End": true}}}`

// After a redrive that succeeded, the graph shows each state's last
// attempt: the Parallel green (not caught), the failing state not run in
// the Parallel's last attempt, and the Parallel's retries counted; its
// details list its attempts.
func TestRedrivenExecutionShowsLastAttempts(t *testing.T) {
	t.Parallel()
	b := setup(t)
	sm := b.create(t, "nightly", redrivenDefinition)
	arn := b.start(t, sm, "night", `{}`)
	require.Equal(t, "FAILED", b.wait(t, arn))
	_, page := b.get(t, "/executions/"+arn)
	require.Equal(t, "failed", graphStatus(t, page)["Nightly"])
	require.Equal(t, 2, graphRetries(t, page)["Nightly"])

	_, err := b.svc.RedriveExecution(context.Background(), &service.RedriveExecutionInput{ExecutionArn: arn})
	require.NoError(t, err)
	require.Equal(t, "SUCCEEDED", b.wait(t, arn))
	_, page = b.get(t, "/executions/"+arn)
	require.Equal(t, map[string]string{"Nightly": "succeeded", "Extract": "succeeded", "Job": "succeeded", "JobDone": "succeeded", "Report": "succeeded"},
		graphStatus(t, page), "JobFails failed in the Parallel's earlier attempts only")
	require.Equal(t, map[string]int{"Nightly": 3}, graphRetries(t, page))

	d := b.details(t, arn, "Nightly")
	require.Equal(t, "succeeded", d.Status)
	require.Equal(t, 3, d.Retries)
	require.Empty(t, d.Error, "the last attempt succeeded")
	require.Len(t, d.Attempts, 5, "three failed tries, redriven once, then retried once more")
	for _, at := range d.Attempts[:4] {
		require.Equal(t, "failed", at.Status)
	}
	require.Equal(t, "JobFailed", d.Attempts[2].Error, "the try that failed the execution")
	require.Equal(t, "succeeded", d.Attempts[4].Status)
	require.True(t, d.Attempts[4].Current)

	d = b.details(t, arn, "JobFails")
	require.Equal(t, "not-run", d.Status)
	require.NotEmpty(t, d.Attempts, "its earlier attempts are listed")
}

// A states:startExecution task links to the child it started, and the
// child back to its parent.
func TestStartExecutionLinks(t *testing.T) {
	t.Parallel()
	b := setup(t)
	kid := b.create(t, "kid", `{"StartAt": "K", "States": {"K": {"Type": "Pass", "End": true}}}`)
	for _, resource := range []string{"startExecution", "startExecution.sync:2"} {
		sm := b.create(t, "parent-"+strings.NewReplacer(".", "-", ":", "-").Replace(resource), `{"StartAt": "Kick", "States": {"Kick": {"Type": "Task",
			"Resource": "arn:aws:states:::states:`+resource+`", "End": true,
			"Parameters": {"StateMachineArn": "`+kid+`", "Input": {"AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID.$": "$$.Execution.Id"}}}}}`)
		arn := b.start(t, sm, "run", `{}`)
		require.Equal(t, "SUCCEEDED", b.wait(t, arn), resource)
		d := b.details(t, arn, "Kick")
		require.NotNil(t, d.Child, resource)
		require.Contains(t, d.Child.Arn, ":execution:kid:", resource)
		require.Equal(t, "/executions/"+url.PathEscape(d.Child.Arn), d.Child.Href, resource)

		code, child := b.get(t, d.Child.Href)
		require.Equal(t, 200, code)
		require.Contains(t, child, `<dd id="started-by"><a href="/executions/`+url.PathEscape(arn)+`"`, resource)
	}
}

// A distributed Map's inner states show that they ran in its map run,
// whose counts label the Map's processor and are in its details.
func TestDistributedMapShowsItsMapRun(t *testing.T) {
	t.Parallel()
	b := setup(t)
	sm := b.create(t, "fan-out", `{"StartAt": "M", "States": {"M": {"Type": "Map", "Label": "Fan",
		"ItemProcessor": {"ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"}, "StartAt": "Inner", "States": {
			"Inner": {"Type": "Choice", "Choices": [{"Variable": "$", "NumericEquals": 2, "Next": "Boom"}], "Default": "Fine"},
			"Boom": {"Type": "Fail", "Error": "Two"}, "Fine": {"Type": "Pass", "End": true}}},
		"ToleratedFailureCount": 1, "End": true}}}`)
	arn := b.start(t, sm, "run", `[1, 2, 3]`)
	b.wait(t, arn)
	_, page := b.get(t, "/executions/"+url.PathEscape(arn))
	st := graphStatus(t, page)
	for _, inner := range []string{"Inner", "Boom", "Fine"} {
		require.Equal(t, "map-run", st[inner], inner)
	}
	require.Contains(t, page, `M · 2/3 ✓ · 1 ✕ · 0 ●`)
	d := b.details(t, arn, "M")
	require.NotNil(t, d.MapRun)
	require.Equal(t, 2, d.MapRun.Executions.Succeeded)
	require.Equal(t, 1, d.MapRun.Executions.Failed)
	require.Equal(t, 3, d.MapRun.Executions.Total)
	require.True(t, strings.HasPrefix(d.MapRun.Href, "#map-run-"))
	require.Contains(t, page, `id="`+d.MapRun.Href[1:]+`"`)
	d = b.details(t, arn, "Boom")
	require.Equal(t, "map-run", d.Status, "an inner state's details say where it ran")
	require.NotNil(t, d.MapRun)
	require.Equal(t, 1, d.MapRun.Executions.Failed)
}

// The breadcrumb names the state machine, with its ARN as the title.
func TestBreadcrumbNames(t *testing.T) {
	t.Parallel()
	b := setup(t)
	sm := b.create(t, "crumbs", `{"StartAt": "A", "States": {"A": {"Type": "Pass", "End": true}}}`)
	arn := b.start(t, sm, "run", `{}`)
	b.wait(t, arn)
	_, page := b.get(t, "/executions/"+url.PathEscape(arn))
	require.Contains(t, page, `title="`+sm+`">crumbs</a>`)
}

// A running execution's retries reach the live graph's poll.
func TestStatusPollCarriesRetries(t *testing.T) {
	t.Parallel()
	b := setup(t)
	sm := b.create(t, "slow", `{"StartAt": "W", "States": {"W": {"Type": "Wait", "Seconds": 60, "End": true}}}`)
	arn := b.start(t, sm, "run", `{}`)
	testwait.Until(t, func() bool {
		_, body := b.get(t, "/console/executions/status?arn="+url.QueryEscape(arn))
		return strings.Contains(body, `"W":"running"`) && strings.Contains(body, `"retries":{}`)
	}, 30*time.Second, 10*time.Millisecond)
}
