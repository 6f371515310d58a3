package execlog_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"stepwise/engine"
	"stepwise/internal/testkit/testwait"
	"stepwise/observe/execlog"
	"stepwise/service"
	"stepwise/store/sqlitestore"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// awsErrorEvents are the events AWS's table of log levels ("Log levels",
// AWS Step Functions developer guide) marks for ERROR; awsFatalEvents
// those it marks for FATAL.
var (
	awsErrorEvents = []string{
		"ExecutionAborted", "ExecutionFailed", "ExecutionTimedOut", "FailStateEntered",
		"LambdaFunctionFailed", "LambdaFunctionScheduleFailed", "LambdaFunctionStartFailed", "LambdaFunctionTimedOut",
		"MapIterationAborted", "MapIterationFailed", "MapStateAborted", "MapStateFailed",
		"ParallelStateAborted", "ParallelStateFailed", "TaskFailed", "TaskStartFailed", "TaskStateAborted",
		"TaskSubmitFailed", "TaskTimedOut", "WaitStateAborted",
	}
	awsFatalEvents = []string{"ExecutionAborted", "ExecutionFailed", "ExecutionTimedOut"}
)

const (
	roleArn  = "arn:aws:iam::123456789012:role/stepwise"
	groupArn = "arn:aws:logs:us-east-1:123456789012:log-group:/aws/vendedlogs/states/test:*"
	streamID = "0a1b2c3d"
)

type testBundle struct {
	ctx    context.Context
	dir    string
	svc    *service.Service
	eng    *engine.Engine
	writer *execlog.Writer
	// minutes moves the writer's clock on, by the minute.
	minutes atomic.Int64
}

// setup runs a real engine and service on an in-memory store, with a
// Writer writing files under a temporary directory, primed by the service
// with each revision's settings.
func setup(t *testing.T) *testBundle { return setupWith(t, true) }

// setupWith is setup; without prime, the Writer reads state machines'
// settings when it first needs them (as after a restart).
func setupWith(t *testing.T, prime bool) *testBundle {
	t.Helper()
	b := &testBundle{ctx: context.Background(), dir: t.TempDir()}
	start := time.Date(2026, 5, 4, 3, 2, 1, 0, time.UTC)
	drv, err := sqlitestore.Open(b.ctx, sqlitestore.Memory, sqlitestore.Options{})
	require.NoError(t, err)
	b.writer, err = execlog.New(execlog.Config{
		StateMachines: drv.Executor(), Sink: &execlog.FileSink{Dir: b.dir},
		FlushInterval: 10 * time.Millisecond, StreamID: streamID,
		Now: func() time.Time { return start.Add(time.Duration(b.minutes.Load()) * time.Minute) },
	})
	require.NoError(t, err)
	b.eng, err = engine.New(drv, engine.Config{Region: "us-east-1", Account: "123456789012", WaitTimeScale: 0, Observer: b.writer})
	require.NoError(t, err)
	require.NoError(t, b.eng.Start(b.ctx))
	svcCfg := service.Config{}
	if prime {
		svcCfg.OnStateMachine = b.writer.Prime
	}
	b.svc, err = service.New(drv, b.eng, svcCfg)
	require.NoError(t, err)
	t.Cleanup(func() {
		b.eng.Stop()
		b.writer.Close(context.Background())
		drv.Close()
	})
	return b
}

func logging(level string, includeData bool) *service.LoggingConfiguration {
	return &service.LoggingConfiguration{Level: &level, IncludeExecutionData: &includeData, Destinations: []service.LogDestination{
		{CloudWatchLogsLogGroup: &service.CloudWatchLogsLogGroup{LogGroupArn: ptr(groupArn)}},
	}}
}

func ptr[T any](v T) *T { return &v }

func (b *testBundle) create(t *testing.T, name, typ, def string, l *service.LoggingConfiguration) string {
	t.Helper()
	out, err := b.svc.CreateStateMachine(b.ctx, &service.CreateStateMachineInput{Name: name, Type: typ, Definition: def, RoleArn: roleArn, LoggingConfiguration: l})
	require.NoError(t, err)
	return out.StateMachineArn
}

