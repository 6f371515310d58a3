package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"stepwise/internal/testwait"
)

// TestSchedulesAWSCLI drives the EventBridge Scheduler API with the aws
// command: groups, schedules, paging and tags, on the server's own port.
func TestSchedulesAWSCLI(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("aws"); err != nil {
		t.Skip("the aws command is not on PATH; install the AWS CLI to run this test")
	}
	s := startServer(t, filepath.Join(t.TempDir(), "sched.db"))

	run := func(args ...string) ([]byte, []byte, error) {
		cmd := exec.Command("aws", append([]string{"scheduler", "--endpoint-url", s.url(), "--output", "json"}, args...)...)
		cmd.Env = append(os.Environ(),
			"AWS_ACCESS_KEY_ID=AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY=secret", "AWS_DEFAULT_REGION=us-east-1",
			"AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null", "AWS_PAGER=", "AWS_MAX_ATTEMPTS=1")
		out, err := cmd.Output()
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		return out, stderr, err
	}
	aws := func(args ...string) map[string]any {
		t.Helper()
		out, stderr, err := run(args...)
		require.NoError(t, err, "aws scheduler %v: %s", args, stderr)
		v := map[string]any{}
		if len(strings.TrimSpace(string(out))) > 0 {
			require.NoError(t, json.Unmarshal(out, &v), "aws %v printed %q", args, out)
		}
		return v
	}
	fails := func(wantInStderr string, args ...string) {
		t.Helper()
		_, stderr, err := run(args...)
		require.Error(t, err, "aws scheduler %v succeeded", args)
		require.Contains(t, string(stderr), wantInStderr)
	}

	target := `{"Arn":"` + smArn("jobnet") + `","RoleArn":"` + roleArn + `","Input":"{\"k\":\"<aws.scheduler.scheduled-time>\"}"}`
	g := aws("create-schedule-group", "--name", "etl", "--tags", "Key=team,Value=data")
	groupArn := "arn:aws:scheduler:us-east-1:123456789012:schedule-group/etl"
	require.Equal(t, groupArn, g["ScheduleGroupArn"])

	c := aws("create-schedule", "--name", "nightly", "--group-name", "etl",
		"--schedule-expression", "cron(0 3 * * ? *)", "--schedule-expression-timezone", "Asia/Tokyo",
		"--flexible-time-window", "Mode=OFF", "--target", target, "--start-date", "2026-12-01T00:00:00Z")
	require.Equal(t, "arn:aws:scheduler:us-east-1:123456789012:schedule/etl/nightly", c["ScheduleArn"])
	aws("create-schedule", "--name", "often", "--schedule-expression", "rate(5 minutes)",
		"--flexible-time-window", "Mode=FLEXIBLE,MaximumWindowInMinutes=5", "--target", target, "--state", "DISABLED")

	got := aws("get-schedule", "--name", "nightly", "--group-name", "etl")
	require.Equal(t, "cron(0 3 * * ? *)", got["ScheduleExpression"])
	require.Equal(t, "Asia/Tokyo", got["ScheduleExpressionTimezone"])
	require.Equal(t, "ENABLED", got["State"])
	require.Equal(t, smArn("jobnet"), got["Target"].(map[string]any)["Arn"])
	// aws v1 prints the wire's epoch seconds, v2 an ISO 8601 date.
	require.Contains(t, []any{1796083200.0, "2026-12-01T00:00:00+00:00"}, got["StartDate"])

	fails("ConflictException", "create-schedule", "--name", "nightly", "--group-name", "etl",
		"--schedule-expression", "cron(0 3 * * ? *)", "--flexible-time-window", "Mode=OFF", "--target", target)
	fails("Invalid Schedule Expression rate(1 second).", "create-schedule", "--name", "bad",
		"--schedule-expression", "rate(1 second)", "--flexible-time-window", "Mode=OFF", "--target", target)
	fails("ResourceNotFoundException", "get-schedule", "--name", "missing")

	aws("update-schedule", "--name", "often", "--schedule-expression", "rate(10 minutes)",
		"--flexible-time-window", "Mode=OFF", "--target", target)
	require.Equal(t, "rate(10 minutes)", aws("get-schedule", "--name", "often")["ScheduleExpression"])

	// The CLI pages through ListSchedules on its own (NextToken).
	list := aws("list-schedules", "--page-size", "1")
	var names []string
	for _, s := range list["Schedules"].([]any) {
		names = append(names, s.(map[string]any)["Name"].(string))
	}
	require.Equal(t, []string{"often", "nightly"}, names)
	list = aws("list-schedules", "--group-name", "etl")
	require.Len(t, list["Schedules"], 1)

	groups := aws("list-schedule-groups")
	require.Len(t, groups["ScheduleGroups"], 2)

	aws("tag-resource", "--resource-arn", groupArn, "--tags", "Key=env,Value=prod")
	aws("untag-resource", "--resource-arn", groupArn, "--tag-keys", "team")
	tags := aws("list-tags-for-resource", "--resource-arn", groupArn)
	require.Equal(t, []any{map[string]any{"Key": "env", "Value": "prod"}}, tags["Tags"])

	aws("delete-schedule", "--name", "often")
	aws("delete-schedule-group", "--name", "etl")
	fails("ResourceNotFoundException", "get-schedule", "--name", "nightly", "--group-name", "etl")
	require.Empty(t, aws("list-schedules")["Schedules"])
}

