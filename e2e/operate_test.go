package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"
	"stepwise/internal/testkit/testwait"
)

// scrape reads the server's /metrics.
func scrape(t *testing.T, s *server) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(s.url() + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	return families
}

// counter is a counter's value for one label value (0 when absent).
func counter(families map[string]*dto.MetricFamily, name, label, value string) float64 {
	f := families[name]
	if f == nil {
		return 0
	}
	for _, m := range f.Metric {
		for _, l := range m.Label {
			if l.GetName() == label && l.GetValue() == value {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// historyCounts counts a state machine's executions' history events by
// type.
func historyCounts(t *testing.T, c *sfn.Client, smArn string) map[string]int {
	t.Helper()
	ctx := context.Background()
	out := map[string]int{}
	xs, err := c.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: aws.String(smArn)})
	require.NoError(t, err)
	for _, x := range xs.Executions {
		h, err := c.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: x.ExecutionArn, MaxResults: 1000})
		require.NoError(t, err)
		for _, ev := range h.Events {
			out[string(ev.Type)]++
		}
	}
	return out
}

// Executions of every ending: /metrics counts what their histories say,
// per state machine, and the activity metrics per activity.
func TestMetricsMatchHistories(t *testing.T) {
	t.Parallel()
	s := startServer(t, filepath.Join(t.TempDir(), "metrics.db"))
	c := s.client(t)
	ctx := context.Background()

	pass := createMachine(t, c, "m-pass", `{"StartAt": "A", "States": {"A": {"Type": "Pass", "End": true}}}`)
	fail := createMachine(t, c, "m-fail", `{"StartAt": "F", "States": {"F": {"Type": "Fail", "Error": "E"}}}`)
	wait := createMachine(t, c, "m-wait", `{"StartAt": "W", "States": {"W": {"Type": "Wait", "Seconds": 3600, "End": true}}}`)
	slow := createMachine(t, c, "m-timeout", `{"TimeoutSeconds": 1, "StartAt": "W", "States": {"W": {"Type": "Wait", "Seconds": 30, "End": true}}}`)
	act, err := c.CreateActivity(ctx, &sfn.CreateActivityInput{Name: aws.String("m-work")})
	require.NoError(t, err)
	work := createMachine(t, c, "m-activity", `{"StartAt": "T", "States": {"T": {"Type": "Task", "Resource": "`+aws.ToString(act.ActivityArn)+`", "End": true}}}`)

	var arns []string
	for i := range 3 {
		arns = append(arns, startExecution(t, c, pass, fmt.Sprint("p", i), `{}`))
	}
	failed := startExecution(t, c, fail, "f0", `{}`)
	arns = append(arns, failed, startExecution(t, c, fail, "f1", `{}`))
	stopped := startExecution(t, c, wait, "w0", `{}`)
	_, err = c.StopExecution(ctx, &sfn.StopExecutionInput{ExecutionArn: aws.String(stopped)})
	require.NoError(t, err)
	arns = append(arns, stopped, startExecution(t, c, slow, "t0", `{}`))
	for i := range 2 {
		arns = append(arns, startExecution(t, c, work, fmt.Sprint("a", i), `{}`))
	}
	for range 2 {
		task, err := c.GetActivityTask(ctx, &sfn.GetActivityTaskInput{ActivityArn: act.ActivityArn})
		require.NoError(t, err)
		_, err = c.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: task.TaskToken, Output: aws.String(`{}`)})
		require.NoError(t, err)
	}
	for _, arn := range arns {
		waitDone(t, c, arn)
	}
	_, err = c.RedriveExecution(ctx, &sfn.RedriveExecutionInput{ExecutionArn: aws.String(failed)})
	require.NoError(t, err)
	waitDone(t, c, failed)

	families := scrape(t, s)
	for _, sm := range []string{pass, fail, wait, slow, work} {
		h := historyCounts(t, c, sm)
		for metric, event := range map[string]string{
			"stepwise_executions_started_total":   "ExecutionStarted",
			"stepwise_executions_succeeded_total": "ExecutionSucceeded",
			"stepwise_executions_failed_total":    "ExecutionFailed",
			"stepwise_executions_aborted_total":   "ExecutionAborted",
			"stepwise_executions_timed_out_total": "ExecutionTimedOut",
			"stepwise_executions_redriven_total":  "ExecutionRedriven",
		} {
			require.Equal(t, float64(h[event]), counter(families, metric, "state_machine_arn", sm), "%s of %s", metric, sm)
		}
	}
	// The counts are not all zero: each ending happened.
	require.Equal(t, 3.0, counter(families, "stepwise_executions_succeeded_total", "state_machine_arn", pass))
	require.Equal(t, 3.0, counter(families, "stepwise_executions_failed_total", "state_machine_arn", fail), "two failures and a redriven one failing again")
	require.Equal(t, 1.0, counter(families, "stepwise_executions_redriven_total", "state_machine_arn", fail))
	require.Equal(t, 1.0, counter(families, "stepwise_executions_aborted_total", "state_machine_arn", wait))
	require.Equal(t, 1.0, counter(families, "stepwise_executions_timed_out_total", "state_machine_arn", slow))

	h := historyCounts(t, c, work)
	actArn := aws.ToString(act.ActivityArn)
	require.Equal(t, 2, h["ActivitySucceeded"])
	for metric, event := range map[string]string{
		"stepwise_activities_scheduled_total": "ActivityScheduled",
		"stepwise_activities_started_total":   "ActivityStarted",
		"stepwise_activities_succeeded_total": "ActivitySucceeded",
	} {
		require.Equal(t, float64(h[event]), counter(families, metric, "activity_arn", actArn), metric)
	}
	require.NotNil(t, families["stepwise_commit_latency_seconds"])
	require.NotNil(t, families["stepwise_running_executions"])
	require.Positive(t, counter(families, "stepwise_api_requests_total", "operation", "StartExecution"))
}

