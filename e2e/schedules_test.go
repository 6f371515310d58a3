package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	schedtypes "github.com/aws/aws-sdk-go-v2/service/scheduler/types"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/require"

	"stepwise/integration/integrationtest"
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
//
// Every wait is a condition polled from the test's goroutine with a
// deadline sized for a loaded machine: nothing calls t's methods after
// the test has returned.
func TestSchedulesFire(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("aws"); err != nil {
		t.Skip("the aws command is not on PATH; install the AWS CLI to run this test")
	}
	db := filepath.Join(t.TempDir(), "fire.db")
	s := startServer(t, db, "--wait-time-scale", "0.005")
	// try runs the aws command; cli requires it to succeed.
	try := func(s *server, service string, args ...string) (map[string]any, error) {
		cmd := exec.Command("aws", append([]string{service, "--endpoint-url", s.url(), "--output", "json"}, args...)...)
		cmd.Env = append(os.Environ(),
			"AWS_ACCESS_KEY_ID=AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY=secret", "AWS_DEFAULT_REGION=us-east-1",
			"AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null", "AWS_PAGER=", "AWS_MAX_ATTEMPTS=1",
			"AWS_DISABLE_HOST_PREFIX_INJECTION=true")
		out, err := cmd.Output()
		if ee, ok := err.(*exec.ExitError); ok {
			return nil, fmt.Errorf("aws %s %v: %w: %s", service, args, err, ee.Stderr)
		}
		if err != nil {
			return nil, err
		}
		v := map[string]any{}
		if len(strings.TrimSpace(string(out))) > 0 {
			if err := json.Unmarshal(out, &v); err != nil {
				return nil, fmt.Errorf("aws %s %v printed %q: %w", service, args, out, err)
			}
		}
		return v, nil
	}
	cli := func(s *server, service string, args ...string) map[string]any {
		t.Helper()
		v, err := try(s, service, args...)
		require.NoError(t, err)
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

	// names lists the executions, or fails.
	names := func(s *server) ([]string, error) {
		out, err := try(s, "stepfunctions", "list-executions", "--state-machine-arn", smArn("jobnet"))
		if err != nil {
			return nil, err
		}
		var ns []string
		for _, x := range out["executions"].([]any) {
			ns = append(ns, x.(map[string]any)["name"].(string))
		}
		sort.Strings(ns)
		return ns, nil
	}
	once := "once-" + strings.ReplaceAll(at[:10], "-", "")
	waitUntil(t, 3*time.Minute, "the at() schedule fired", func() (bool, error) {
		ns, err := names(s)
		return slices.Contains(ns, once), err
	})
	first, err := names(s)
	require.NoError(t, err)
	// The at() schedule is gone (ActionAfterCompletion DELETE).
	list := cli(s, "scheduler", "list-schedules")
	require.Len(t, list["Schedules"], 1)

	s.kill()
	s = startServer(t, db, "--wait-time-scale", "0.005")
	waitUntil(t, 3*time.Minute, "five more slots fired after the restart", func() (bool, error) {
		ns, err := names(s)
		return len(ns) >= len(first)+5, err
	})
	all, err := names(s)
	require.NoError(t, err)

	// Every minute from the first slot on, once, without a gap.
	var every []time.Time
	for _, n := range all {
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

// waitUntil polls cond from the test's own goroutine until it holds, and
// fails the test with the last error once within has passed. An error of
// cond (a server restarting, a request refused) is tried again.
func waitUntil(t testing.TB, within time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(within)
	var last error
	for {
		ok, err := cond()
		if ok && err == nil {
			return
		}
		last = err
		if time.Now().After(deadline) {
			t.Fatalf("waited %v in vain for: %s (last error: %v)", within, what, last)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// schedulerClient is an EventBridge Scheduler client for the server.
func (s *server) schedulerClient(t testing.TB) *scheduler.Client {
	t.Helper()
	cfg, err := config.LoadDefaultConfig(context.Background(),
		config.WithRegion("us-east-1"),
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", "")),
		config.WithRetryMaxAttempts(10),
	)
	require.NoError(t, err)
	return scheduler.NewFromConfig(cfg, func(o *scheduler.Options) { o.BaseEndpoint = aws.String(s.url()) })
}

// scheduledExecutions lists a state machine's executions whose name a
// schedule made (prefix-<local time>), by slot, with their start dates.
func scheduledExecutions(ctx context.Context, c *sfn.Client, sm, prefix string) (map[time.Time]time.Time, error) {
	out := map[time.Time]time.Time{}
	p := sfn.NewListExecutionsPaginator(c, &sfn.ListExecutionsInput{StateMachineArn: aws.String(sm)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, x := range page.Executions {
			ts, ok := strings.CutPrefix(aws.ToString(x.Name), prefix+"-")
			if !ok {
				continue
			}
			slot, err := time.Parse("20060102T150405", ts)
			if err != nil {
				return nil, err
			}
			if _, dup := out[slot]; dup {
				return nil, fmt.Errorf("slot %v started twice", slot)
			}
			out[slot] = aws.ToTime(x.StartDate)
		}
	}
	return out, nil
}

// TestSchedulesResumeAfterRestart: under a scaled clock (a minute of
// execution time in 0.6 s of real time) a rate(1 minute) schedule fires,
// the server is killed (SIGKILL) and then stopped (SIGTERM), each time
// started again on its database. Execution time never goes back: an
// execution started by hand right after each restart starts after every
// slot fired before it. And the slots continue from the last one fired:
// every minute once, none missing, none twice.
func TestSchedulesResumeAfterRestart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "resume.db")
	args := []string{"--wait-time-scale", "0.01"}
	s := startServer(t, db, args...)
	c := s.client(t)
	_, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("tick"), RoleArn: aws.String(roleArn),
		Definition: aws.String(`{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}`)})
	require.NoError(t, err)
	_, err = s.schedulerClient(t).CreateSchedule(ctx, &scheduler.CreateScheduleInput{
		Name: aws.String("tick"), ScheduleExpression: aws.String("rate(1 minute)"),
		FlexibleTimeWindow: &schedtypes.FlexibleTimeWindow{Mode: schedtypes.FlexibleTimeWindowModeOff},
		Target:             &schedtypes.Target{Arn: aws.String(smArn("tick")), RoleArn: aws.String(roleArn)},
	})
	require.NoError(t, err)

	fired := 0
	for round, restart := range []func(){s.kill, func() { s.stop(t) }} {
		c = s.client(t)
		waitUntil(t, 3*time.Minute, fmt.Sprintf("round %d: three more slots fired", round), func() (bool, error) {
			got, err := scheduledExecutions(ctx, c, smArn("tick"), "tick")
			return len(got) >= fired+3, err
		})
		restart()
		s = startServer(t, db, args...)
		c = s.client(t)
		before, err := scheduledExecutions(ctx, c, smArn("tick"), "tick")
		require.NoError(t, err)
		var latest time.Time
		for _, started := range before {
			if started.After(latest) {
				latest = started
			}
		}
		byHand, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smArn("tick")),
			Name: aws.String(fmt.Sprintf("by-hand-%d", round))})
		require.NoError(t, err)
		require.False(t, aws.ToTime(byHand.StartDate).Before(latest),
			"round %d: execution time went back: started at %v after a slot started at %v", round, aws.ToTime(byHand.StartDate), latest)
		fired = len(before)
	}
	waitUntil(t, 3*time.Minute, "three more slots fired after the last restart", func() (bool, error) {
		got, err := scheduledExecutions(ctx, c, smArn("tick"), "tick")
		return len(got) >= fired+3, err
	})
	got, err := scheduledExecutions(ctx, c, smArn("tick"), "tick")
	require.NoError(t, err)
	slots := slices.SortedFunc(maps.Keys(got), time.Time.Compare)
	for i := 1; i < len(slots); i++ {
		require.Equal(t, time.Minute, slots[i].Sub(slots[i-1]), "slots %v", slots)
	}
}