// run starts an execution and waits for its end.
func (b *testBundle) run(t *testing.T, smArn, name, input string) string {
	t.Helper()
	out, err := b.svc.StartExecution(b.ctx, &service.StartExecutionInput{StateMachineArn: smArn, Name: &name, Input: &input})
	require.NoError(t, err)
	testwait.Until(t, func() bool {
		d, err := b.svc.DescribeExecution(b.ctx, &service.DescribeExecutionInput{ExecutionArn: out.ExecutionArn})
		require.NoError(t, err)
		return d.Status != "RUNNING"
	}, 30*time.Second, 5*time.Millisecond)
	return out.ExecutionArn
}

// history returns an execution's events as GetExecutionHistory gives them.
func (b *testBundle) history(t *testing.T, arn string) []map[string]any {
	t.Helper()
	out, err := b.svc.GetExecutionHistory(b.ctx, &service.GetExecutionHistoryInput{ExecutionArn: arn})
	require.NoError(t, err)
	events := make([]map[string]any, len(out.Events))
	for i, raw := range out.Events {
		require.NoError(t, json.Unmarshal(raw, &events[i]))
	}
	return events
}

// flush closes the writer, which writes what it has.
func (b *testBundle) flush(t *testing.T) {
	t.Helper()
	require.NoError(t, b.writer.Close(context.Background()))
}

// records reads every record written, by execution, in the order written.
func (b *testBundle) records(t *testing.T) map[string][]map[string]any {
	t.Helper()
	out := map[string][]map[string]any{}
	files, err := filepath.Glob(filepath.Join(b.dir, "*", "*.jsonl"))
	require.NoError(t, err)
	for _, name := range files {
		f, err := os.Open(name)
		require.NoError(t, err)
		lines := bufio.NewScanner(f)
		lines.Buffer(nil, 1<<20)
		for lines.Scan() {
			var r map[string]any
			require.NoError(t, json.Unmarshal(lines.Bytes(), &r), lines.Text())
			arn := r["execution_arn"].(string)
			out[arn] = append(out[arn], r)
		}
		require.NoError(t, lines.Err())
		f.Close()
	}
	return out
}

// details returns the details member of a history event ({} when none).
func details(ev map[string]any) map[string]any {
	for k, v := range ev {
		if strings.HasSuffix(k, "EventDetails") {
			return v.(map[string]any)
		}
	}
	return map[string]any{}
}

// requireRecordOf checks a record against the history event it logs.
func requireRecordOf(t *testing.T, rec, ev map[string]any, arn string, includeData bool) {
	t.Helper()
	require.Equal(t, []string{"details", "event_timestamp", "execution_arn", "id", "previous_event_id", "redrive_count", "type"},
		slices.Sorted(func(yield func(string) bool) {
			for k := range rec {
				if !yield(k) {
					return
				}
			}
		}))
	require.Equal(t, strconv.FormatFloat(ev["id"].(float64), 'f', -1, 64), rec["id"])
	require.Equal(t, ev["type"], rec["type"])
	require.Equal(t, strconv.FormatFloat(ev["previousEventId"].(float64), 'f', -1, 64), rec["previous_event_id"])
	ms := int64(ev["timestamp"].(float64)*1000 + 0.5)
	require.Equal(t, strconv.FormatInt(ms, 10), rec["event_timestamp"])
	require.Equal(t, arn, rec["execution_arn"])
	require.Equal(t, "0", rec["redrive_count"])
	want := details(ev)
	if !includeData {
		for _, k := range []string{"input", "inputDetails", "output", "outputDetails", "parameters", "assignedVariables", "assignedVariablesDetails"} {
			delete(want, k)
		}
	}
	require.Equal(t, want, rec["details"], "details of %v", ev["type"])
}

