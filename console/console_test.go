package console_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/console"
	"stepwise/internal/testkit/testwait"
	"stepwise/server/servertest"
	"stepwise/service"
)

type bundle struct {
	svc *service.Service
	srv *httptest.Server
	con *console.Console
}

// setup runs the console over a real store, engine and service.
func setup(t testing.TB) *bundle {
	t.Helper()
	return setupWith(t, console.Options{})
}

// setupWith is setup with the console's options.
func setupWith(t testing.TB, opts console.Options) *bundle {
	t.Helper()
	st := servertest.New(t)
	svc := st.Service()
	con, err := console.NewWith(svc, opts)
	require.NoError(t, err)
	srv := httptest.NewServer(con)
	t.Cleanup(srv.Close)
	return &bundle{svc: svc, srv: srv, con: con}
}

func (b *bundle) create(t testing.TB, name, def string) string {
	t.Helper()
	out, err := b.svc.CreateStateMachine(context.Background(), &service.CreateStateMachineInput{Name: name, Definition: def, RoleArn: "arn:aws:iam::123456789012:role/r"})
	require.NoError(t, err)
	return out.StateMachineArn
}

func (b *bundle) start(t testing.TB, sm, name, input string) string {
	t.Helper()
	out, err := b.svc.StartExecution(context.Background(), &service.StartExecutionInput{StateMachineArn: sm, Name: &name, Input: &input})
	require.NoError(t, err)
	return out.ExecutionArn
}

func (b *bundle) wait(t testing.TB, arn string) string {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		x, err := b.svc.DescribeExecution(context.Background(), &service.DescribeExecutionInput{ExecutionArn: arn})
		require.NoError(t, err)
		if x.Status != "RUNNING" {
			return x.Status
		}
		require.True(t, time.Now().Before(deadline), "%s still running", arn)
		time.Sleep(5 * time.Millisecond)
	}
}

func (b *bundle) get(t testing.TB, path string) (int, string) {
	t.Helper()
	resp, err := http.Get(b.srv.URL + path)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

var statusRE = regexp.MustCompile(`<script type="application/json" id="graph-status">(.*?)</script>`)

// graphStatus is the status of every state the execution page colors.
func graphStatus(t testing.TB, page string) map[string]string {
	t.Helper()
	m := statusRE.FindStringSubmatch(page)
	require.NotNil(t, m, "no graph status in the page")
	var st map[string]string
	require.NoError(t, json.Unmarshal([]byte(m[1]), &st))
	return st
}

// A Parallel whose one branch fails and is caught: the failing state is
// failed, the branch still running is cancelled, the Parallel caught,
// the catcher succeeded, and the state never reached is not in the map
// (not run).
func TestExecutionPageColorsTheGraph(t *testing.T) {
	t.Parallel()
	b := setup(t)
	sm := b.create(t, "par", `{"StartAt": "P", "States": {
		"P": {"Type": "Parallel", "Branches": [
			{"StartAt": "Slow", "States": {"Slow": {"Type": "Wait", "Seconds": 60, "End": true}}},
			{"StartAt": "Quick", "States": {"Quick": {"Type": "Pass", "End": true}}},
			{"StartAt": "Boom", "States": {"Boom": {"Type": "Fail", "Error": "Boom"}}}],
			"Catch": [{"ErrorEquals": ["States.ALL"], "Next": "Caught"}], "Next": "Never"},
		"Caught": {"Type": "Pass", "End": true},
		"Never": {"Type": "Succeed"}}}`)
	arn := b.start(t, sm, "run", `{}`)
	require.Equal(t, "SUCCEEDED", b.wait(t, arn))
	code, page := b.get(t, "/executions/"+arn)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, map[string]string{"P": "caught", "Slow": "cancelled", "Boom": "failed", "Quick": "succeeded", "Caught": "succeeded"}, graphStatus(t, page))
	require.Contains(t, page, `id="graph-data"`)
	require.Contains(t, page, `data-type="ParallelStateFailed"`)

	code, body := b.get(t, "/console/executions/state?arn="+arn+"&state=Boom")
	require.Equal(t, http.StatusOK, code)
	var details map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &details))
	require.Equal(t, "failed", details["status"])
	require.Equal(t, "Boom", details["error"])
}