// TestSchedulesTimeSkipCron: under --time-skip a nightly cron() in
// Asia/Tokyo does not run the idle server's clock away; `stepwise clock
// advance --to` half an hour past the next 03:00 in Tokyo runs that night
// once, the execution started at the slot's time.
func TestSchedulesTimeSkipCron(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := startServer(t, filepath.Join(t.TempDir(), "skip.db"), "--time-skip")
	c := s.client(t)
	_, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("nightly"), RoleArn: aws.String(roleArn),
		Definition: aws.String(`{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}`)})
	require.NoError(t, err)
	_, err = s.schedulerClient(t).CreateSchedule(ctx, &scheduler.CreateScheduleInput{
		Name: aws.String("nightly"), ScheduleExpression: aws.String("cron(0 3 * * ? *)"),
		ScheduleExpressionTimezone: aws.String("Asia/Tokyo"),
		FlexibleTimeWindow:         &schedtypes.FlexibleTimeWindow{Mode: schedtypes.FlexibleTimeWindowModeOff},
		Target:                     &schedtypes.Target{Arn: aws.String(smArn("nightly")), RoleArn: aws.String(roleArn)},
	})
	require.NoError(t, err)
	time.Sleep(1500 * time.Millisecond) // looks at the schedules, for a clock that runs away to do so
	got, err := scheduledExecutions(ctx, c, smArn("nightly"), "nightly")
	require.NoError(t, err)
	require.Empty(t, got, "the idle server ran nights")

	tokyo, err := time.LoadLocation("Asia/Tokyo")
	require.NoError(t, err)
	now := time.Now().In(tokyo)
	night := time.Date(now.Year(), now.Month(), now.Day(), 3, 0, 0, 0, tokyo)
	if !night.After(now) {
		night = night.AddDate(0, 0, 1)
	}
	to := night.Add(30 * time.Minute).UTC()
	out, err := exec.Command(binary, "clock", "advance", "--to", to.Format(time.RFC3339), "--endpoint", s.url()).CombinedOutput()
	require.NoError(t, err, string(out))
	require.Equal(t, to.Format(time.RFC3339)+" (virtual)\n", string(out))

	got, err = scheduledExecutions(ctx, c, smArn("nightly"), "nightly")
	require.NoError(t, err)
	require.Len(t, got, 1, "nights %v", got)
	for slot, started := range got {
		require.Equal(t, night.Format("20060102T150405"), slot.Format("20060102T150405"), "the slot's name is its time in Tokyo")
		require.False(t, started.Before(night), "started at %v, before its slot %v", started, night)
		require.Less(t, started.Sub(night), time.Second, "started at %v, its slot %v", started, night)
	}
	out, err = exec.Command(binary, "clock", "--endpoint", s.url()).CombinedOutput()
	require.NoError(t, err, string(out))
	read, err := time.Parse(time.RFC3339Nano, strings.TrimSuffix(string(out), " (virtual)\n"))
	require.NoError(t, err, string(out))
	require.Less(t, read.Sub(to), time.Minute, "the clock stays where it was advanced to")
}

