package server

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/internal/testkit/testwait"
	"stepwise/observe/notify"
	"stepwise/service"
)

// A job running past twice its usual duration is counted on /metrics and
// told of once per run: one "Job Running Late" event, delivered to the
// events' file as the status changes are.
func TestLateJobs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "events.jsonl")
	s := newAPIParts(t).api(t, true, nil, WithEvents(Events{File: file}))
	svc := s.Service()
	act, err := svc.CreateActivity(ctx, &service.CreateActivityInput{Name: "extract"})
	require.NoError(t, err)
	role := "arn:aws:iam::123456789012:role/r"
	sm, err := svc.CreateStateMachine(ctx, &service.CreateStateMachineInput{Name: "nightly", RoleArn: role,
		Definition: `{"StartAt":"Extract","States":{"Extract":{"Type":"Task","Resource":"` + act.ActivityArn + `","End":true}}}`})
	require.NoError(t, err)
	wait := func(arn string) string {
		var status string
		testwait.Until(t, func() bool {
			x, err := svc.DescribeExecution(ctx, &service.DescribeExecutionInput{ExecutionArn: arn})
			require.NoError(t, err)
			status = x.Status
			return status != "RUNNING"
		}, 30*time.Second, 5*time.Millisecond)
		return status
	}
	start := func(sm, name string) string {
		out, err := svc.StartExecution(ctx, &service.StartExecutionInput{StateMachineArn: sm, Name: &name})
		require.NoError(t, err)
		return out.ExecutionArn
	}
	for _, name := range []string{"n1", "n2", "n3"} {
		arn := start(sm.StateMachineArn, name)
		task, err := svc.GetActivityTask(ctx, &service.GetActivityTaskInput{ActivityArn: act.ActivityArn})
		require.NoError(t, err)
		_, err = svc.SendTaskSuccess(ctx, &service.SendTaskSuccessInput{TaskToken: *task.TaskToken, Output: "{}"})
		require.NoError(t, err)
		require.Equal(t, "SUCCEEDED", wait(arn))
	}
	late := start(sm.StateMachineArn, "n4")
	// An hour's Wait moves the virtual clock an hour on.
	sleeper, err := svc.CreateStateMachine(ctx, &service.CreateStateMachineInput{Name: "sleeper", RoleArn: role,
		Definition: `{"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":3600,"End":true}}}`})
	require.NoError(t, err)
	require.Equal(t, "SUCCEEDED", wait(start(sleeper.StateMachineArn, "s")))

	told := s.lateJobs(ctx, map[string]bool{})
	require.Len(t, told, 1)
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "http://example.com/metrics", nil))
	require.Contains(t, rec.Body.String(), `stepwise_late_jobs{state="Extract",state_machine_arn="`+sm.StateMachineArn+`"} 1`)

	var ev struct {
		DetailType string            `json:"detail-type"`
		Resources  []string          `json:"resources"`
		Detail     notify.LateDetail `json:"detail"`
	}
	testwait.Until(t, func() bool {
		data, _ := os.ReadFile(file)
		return strings.Contains(string(data), notify.LateDetailType)
	}, 30*time.Second, 10*time.Millisecond)
	lines := lateLines(t, file)
	require.Len(t, lines, 1)
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &ev))
	require.Equal(t, []string{late}, ev.Resources)
	require.Equal(t, "Extract", ev.Detail.State)
	require.Equal(t, "n4", ev.Detail.Name)
	require.GreaterOrEqual(t, ev.Detail.RunningSeconds, 3600.0)
	require.Positive(t, ev.Detail.UsualSeconds)
	require.Less(t, 2*ev.Detail.UsualSeconds, ev.Detail.RunningSeconds)

	// Told once: a second look writes no other event (the events' poll,
	// a second, would have delivered it).
	require.Equal(t, told, s.lateJobs(ctx, told))
	time.Sleep(2500 * time.Millisecond)
	require.Len(t, lateLines(t, file), 1)

	// A server that did not tell of it (a new leader) tells again, with
	// the same id.
	s.lateJobs(ctx, map[string]bool{})
	testwait.Until(t, func() bool { return len(lateLines(t, file)) == 2 }, 30*time.Second, 10*time.Millisecond)
	var ids []string
	for _, l := range lateLines(t, file) {
		var ev struct{ ID string }
		require.NoError(t, json.Unmarshal([]byte(l), &ev))
		ids = append(ids, ev.ID)
	}
	require.Equal(t, ids[0], ids[1])
}

// lateLines are the late events of an events file.
func lateLines(t *testing.T, file string) []string {
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if strings.Contains(l, notify.LateDetailType) {
			out = append(out, l)
		}
	}
	return out
}