const mapFails = `{"StartAt": "P", "States": {
	"P": {"Type": "Pass", "Next": "M"},
	"M": {"Type": "Map", "ItemsPath": "$.items", "ItemProcessor": {"ProcessorConfig": {"Mode": "INLINE"},
		"StartAt": "F", "States": {"F": {"Type": "Fail", "Error": "Boom", "Cause": "it broke"}}}, "End": true}}}`

const passes = `{"StartAt": "A", "States": {
	"A": {"Type": "Pass", "Result": {"x": 1}, "ResultPath": "$.a", "Next": "W"},
	"W": {"Type": "Wait", "Seconds": 1, "Next": "C"},
	"C": {"Type": "Choice", "Choices": [{"Variable": "$.a.x", "NumericEquals": 1, "Next": "S"}]},
	"S": {"Type": "Succeed"}}}`

// At ALL every history event has its record, with the same ids, type,
// times and details; without execution data the details lose the input
// and output.
func TestAllLogsEveryEvent(t *testing.T) {
	t.Parallel()
	t.Run("Primed", func(t *testing.T) { t.Parallel(); testAllLogsEveryEvent(t, setupWith(t, true)) })
	t.Run("ReadWhenNeeded", func(t *testing.T) { t.Parallel(); testAllLogsEveryEvent(t, setupWith(t, false)) })
}

func testAllLogsEveryEvent(t *testing.T, b *testBundle) {
	withData := map[string]bool{}
	for _, includeData := range []bool{true, false} {
		name := "all-" + strconv.FormatBool(includeData)
		ok := b.run(t, b.create(t, name, "", passes, logging("ALL", includeData)), "ok", `{"in": "<data>"}`)
		failed := b.run(t, b.create(t, name+"-fails", "", mapFails, logging("ALL", includeData)), "failed", `{"items": [1]}`)
		withData[ok], withData[failed] = includeData, includeData
		b.minutes.Add(1) // another stream
	}
	// An execution's last step is in the store before the engine hands
	// it to the writer: wait for every event to reach the writer.
	events := 0
	for arn := range withData {
		events += len(b.history(t, arn))
	}
	testwait.Until(t, func() bool {
		st := b.writer.Stats()
		return st.Written+uint64(st.Queued)+st.Dropped >= uint64(events)
	}, 30*time.Second, 5*time.Millisecond)
	b.flush(t)
	recs := b.records(t)
	for arn, includeData := range withData {
		hist := b.history(t, arn)
		require.Len(t, recs[arn], len(hist))
		for i := range hist {
			requireRecordOf(t, recs[arn][i], hist[i], arn, includeData)
		}
	}
	stats := b.writer.Stats()
	require.Zero(t, stats.Dropped)
	total := 0
	for _, r := range recs {
		total += len(r)
	}
	require.Equal(t, uint64(total), stats.Written)
}

// A FAILED execution at ERROR writes exactly its failure records (AWS's
// table), at FATAL only ExecutionFailed; OFF and no configuration write
// nothing.
func TestLevelsFilterEvents(t *testing.T) {
	t.Parallel()
	t.Run("Primed", func(t *testing.T) { t.Parallel(); testLevelsFilterEvents(t, setupWith(t, true)) })
	t.Run("ReadWhenNeeded", func(t *testing.T) { t.Parallel(); testLevelsFilterEvents(t, setupWith(t, false)) })
}

