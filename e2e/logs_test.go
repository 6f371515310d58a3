package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/stretchr/testify/require"

	"stepwise/integration/integrationtest"
	"stepwise/internal/testkit/testwait"
)

const logsDefinition = `{"StartAt": "Check", "States": {
	"Check": {"Type": "Choice", "Choices": [{"Variable": "$.ok", "BooleanEquals": true, "Next": "Done"}], "Default": "Broken"},
	"Done": {"Type": "Pass", "Result": {"done": true}, "End": true},
	"Broken": {"Type": "Fail", "Error": "Broken", "Cause": "not ok"}}}`

// createLoggedMachine creates a state machine that logs to a log group.
func createLoggedMachine(t *testing.T, c *sfn.Client, name, level string, includeData bool, group string) string {
	t.Helper()
	out, err := c.CreateStateMachine(context.Background(), &sfn.CreateStateMachineInput{
		Name: aws.String(name), RoleArn: aws.String(roleArn), Definition: aws.String(logsDefinition),
		LoggingConfiguration: &types.LoggingConfiguration{
			Level: types.LogLevel(level), IncludeExecutionData: includeData,
			Destinations: []types.LogDestination{{CloudWatchLogsLogGroup: &types.CloudWatchLogsLogGroup{
				LogGroupArn: aws.String("arn:aws:logs:us-east-1:123456789012:log-group:" + group + ":*"),
			}}},
		},
	})
	require.NoError(t, err)
	return aws.ToString(out.StateMachineArn)
}

func historyOf(t *testing.T, c *sfn.Client, arn string) []types.HistoryEvent {
	t.Helper()
	out, err := c.GetExecutionHistory(context.Background(), &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(arn)})
	require.NoError(t, err)
	return out.Events
}

// requireRecordsOf checks log records against the history events they
// log, one for one.
func requireRecordsOf(t *testing.T, recs []map[string]any, events []types.HistoryEvent, arn string) {
	t.Helper()
	require.Len(t, recs, len(events))
	for i, ev := range events {
		r := recs[i]
		require.Equal(t, strconv.FormatInt(ev.Id, 10), r["id"])
		require.Equal(t, string(ev.Type), r["type"])
		require.Equal(t, strconv.FormatInt(ev.PreviousEventId, 10), r["previous_event_id"])
		require.Equal(t, arn, r["execution_arn"])
		require.Equal(t, "0", r["redrive_count"])
		ms, err := strconv.ParseInt(r["event_timestamp"].(string), 10, 64)
		require.NoError(t, err)
		require.InDelta(t, ev.Timestamp.UnixMilli(), ms, 1)
		require.IsType(t, map[string]any{}, r["details"])
	}
}

// readRecords reads the JSON-lines files of a log group's folder.
func readRecords(t *testing.T, dir string) (map[string][]map[string]any, []string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	require.NoError(t, err)
	out := map[string][]map[string]any{}
	for _, name := range files {
		f, err := os.Open(name)
		require.NoError(t, err)
		lines := bufio.NewScanner(f)
		for lines.Scan() {
			var r map[string]any
			require.NoError(t, json.Unmarshal(lines.Bytes(), &r), lines.Text())
			out[r["execution_arn"].(string)] = append(out[r["execution_arn"].(string)], r)
		}
		f.Close()
	}
	return out, files
}