// A Parallel that fails uncaught: the branch still running is cancelled,
// not failed, though its aborted event is linked to the failure in the
// other branch, as AWS links it.
func TestExecutionPageAbortedBranchIsCancelled(t *testing.T) {
	t.Parallel()
	b := setup(t)
	sm := b.create(t, "par-fail", `{"StartAt": "P", "States": {
		"P": {"Type": "Parallel", "End": true, "Branches": [
			{"StartAt": "Slow", "States": {"Slow": {"Type": "Wait", "Seconds": 60, "End": true}}},
			{"StartAt": "Boom", "States": {"Boom": {"Type": "Fail", "Error": "Boom"}}}]}}}`)
	arn := b.start(t, sm, "run", `{}`)
	require.Equal(t, "FAILED", b.wait(t, arn))
	_, page := b.get(t, "/executions/"+arn)
	require.Equal(t, map[string]string{"P": "failed", "Slow": "cancelled", "Boom": "failed"}, graphStatus(t, page))
}

// Retries are counted, a retried task that then succeeds is succeeded,
// and a Map's iterations are listed.
func TestStateDetailsRetriesAndIterations(t *testing.T) {
	t.Parallel()
	b := setup(t)
	sm := b.create(t, "map", `{"StartAt": "M", "States": {"M": {"Type": "Map", "End": true, "ItemProcessor": {"StartAt": "Check", "States": {
		"Check": {"Type": "Choice", "Choices": [{"Variable": "$", "NumericEquals": 2, "Next": "Bad"}], "Default": "Good"},
		"Bad": {"Type": "Fail", "Error": "Two"},
		"Good": {"Type": "Pass", "End": true}}}}}}`)
	arn := b.start(t, sm, "run", `[1, 2, 3]`)
	require.Equal(t, "FAILED", b.wait(t, arn))
	_, page := b.get(t, "/executions/"+arn)
	st := graphStatus(t, page)
	require.Equal(t, "failed", st["M"])
	require.Equal(t, "failed", st["Bad"])
	_, body := b.get(t, "/console/executions/state?arn="+arn+"&state=M")
	var details struct {
		Status     string
		Iterations []struct {
			Index  int
			Status string
		}
	}
	require.NoError(t, json.Unmarshal([]byte(body), &details))
	require.Equal(t, "failed", details.Status)
	require.NotEmpty(t, details.Iterations)
	byIndex := map[int]string{}
	for _, it := range details.Iterations {
		byIndex[it.Index] = it.Status
	}
	require.Equal(t, "succeeded", byIndex[0])
	require.Equal(t, "failed", byIndex[1])

	// A click on an iteration opens it: the states that ran within it,
	// with their inputs, and its events only.
	type iteration struct {
		Iteration int
		Status    string
		States    []struct{ State, Status, Input, Error string }
		Events    []struct {
			ID   int64
			Type string
			Step string
		}
	}
	open := func(index string) (int, iteration) {
		code, body := b.get(t, "/console/executions/state?arn="+arn+"&state=M&iteration="+index)
		var it iteration
		if code == http.StatusOK {
			require.NoError(t, json.Unmarshal([]byte(body), &it))
		}
		return code, it
	}
	code, it := open("1")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "failed", it.Status)
	var names []string
	for _, st := range it.States {
		names = append(names, st.State)
		require.Equal(t, "2", st.Input, st.State)
	}
	require.Equal(t, []string{"Check", "Bad"}, names)
	require.Equal(t, "failed", it.States[1].Status)
	require.Equal(t, "Two", it.States[1].Error, "a Fail state's error comes from the definition")
	var types []string
	for _, ev := range it.Events {
		types = append(types, ev.Type)
	}
	require.Equal(t, []string{"MapIterationStarted", "ChoiceStateEntered", "ChoiceStateExited", "FailStateEntered", "MapIterationFailed"}, types)

	code, it = open("0")
	require.Equal(t, http.StatusOK, code)
	names = nil
	for _, st := range it.States {
		names = append(names, st.State)
		require.Equal(t, "1", st.Input, st.State)
	}
	require.Equal(t, []string{"Check", "Good"}, names)

	for _, bad := range []string{"7", "-1", "x"} {
		code, _ = open(bad)
		require.Equal(t, http.StatusNotFound, code, bad)
	}
}