// TestSchedulesFire fires an at() schedule and a rate(1 minute) one under
// a scaled clock (a minute of execution time in 0.3 s), kills the server
// with SIGKILL and starts it again on the same database: every slot fires
// once, the at() schedule is deleted after it fired.
func TestSchedulesFire(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("aws"); err != nil {
		t.Skip("the aws command is not on PATH; install the AWS CLI to run this test")
	}
	db := filepath.Join(t.TempDir(), "fire.db")
	s := startServer(t, db, "--wait-time-scale", "0.005")
	cli := func(s *server, service string, args ...string) map[string]any {
		t.Helper()
		cmd := exec.Command("aws", append([]string{service, "--endpoint-url", s.url(), "--output", "json"}, args...)...)
		cmd.Env = append(os.Environ(),
			"AWS_ACCESS_KEY_ID=AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY=secret", "AWS_DEFAULT_REGION=us-east-1",
			"AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null", "AWS_PAGER=", "AWS_MAX_ATTEMPTS=1",
			"AWS_DISABLE_HOST_PREFIX_INJECTION=true")
		out, err := cmd.Output()
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		require.NoError(t, err, "aws %s %v: %s", service, args, stderr)
		v := map[string]any{}
		if len(strings.TrimSpace(string(out))) > 0 {
			require.NoError(t, json.Unmarshal(out, &v))
		}
		return v
	}
	def := filepath.Join(t.TempDir(), "def.json")
	require.NoError(t, os.WriteFile(def, []byte(`{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}`), 0o644))
	cli(s, "stepfunctions", "create-state-machine", "--name", "jobnet", "--definition", "file://"+def, "--role-arn", roleArn)

	// Execution time runs 200 times as fast: a few real seconds ahead.
	at := time.Now().UTC().Add(30 * time.Minute).Format("2006-01-02T15:04:05")
	universal := `{"Arn":"arn:aws:scheduler:::aws-sdk:sfn:startExecution","RoleArn":"` + roleArn +
		`","Input":"{\"StateMachineArn\":\"` + smArn("jobnet") + `\",\"Name\":\"once-<stepwise.scheduled-date>\",\"Input\":\"{\\\"t\\\":\\\"<aws.scheduler.scheduled-time>\\\"}\"}"}`
	cli(s, "scheduler", "create-schedule", "--name", "once", "--schedule-expression", "at("+at+")",
		"--flexible-time-window", "Mode=OFF", "--target", universal, "--action-after-completion", "DELETE")
	target := `{"Arn":"` + smArn("jobnet") + `","RoleArn":"` + roleArn + `","Input":"{\"t\":\"<aws.scheduler.scheduled-time>\"}"}`
	cli(s, "scheduler", "create-schedule", "--name", "every", "--schedule-expression", "rate(1 minute)",
		"--flexible-time-window", "Mode=OFF", "--target", target)

	names := func(s *server) []string {
		out := cli(s, "stepfunctions", "list-executions", "--state-machine-arn", smArn("jobnet"))
		var ns []string
		for _, x := range out["executions"].([]any) {
			ns = append(ns, x.(map[string]any)["name"].(string))
		}
		sort.Strings(ns)
		return ns
	}
	once := "once-" + strings.ReplaceAll(at[:10], "-", "")
	testwait.Until(t, func() bool { return slices.Contains(names(s), once) }, 60*time.Second, 200*time.Millisecond)
	first := names(s)
	// The at() schedule is gone (ActionAfterCompletion DELETE).
	list := cli(s, "scheduler", "list-schedules")
	require.Len(t, list["Schedules"], 1)

	s.kill()
	s = startServer(t, db, "--wait-time-scale", "0.005")
	testwait.Until(t, func() bool { return len(names(s)) >= len(first)+5 }, 60*time.Second, 200*time.Millisecond)

	// Every minute from the first slot on, once, without a gap.
	var every []time.Time
	for _, n := range names(s) {
		if ts, ok := strings.CutPrefix(n, "every-"); ok {
			tm, err := time.Parse("20060102T150405", ts)
			require.NoError(t, err)
			every = append(every, tm)
		}
	}
	for i := 1; i < len(every); i++ {
		require.Equal(t, time.Minute, every[i].Sub(every[i-1]), "slots %v", every)
	}

	// The console's schedules page: the rate schedule, its last run and
	// the next three.
	resp, err := http.Get(s.url() + "/schedule-list")
	require.NoError(t, err)
	page, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, string(page), `<tr data-schedule="default/every">`)
	require.Contains(t, string(page), `<code>rate(1 minute)</code>`)
	i := strings.Index(string(page), `data-field="next"`)
	require.Positive(t, i)
	require.Equal(t, 3, strings.Count(string(page)[i:], "<div>"), "the next three runs")
	require.NotContains(t, string(page), `data-schedule="default/once"`)
}