// statusHook is a webhook receiver of status-change events.
type statusHook struct {
	mu     sync.Mutex
	down   bool
	events []hookEvent
}

type hookEvent struct {
	ID     string
	Arn    string
	Status string
}

func (h *statusHook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.down {
		http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
		return
	}
	var ev struct {
		ID     string `json:"id"`
		Detail struct {
			ExecutionArn string `json:"executionArn"`
			Status       string `json:"status"`
		} `json:"detail"`
	}
	if json.Unmarshal(body, &ev) != nil {
		http.Error(w, "bad", http.StatusBadRequest)
		return
	}
	h.events = append(h.events, hookEvent{ev.ID, ev.Detail.ExecutionArn, ev.Detail.Status})
	w.WriteHeader(http.StatusOK)
}

func (h *statusHook) setDown(down bool) {
	h.mu.Lock()
	h.down = down
	h.mu.Unlock()
}

// byExecution returns, per execution, its distinct statuses in order, and
// checks that a duplicate carries the same event id.
func (h *statusHook) byExecution(t *testing.T) map[string][]string {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[string][]string{}
	ids := map[string]string{} // event id → arn/status
	for _, ev := range h.events {
		key := ev.Arn + "/" + ev.Status
		if prev, ok := ids[ev.ID]; ok {
			require.Equal(t, prev, key, "a redelivered event is the same event")
			continue
		}
		ids[ev.ID] = key
		out[ev.Arn] = append(out[ev.Arn], ev.Status)
	}
	return out
}

// The webhook gets exactly the status changes of the executions, also
// when the server is killed in the middle (at least once: duplicates
// carry the same event id) and when the receiver is down for a while.
func TestStatusEventsAtLeastOnce(t *testing.T) {
	t.Parallel()
	hook := &statusHook{}
	rcv := httptest.NewServer(hook)
	defer rcv.Close()
	db := filepath.Join(t.TempDir(), "events.db")
	s := startServer(t, db, "--events-webhook", rcv.URL)
	c := s.client(t)

	quick := createMachine(t, c, "e-quick", `{"StartAt": "A", "States": {"A": {"Type": "Pass", "End": true}}}`)
	slow := createMachine(t, c, "e-slow", `{"StartAt": "W", "States": {"W": {"Type": "Wait", "Seconds": 2, "Next": "F"},
		"F": {"Type": "Fail", "Error": "Late"}}}`)
	var arns []string
	for i := range 5 {
		arns = append(arns, startExecution(t, c, quick, fmt.Sprint("q", i), `{}`))
		arns = append(arns, startExecution(t, c, slow, fmt.Sprint("s", i), `{}`))
	}
	// The receiver goes down, and the server is killed while the slow
	// executions wait.
	hook.setDown(true)
	time.Sleep(300 * time.Millisecond)
	s.kill()
	s = startServer(t, db, "--events-webhook", rcv.URL)
	c = s.client(t)
	for _, arn := range arns {
		waitDone(t, c, arn)
	}
	time.Sleep(500 * time.Millisecond)
	hook.setDown(false)

	want := map[string][]string{}
	for i, arn := range arns {
		if i%2 == 0 {
			want[arn] = []string{"RUNNING", "SUCCEEDED"}
		} else {
			want[arn] = []string{"RUNNING", "FAILED"}
		}
	}
	testwait.Until(t, func() bool {
		got := hook.byExecution(t)
		for arn, statuses := range want {
			if len(got[arn]) != len(statuses) {
				return false
			}
		}
		return true
	}, 60*time.Second, 50*time.Millisecond, "every status change arrives once the receiver is back")
	require.Equal(t, want, hook.byExecution(t), "exactly the status changes, in order, none invented")

	families := scrape(t, s)
	var failures float64
	for _, m := range families["stepwise_status_events_delivery_failures_total"].GetMetric() {
		failures += m.GetCounter().GetValue()
	}
	require.Positive(t, failures, "the receiver's outage was counted")
}