// An iteration of a Map nested in another Map's iteration holds only its
// own states.
func TestNestedMapIteration(t *testing.T) {
	t.Parallel()
	b := setup(t)
	sm := b.create(t, "nested", `{"StartAt": "Outer", "States": {"Outer": {"Type": "Map", "End": true, "ItemProcessor": {"StartAt": "Inner", "States": {
		"Inner": {"Type": "Map", "ItemsPath": "$.items", "End": true, "ItemProcessor": {"StartAt": "Leaf", "States": {
			"Leaf": {"Type": "Pass", "End": true}}}}}}}}}`)
	arn := b.start(t, sm, "run", `[{"items": [1, 2]}, {"items": [3]}]`)
	require.Equal(t, "SUCCEEDED", b.wait(t, arn))
	_, body := b.get(t, "/console/executions/state?arn="+arn+"&state=Outer&iteration=1")
	var it struct {
		States []struct{ State, Input string }
	}
	require.NoError(t, json.Unmarshal([]byte(body), &it))
	var got []string
	for _, st := range it.States {
		got = append(got, st.State+"="+strings.Join(strings.Fields(st.Input), ""))
	}
	require.Equal(t, []string{`Inner={"items":[3]}`, "Leaf=3"}, got)
}

// Unknown ARNs and paths answer a friendly 404 page.
func TestNotFound(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, path := range []string{
		"/state-machines/arn:aws:states:us-east-1:123456789012:stateMachine:nope",
		"/executions/arn:aws:states:us-east-1:123456789012:execution:nope:x",
		"/executions/not-an-arn",
		"/nowhere",
	} {
		code, page := b.get(t, path)
		require.Equal(t, http.StatusNotFound, code, path)
		require.Contains(t, page, `data-page="not-found"`, path)
		require.Contains(t, page, "Not found", path)
	}
}

// Names, inputs, outputs and errors are escaped everywhere: nothing a
// definition or an execution carries becomes markup or script.
func TestHostileNamesAndInputsAreEscaped(t *testing.T) {
	t.Parallel()
	b := setup(t)
	hostile := `<img src=x onerror=alert(1)>`
	sm := b.create(t, "hostile", `{"Comment": "</script><script>alert(2)</script>", "StartAt": "`+hostile+`", "States": {
		"`+hostile+`": {"Type": "Pass", "Next": "F"},
		"F": {"Type": "Fail", "Error": "</script><b>x</b>", "Cause": "<svg onload=alert(3)>"}}}`)
	arn := b.start(t, sm, "run", `{"x": "</script><script>alert(4)</script>"}`)
	require.Equal(t, "FAILED", b.wait(t, arn))
	for _, path := range []string{"/", "/state-machines/" + sm, "/executions/" + arn} {
		code, page := b.get(t, path)
		require.Equal(t, http.StatusOK, code, path)
		for _, raw := range []string{"<img", "<svg onload", "<b>x</b>", "<script>alert"} {
			require.NotContains(t, page, raw, "%s carries %s unescaped", path, raw)
		}
	}
	_, page := b.get(t, "/executions/"+arn)
	require.Equal(t, "failed", graphStatus(t, page)["F"])
}

// An execution of 25,000 events: the page lists them a thousand at a
// time, with a link to the next thousand, and still colors the graph.
func TestHugeHistoryIsPaged(t *testing.T) {
	t.Parallel()
	b := setup(t)
	arn := hugeExecution(t, b)
	code, page := b.get(t, "/executions/"+arn)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, 1000, strings.Count(page, `<tr data-type=`))
	require.Contains(t, page, `href="?from=1000"`)
	st := graphStatus(t, page)
	require.Contains(t, []string{st["Loop"], st["Check"]}, "failed", "the state the full history stopped is failed")
	code, page = b.get(t, "/executions/"+arn+"?from=24000")
	require.Equal(t, http.StatusOK, code)
	require.Greater(t, strings.Count(page, `<tr data-type=`), 900, "the last page lists the last events")
	require.NotContains(t, page, `href="?from=`)
}

// hugeExecution runs a loop until the history is full (25,000 events).
func hugeExecution(t testing.TB, b *bundle) string {
	t.Helper()
	sm := b.create(t, "loop", `{"StartAt": "Loop", "States": {
		"Loop": {"Type": "Pass", "Next": "Check"},
		"Check": {"Type": "Choice", "Choices": [{"Variable": "$.stop", "IsPresent": true, "Next": "Done"}], "Default": "Loop"},
		"Done": {"Type": "Succeed"}}}`)
	arn := b.start(t, sm, "run", `{}`)
	require.Equal(t, "FAILED", b.wait(t, arn))
	return arn
}

// BenchmarkHugeExecutionPage times the page of a 25,000-event execution.
//
//	go test -run '^$' -bench HugeExecutionPage -benchtime 10x ./console/
func BenchmarkHugeExecutionPage(b *testing.B) {
	bb := setup(b)
	arn := hugeExecution(b, bb)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		code, _ := bb.get(b, "/executions/"+arn)
		if code != http.StatusOK {
			b.Fatal(code)
		}
	}
}