func testLevelsFilterEvents(t *testing.T, b *testBundle) {
	errArn := b.run(t, b.create(t, "error", "", mapFails, logging("ERROR", true)), "x", `{"items": [1]}`)
	fatalArn := b.run(t, b.create(t, "fatal", "", mapFails, logging("FATAL", false)), "x", `{"items": [1]}`)
	offArn := b.run(t, b.create(t, "off", "", mapFails, logging("OFF", true)), "x", `{"items": [1]}`)
	noneArn := b.run(t, b.create(t, "none", "", mapFails, nil), "x", `{"items": [1]}`)
	okArn := b.run(t, b.create(t, "ok", "", passes, logging("ERROR", true)), "x", `{}`)
	b.flush(t)
	recs := b.records(t)

	var want []map[string]any
	for _, ev := range b.history(t, errArn) {
		if slices.Contains(awsErrorEvents, ev["type"].(string)) {
			want = append(want, ev)
		}
	}
	require.Equal(t, []any{"FailStateEntered", "MapIterationFailed", "MapStateFailed", "ExecutionFailed"}, typesOf(recs[errArn]))
	require.Len(t, recs[errArn], len(want))
	for i := range want {
		requireRecordOf(t, recs[errArn][i], want[i], errArn, true)
	}

	hist := b.history(t, fatalArn)
	require.Len(t, recs[fatalArn], 1)
	require.Contains(t, awsFatalEvents, recs[fatalArn][0]["type"])
	requireRecordOf(t, recs[fatalArn][0], hist[len(hist)-1], fatalArn, false)
	require.Equal(t, map[string]any{"error": "Boom", "cause": "it broke"}, recs[fatalArn][0]["details"])

	require.Empty(t, recs[offArn])
	require.Empty(t, recs[noneArn])
	require.Empty(t, recs[okArn], "a successful execution has no error to log")
	entries, err := os.ReadDir(b.dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "one folder for the one log group")
	require.Equal(t, "aws_vendedlogs_states_test", entries[0].Name())
}

func typesOf(recs []map[string]any) []any {
	out := make([]any, len(recs))
	for i, r := range recs {
		out[i] = r["type"]
	}
	return out
}

// The configuration an execution starts with is the one it logs with: an
// update (a new revision) applies to the executions after it.
func TestUpdateAppliesToNewExecutions(t *testing.T) {
	t.Parallel()
	b := setup(t)
	sm := b.create(t, "sm", "", mapFails, logging("ALL", true))
	first := b.run(t, sm, "first", `{"items": [1]}`)
	_, err := b.svc.UpdateStateMachine(b.ctx, &service.UpdateStateMachineInput{StateMachineArn: sm, LoggingConfiguration: logging("FATAL", true)})
	require.NoError(t, err)
	second := b.run(t, sm, "second", `{"items": [1]}`)
	_, err = b.svc.UpdateStateMachine(b.ctx, &service.UpdateStateMachineInput{StateMachineArn: sm, LoggingConfiguration: logging("OFF", true)})
	require.NoError(t, err)
	third := b.run(t, sm, "third", `{"items": [1]}`)
	b.flush(t)
	recs := b.records(t)
	require.Len(t, recs[first], len(b.history(t, first)))
	require.Equal(t, []any{"ExecutionFailed"}, typesOf(recs[second]))
	require.Empty(t, recs[third])
}

// Synchronous EXPRESS executions are logged too, in a stream named as
// AWS names it.
func TestExpressAndStreamNames(t *testing.T) {
	t.Parallel()
	b := setup(t)
	sm := b.create(t, "fast", "EXPRESS", passes, logging("ALL", false))
	out, err := b.svc.StartSyncExecution(b.ctx, &service.StartSyncExecutionInput{StateMachineArn: sm, Input: ptr(`{}`)})
	require.NoError(t, err)
	require.Equal(t, "SUCCEEDED", out.Status)
	b.flush(t)
	recs := b.records(t)[out.ExecutionArn]
	require.Equal(t, []any{"ExecutionStarted", "PassStateEntered", "PassStateExited", "WaitStateEntered", "WaitStateExited",
		"ChoiceStateEntered", "ChoiceStateExited", "SucceedStateEntered", "SucceedStateExited", "ExecutionSucceeded"}, typesOf(recs))
	require.Equal(t, map[string]any{"roleArn": roleArn}, recs[0]["details"])
	require.Equal(t, map[string]any{}, recs[len(recs)-1]["details"])
	files, err := filepath.Glob(filepath.Join(b.dir, "aws_vendedlogs_states_test", "*"))
	require.NoError(t, err)
	require.Equal(t, []string{filepath.Join(b.dir, "aws_vendedlogs_states_test", "states_fast_2026-05-04-03-02_"+streamID+".jsonl")}, files)
}