// TestSchedulesDeadLetter: a schedule whose target state machine does not
// exist tries its slot once and retries it MaximumRetryAttempts (2) times,
// then sends one dead-letter event to its queue (moto's SQS, through the
// server's --aws-endpoint): the target's input as the body and AWS's
// attributes. No further attempt is made.
func TestSchedulesDeadLetter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	moto := integrationtest.Moto(t)
	q := sqs.NewFromConfig(awsConfig(t), func(o *sqs.Options) { o.BaseEndpoint = aws.String(moto) })
	queue, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("schedules-dlq")})
	require.NoError(t, err)
	s := startServer(t, filepath.Join(t.TempDir(), "dlq.db"), "--aws-endpoint", moto, "--wait-time-scale", "0.05")
	const dlq = "arn:aws:sqs:us-east-1:123456789012:schedules-dlq"
	_, err = s.schedulerClient(t).CreateSchedule(ctx, &scheduler.CreateScheduleInput{
		Name: aws.String("orphan"), ScheduleExpression: aws.String("rate(1 hour)"),
		FlexibleTimeWindow: &schedtypes.FlexibleTimeWindow{Mode: schedtypes.FlexibleTimeWindowModeOff},
		Target: &schedtypes.Target{Arn: aws.String(smArn("missing")), RoleArn: aws.String(roleArn),
			Input:            aws.String(`{"attempt":"<aws.scheduler.attempt-number>"}`),
			RetryPolicy:      &schedtypes.RetryPolicy{MaximumRetryAttempts: aws.Int32(2)},
			DeadLetterConfig: &schedtypes.DeadLetterConfig{Arn: aws.String(dlq)}},
	})
	require.NoError(t, err)

	var msgs []sqstypes.Message
	waitUntil(t, 2*time.Minute, "the dead-letter event arrived", func() (bool, error) {
		out, err := q.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: queue.QueueUrl, MessageAttributeNames: []string{"All"},
			WaitTimeSeconds: 1, MaxNumberOfMessages: 10})
		if err != nil {
			return false, err
		}
		msgs = append(msgs, out.Messages...)
		return len(msgs) > 0, nil
	})
	require.Len(t, msgs, 1)
	m := msgs[0]
	require.Equal(t, `{"attempt":"3"}`, aws.ToString(m.Body))
	attr := func(name string) string { return aws.ToString(m.MessageAttributes[name].StringValue) }
	require.Equal(t, "StateMachineDoesNotExist", attr("ERROR_CODE"))
	require.Contains(t, attr("ERROR_MESSAGE"), smArn("missing"))
	require.Equal(t, "MaximumRetryAttempts", attr("EXHAUSTED_RETRY_CONDITION"))
	require.Equal(t, "2", attr("RETRY_ATTEMPTS"))
	require.Equal(t, "false", attr("IS_PAYLOAD_TRUNCATED"))
	require.NotEmpty(t, attr("EXECUTION_ID"))
	require.Equal(t, "arn:aws:scheduler:us-east-1:123456789012:schedule/default/orphan", attr("SCHEDULE_ARN"))
	require.Equal(t, "arn:aws:scheduler:us-east-1:123456789012:schedule-group/default", attr("GROUP_ARN"))
	require.Equal(t, smArn("missing"), attr("TARGET_ARN"))

	// Exactly the configured retries: three attempts, and no more after
	// (the next slot is an hour of execution time, 3 minutes, away).
	out, err := q.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: queue.QueueUrl, WaitTimeSeconds: 2})
	require.NoError(t, err)
	require.Empty(t, out.Messages)
	require.Equal(t, 3, strings.Count(s.stderr.String(), `msg="scheduler: start failed"`), "attempts logged:\n%s", s.stderr.String())
}