// A Parallel's details list its branches with their status.
func TestStateDetailsBranches(t *testing.T) {
	t.Parallel()
	b := setup(t)
	sm := b.create(t, "branches", `{"StartAt": "P", "States": {"P": {"Type": "Parallel", "End": true, "Branches": [
		{"StartAt": "A", "States": {"A": {"Type": "Pass", "End": true}}},
		{"StartAt": "B", "States": {"B": {"Type": "Fail", "Error": "E"}}}]}}}`)
	arn := b.start(t, sm, "run", `{}`)
	require.Equal(t, "FAILED", b.wait(t, arn))
	_, body := b.get(t, "/console/executions/state?arn="+arn+"&state=P")
	var details struct {
		Status     string
		DurationMs *int64
		Branches   []struct {
			Index  int
			Number int
			Start  string
			Status string
		}
	}
	require.NoError(t, json.Unmarshal([]byte(body), &details))
	require.Equal(t, "failed", details.Status)
	require.NotNil(t, details.DurationMs, "a failed Parallel has a duration")
	require.Len(t, details.Branches, 2)
	require.Equal(t, "succeeded", details.Branches[0].Status)
	require.Equal(t, "failed", details.Branches[1].Status)
	// Numbered from 1, as the graph numbers them; AWS's index from 0.
	require.Equal(t, []int{1, 2}, []int{details.Branches[0].Number, details.Branches[1].Number})
	require.Equal(t, 0, details.Branches[0].Index)
	// A failed state has a duration too.
	_, body = b.get(t, "/console/executions/state?arn="+arn+"&state=B")
	require.Contains(t, body, `"durationMs"`)
}

// The activities page shows the tasks waiting and the workers that
// polled lately.
func TestActivitiesPage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	act, err := b.svc.CreateActivity(ctx, &service.CreateActivityInput{Name: "reports"})
	require.NoError(t, err)
	pollCtx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	_, _ = b.svc.GetActivityTask(pollCtx, &service.GetActivityTaskInput{ActivityArn: act.ActivityArn, WorkerName: ptr("worker-<7>")})
	sm := b.create(t, "uses", `{"StartAt": "A", "States": {"A": {"Type": "Task", "Resource": "`+act.ActivityArn+`", "End": true}}}`)
	b.start(t, sm, "waiting", `{}`)
	testwait.Until(t, func() bool {
		_, page := b.get(t, "/activities")
		return strings.Contains(page, `data-field="waiting">1<`)
	}, 30*time.Second, 10*time.Millisecond)
	_, page := b.get(t, "/activities")
	require.Contains(t, page, "worker-&lt;7&gt;")
	require.Contains(t, page, `data-activity="reports"`)
}

func ptr[T any](v T) *T { return &v }

// The state machine page lists the versions and the aliases with their
// routing, each linking to the version's own page (its graph and its
// executions).
func TestVersionsAndAliases(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	def := `{"StartAt": "A", "States": {"A": {"Type": "Pass", "End": true}}}`
	sm := b.create(t, "versioned", def)
	v1, err := b.svc.PublishStateMachineVersion(ctx, &service.PublishStateMachineVersionInput{StateMachineArn: sm})
	require.NoError(t, err)
	def2 := `{"StartAt": "B", "States": {"B": {"Type": "Pass", "End": true}}}`
	up, err := b.svc.UpdateStateMachine(ctx, &service.UpdateStateMachineInput{StateMachineArn: sm, Definition: &def2, Publish: true})
	require.NoError(t, err)
	_, err = b.svc.CreateStateMachineAlias(ctx, &service.CreateStateMachineAliasInput{Name: "prod", Description: "the <live> one",
		RoutingConfiguration: []service.RoutingConfigurationListItem{
			{StateMachineVersionArn: v1.StateMachineVersionArn, Weight: ptr(90)}, {StateMachineVersionArn: up.StateMachineVersionArn, Weight: ptr(10)}}})
	require.NoError(t, err)
	x := b.start(t, v1.StateMachineVersionArn, "on-v1", `{}`)
	b.wait(t, x)

	status, page := b.get(t, "/state-machines/"+url.PathEscape(sm))
	require.Equal(t, 200, status)
	require.Contains(t, page, `id="versions"`)
	require.Contains(t, page, `data-alias="prod"`)
	require.Contains(t, page, "the &lt;live&gt; one")
	require.Contains(t, page, ">v1</a> 90%, ")
	require.Contains(t, page, ">v2</a> 10%")
	require.Contains(t, page, `href="/state-machines/`+url.PathEscape(up.StateMachineVersionArn)+`"`)

	// A version's page shows its own definition and the executions that
	// ran it.
	status, page = b.get(t, "/state-machines/"+url.PathEscape(v1.StateMachineVersionArn))
	require.Equal(t, 200, status)
	require.Contains(t, page, `&#34;StartAt&#34;: &#34;A&#34;`)
	require.Contains(t, page, ">on-v1</a>")
	require.NotContains(t, page, `id="versions"`)
}