// The real binary writes executions' logs as JSON lines under --logs-dir,
// a folder per log group and a file per stream, at the level each state
// machine asks for, and flushes them when it stops. With --log-format
// json and --log-level debug its own log is JSON lines with a line per
// request and one per execution that ended.
func TestExecutionLogFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	logs := filepath.Join(dir, "logs")
	s := startServer(t, filepath.Join(dir, "logs.db"), "--logs-dir", logs, "--log-format", "json", "--log-level", "debug")
	c := s.client(t)
	all := createLoggedMachine(t, c, "all", "ALL", true, "/aws/vendedlogs/states/e2e")
	fatal := createLoggedMachine(t, c, "fatal", "FATAL", false, "/aws/vendedlogs/states/e2e")
	plain := createMachine(t, c, "plain", logsDefinition)
	ok := startExecution(t, c, all, "ok", `{"ok": true}`)
	failed := startExecution(t, c, all, "failed", `{"ok": false}`)
	fatalOk := startExecution(t, c, fatal, "ok", `{"ok": true}`)
	fatalFailed := startExecution(t, c, fatal, "failed", `{"ok": false}`)
	plainFailed := startExecution(t, c, plain, "failed", `{"ok": false}`)
	histories := map[string][]types.HistoryEvent{}
	for _, arn := range []string{ok, failed, fatalOk, fatalFailed, plainFailed} {
		waitDone(t, c, arn)
		histories[arn] = historyOf(t, c, arn)
	}
	s.stop(t)

	group := filepath.Join(logs, "aws_vendedlogs_states_e2e")
	entries, err := os.ReadDir(logs)
	require.NoError(t, err)
	require.Len(t, entries, 1, "one folder: the one log group")
	recs, files := readRecords(t, group)
	streamRE := regexp.MustCompile(`^states_(all|fatal)_\d{4}-\d\d-\d\d-\d\d-\d\d_[0-9a-f]{8}\.jsonl$`)
	for _, f := range files {
		require.Regexp(t, streamRE, filepath.Base(f))
		info, err := os.Stat(f)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	}
	requireRecordsOf(t, recs[ok], histories[ok], ok)
	requireRecordsOf(t, recs[failed], histories[failed], failed)
	require.JSONEq(t, `{"input": "{\"ok\": true}", "inputDetails": {"truncated": false}, "roleArn": "`+roleArn+`"}`, mustJSON(t, recs[ok][0]["details"]))
	last := recs[failed][len(recs[failed])-1]
	require.Equal(t, map[string]any{"error": "Broken", "cause": "not ok"}, last["details"])

	require.Empty(t, recs[fatalOk])
	fatalHistory := histories[fatalFailed]
	requireRecordsOf(t, recs[fatalFailed], fatalHistory[len(fatalHistory)-1:], fatalFailed)
	require.Empty(t, recs[plainFailed])

	// The server's own log.
	var ends, requests []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(s.stderr.String()), "\n") {
		var l map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &l), "a JSON line: %s", line)
		switch l["msg"] {
		case "server: execution ended":
			ends = append(ends, l)
		case "server: request":
			requests = append(requests, l)
		}
	}
	require.Len(t, ends, 5, "one line for each execution's end")
	for _, l := range ends {
		if l["execution_arn"] == fatalFailed {
			require.Equal(t, "DEBUG", l["level"])
			require.Equal(t, fatal, l["state_machine_arn"])
			require.Equal(t, "FAILED", l["status"])
			require.Equal(t, "Broken", l["error"])
		}
	}
	var started int
	for _, l := range requests {
		require.Equal(t, "DEBUG", l["level"])
		require.Equal(t, "POST", l["method"])
		require.Contains(t, l, "duration")
		require.NotEmpty(t, l["request_id"])
		if l["operation"] == "StartExecution" {
			require.Equal(t, float64(200), l["status"])
			started++
		}
	}
	require.Equal(t, 5, started)
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// Against moto's CloudWatch Logs (--endpoint logs=URL): the server creates
// its stream in the log group, named as AWS names it, and the events read
// back are the execution's history, one record each.
func TestExecutionLogsCloudWatch(t *testing.T) {
	t.Parallel()
	moto := integrationtest.Moto(t)
	ctx := context.Background()
	cw := cloudwatchlogs.NewFromConfig(awsConfig(t), func(o *cloudwatchlogs.Options) { o.BaseEndpoint = aws.String(moto) })
	group := "/aws/vendedlogs/states/moto"
	_, err := cw.CreateLogGroup(ctx, &cloudwatchlogs.CreateLogGroupInput{LogGroupName: aws.String(group)})
	require.NoError(t, err)

	s := startServer(t, filepath.Join(t.TempDir(), "cw.db"), "--endpoint", "logs="+moto)
	c := s.client(t)
	sm := createLoggedMachine(t, c, "to-moto", "ALL", false, group)
	failed := startExecution(t, c, sm, "failed", `{"ok": false}`)
	waitDone(t, c, failed)
	history := historyOf(t, c, failed)

	var recs []map[string]any
	testwait.Until(t, func() bool {
		out, err := cw.FilterLogEvents(ctx, &cloudwatchlogs.FilterLogEventsInput{LogGroupName: aws.String(group)})
		require.NoError(t, err)
		recs = recs[:0]
		for _, e := range out.Events {
			var r map[string]any
			require.NoError(t, json.Unmarshal([]byte(aws.ToString(e.Message)), &r))
			recs = append(recs, r)
		}
		return len(recs) >= len(history)
	}, 30*time.Second, 100*time.Millisecond, "the events reach CloudWatch Logs")
	requireRecordsOf(t, recs, history, failed)
	require.Equal(t, map[string]any{"roleArn": roleArn}, recs[0]["details"], "no execution data")

	streams, err := cw.DescribeLogStreams(ctx, &cloudwatchlogs.DescribeLogStreamsInput{LogGroupName: aws.String(group)})
	require.NoError(t, err)
	require.Len(t, streams.LogStreams, 1)
	require.Regexp(t, `^states/to-moto/\d{4}-\d\d-\d\d-\d\d-\d\d/[0-9a-f]{8}$`, aws.ToString(streams.LogStreams[0].LogStreamName))
	got, err := cw.GetLogEvents(ctx, &cloudwatchlogs.GetLogEventsInput{LogGroupName: aws.String(group),
		LogStreamName: streams.LogStreams[0].LogStreamName, StartFromHead: aws.Bool(true)})
	require.NoError(t, err)
	require.Len(t, got.Events, len(history))
	for i, e := range got.Events {
		require.InDelta(t, history[i].Timestamp.UnixMilli(), aws.ToInt64(e.Timestamp), 1)
	}
}