// The page of an execution whose distributed Map ran shows the map run:
// its counts and its children, each linking to its own page, where the
// graph is the Map's ItemProcessor and the map run leads back to the
// parent.
func TestMapRuns(t *testing.T) {
	t.Parallel()
	b := setup(t)
	def := `{"StartAt": "M", "States": {"M": {"Type": "Map", "Label": "Fan",
		"ItemProcessor": {"ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"}, "StartAt": "Inner", "States": {
			"Inner": {"Type": "Choice", "Choices": [{"Variable": "$", "NumericEquals": 2, "Next": "Boom"}], "Default": "Fine"},
			"Boom": {"Type": "Fail", "Error": "Two"}, "Fine": {"Type": "Pass", "End": true}}},
		"ToleratedFailureCount": 1, "End": true}}}`
	sm := b.create(t, "fan", def)
	x := b.start(t, sm, "run", `[1, 2, 3]`)
	b.wait(t, x)

	status, page := b.get(t, "/executions/"+url.PathEscape(x))
	require.Equal(t, 200, status)
	require.Contains(t, page, `id="map-runs"`)
	require.Contains(t, page, `:mapRun:fan/Fan:`)
	// Items: none pending or running, 2 succeeded, 1 failed, 3 in all.
	require.Contains(t, page, `<tr data-counts="items"><th>Items</th><td>0</td><td>0</td><td>2</td><td>1</td><td>0</td><td>0</td><td>3</td></tr>`)
	i := strings.Index(page, `href="/executions/`+url.PathEscape("arn:aws:states:us-east-1:123456789012:execution:fan/Fan:"))
	require.Positive(t, i)
	link := page[i+len(`href="`):]
	link = link[:strings.IndexByte(link, '"')]
	require.Equal(t, 3, strings.Count(page, `href="/executions/`+url.PathEscape("arn:aws:states:us-east-1:123456789012:execution:fan/Fan:")))

	status, child := b.get(t, link)
	require.Equal(t, 200, status)
	require.Contains(t, child, `id="parent-map-run"`)
	require.Contains(t, child, `href="/executions/`+url.PathEscape(x)+`"`)
	// The child's graph is the ItemProcessor's.
	require.Contains(t, child, `&#34;Inner&#34;`)
	require.NotContains(t, child, `id="map-runs"`)
}

// The state machine page shows the failure policies its tags set, and
// says that those states fail unlike on AWS.
func TestFailurePoliciesShown(t *testing.T) {
	t.Parallel()
	b := setup(t)
	sm := b.create(t, "policed", `{"StartAt": "Fan", "States": {"Fan": {"Type": "Parallel", "End": true, "Branches": [
		{"StartAt": "A", "States": {"A": {"Type": "Pass", "End": true}}}]}}}`)
	_, page := b.get(t, "/state-machines/"+url.PathEscape(sm))
	require.NotContains(t, page, `id="policies"`)
	_, err := b.svc.TagResource(context.Background(), &service.TagResourceInput{ResourceArn: sm,
		Tags: []service.Tag{{Key: ptr("stepwise:policy/Fan"), Value: ptr("finish-running")}, {Key: ptr("team"), Value: ptr("night")}}})
	require.NoError(t, err)
	_, page = b.get(t, "/state-machines/"+url.PathEscape(sm))
	require.Contains(t, page, `id="policies"`)
	require.Contains(t, page, `<tr data-policy-state="Fan"><td>Fan</td><td><code>finish-running</code></td></tr>`)
	require.NotContains(t, page, ">night<") // the other tag
}

// The execution page says what the execution would cost on AWS: its
// billable state transitions at AWS's list price.
func TestExecutionCost(t *testing.T) {
	t.Parallel()
	b := setup(t)
	sm := b.create(t, "priced", `{"StartAt": "A", "States": {"A": {"Type": "Pass", "Next": "B"}, "B": {"Type": "Pass", "End": true}}}`)
	x := b.start(t, sm, "run", `{}`)
	b.wait(t, x)
	_, page := b.get(t, "/executions/"+url.PathEscape(x))
	require.Contains(t, page, `<dd id="cost">2 state transitions ≈ $0.00005</dd>`)
}
