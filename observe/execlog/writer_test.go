package execlog_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/engine"
	"stepwise/history"
	"stepwise/observe/execlog"
	"stepwise/store"
)

// stateMachines is a func-field fake of execlog.StateMachines.
type stateMachines struct {
	get func(ctx context.Context, arn string) (*store.StateMachine, error)
}

func (s *stateMachines) StateMachineGet(ctx context.Context, arn string) (*store.StateMachine, error) {
	return s.get(ctx, arn)
}

// sink is a func-field fake of execlog.Sink that records what it took.
type sink struct {
	put func(ctx context.Context, d execlog.Destination, events []execlog.Event) (int, error)

	mu     sync.Mutex
	took   []execlog.Event
	closed bool
}

func (s *sink) Put(ctx context.Context, d execlog.Destination, events []execlog.Event) (int, error) {
	rejected, err := 0, error(nil)
	if s.put != nil {
		rejected, err = s.put(ctx, d, events)
	}
	if err == nil {
		s.mu.Lock()
		s.took = append(s.took, events...)
		s.mu.Unlock()
	}
	return rejected, err
}

func (s *sink) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	return nil
}

const smArn = "arn:aws:states:us-east-1:123456789012:stateMachine:sm"

func loggingText(level string, includeData bool) string {
	b, _ := json.Marshal(logging(level, includeData))
	return string(b)
}

func fakeStateMachines(text string) *stateMachines {
	return &stateMachines{get: func(ctx context.Context, arn string) (*store.StateMachine, error) {
		return &store.StateMachine{Arn: arn, Name: "sm", RevisionID: "r1", LoggingConfiguration: text}, nil
	}}
}

// failedStep is a committed step of an execution that fails at once.
func failedStep(name, input string) *engine.CommittedStep {
	at := time.Date(2026, 1, 2, 3, 4, 5, 6_000_000, time.UTC)
	errName, cause := "Boom", "it <broke>"
	return &engine.CommittedStep{
		Execution: &store.Execution{Arn: "arn:aws:states:us-east-1:123456789012:execution:sm:" + name, StateMachineArn: smArn,
			RevisionID: "r1", Status: history.StatusFailed, RedriveCount: 2},
		Events: []*history.Event{
			{Timestamp: at, Type: history.EventExecutionStarted, ID: 1,
				ExecutionStartedEventDetails: &history.ExecutionStartedEventDetails{Input: input, RoleArn: roleArn}},
			{Timestamp: at, Type: "FailStateEntered", ID: 2, PreviousEventID: 0,
				StateEnteredEventDetails: &history.StateEnteredEventDetails{Name: "F", Input: input}},
			{Timestamp: at.Add(time.Millisecond), Type: history.EventExecutionFailed, ID: 3, PreviousEventID: 2,
				ExecutionFailedEventDetails: &history.FailureEventDetails{Error: &errName, Cause: &cause}},
		},
	}
}

func decode(t *testing.T, events []execlog.Event) []map[string]any {
	t.Helper()
	out := make([]map[string]any, len(events))
	for i, e := range events {
		require.NoError(t, json.Unmarshal(e.Message, &out[i]), string(e.Message))
	}
	return out
}

// The records of a step, byte for byte: AWS's member order, numbers as
// strings, the time in milliseconds, the redrive count.
func TestRecordShape(t *testing.T) {
	t.Parallel()
	s := &sink{}
	w, err := execlog.New(execlog.Config{StateMachines: fakeStateMachines(loggingText("ALL", true)), Sink: s})
	require.NoError(t, err)
	w.StepCommitted(failedStep("x", `{"a": "<b>"}`))
	require.NoError(t, w.Close(context.Background()))
	require.True(t, s.closed)
	arn := "arn:aws:states:us-east-1:123456789012:execution:sm:x"
	require.Len(t, s.took, 3)
	require.Equal(t, `{"id":"1","type":"ExecutionStarted","details":{"input":"{\"a\": \"\u003cb\u003e\"}","inputDetails":{"truncated":false},"roleArn":"`+roleArn+
		`"},"previous_event_id":"0","event_timestamp":"1767323045006","execution_arn":"`+arn+`","redrive_count":"2"}`, string(s.took[0].Message))
	require.Equal(t, `{"id":"3","type":"ExecutionFailed","details":{"error":"Boom","cause":"it \u003cbroke\u003e"},"previous_event_id":"2",`+
		`"event_timestamp":"1767323045007","execution_arn":"`+arn+`","redrive_count":"2"}`, string(s.took[2].Message))
	require.Equal(t, time.UnixMilli(1767323045007), s.took[2].Time)
	require.Equal(t, execlog.Stats{Written: 3}, w.Stats())
}

// Without execution data the details keep what is not data; an input or
// output past 248 KiB is cut and marked truncated.
func TestExecutionData(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name        string
		includeData bool
		input       string
		check       func(t *testing.T, recs []map[string]any)
	}{
		{"Excluded", false, `{"secret": 1}`, func(t *testing.T, recs []map[string]any) {
			require.Equal(t, map[string]any{"roleArn": roleArn}, recs[0]["details"])
			require.Equal(t, map[string]any{"name": "F"}, recs[1]["details"])
			require.Equal(t, map[string]any{"error": "Boom", "cause": "it <broke>"}, recs[2]["details"])
		}},
		{"Truncated", true, `"` + strings.Repeat("é", 200*1024) + `"`, func(t *testing.T, recs []map[string]any) {
			d := recs[0]["details"].(map[string]any)
			in := d["input"].(string)
			require.LessOrEqual(t, len(in), execlog.MaxDataBytes)
			require.Greater(t, len(in), execlog.MaxDataBytes-4, "cut at the limit, within a character and an escape")
			require.True(t, strings.HasPrefix(`"`+strings.Repeat("é", 200*1024), in))
			require.Equal(t, map[string]any{"truncated": true}, d["inputDetails"])
			require.Equal(t, roleArn, d["roleArn"])
		}},
		{"Small", true, `{"a": 1}`, func(t *testing.T, recs []map[string]any) {
			require.Equal(t, map[string]any{"input": `{"a": 1}`, "inputDetails": map[string]any{"truncated": false}, "name": "F"}, recs[1]["details"])
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := &sink{}
			w, err := execlog.New(execlog.Config{StateMachines: fakeStateMachines(loggingText("ALL", tt.includeData)), Sink: s})
			require.NoError(t, err)
			w.StepCommitted(failedStep("x", tt.input))
			require.NoError(t, w.Close(context.Background()))
			recs := decode(t, s.took)
			require.Len(t, recs, 3)
			tt.check(t, recs)
		})
	}
}

// A full queue drops a step's records and counts them; the step is not
// held up.
func TestQueueFullDrops(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	s := &sink{put: func(ctx context.Context, d execlog.Destination, events []execlog.Event) (int, error) {
		<-release
		return 0, nil
	}}
	var droppedSeen int
	var mu sync.Mutex
	w, err := execlog.New(execlog.Config{
		StateMachines: fakeStateMachines(loggingText("ALL", true)), Sink: s,
		QueueEvents: 6, FlushInterval: time.Millisecond,
		OnDropped: func(n int) { mu.Lock(); droppedSeen += n; mu.Unlock() },
	})
	require.NoError(t, err)
	w.Prime(&store.StateMachine{Arn: smArn, Name: "sm", RevisionID: "r1", LoggingConfiguration: loggingText("ALL", true)})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 50 {
			w.StepCommitted(failedStep("x"+string(rune('a'+i%26)), `{}`))
		}
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("StepCommitted blocked on a stuck sink")
	}
	close(release)
	require.NoError(t, w.Close(context.Background()))
	st := w.Stats()
	require.NotZero(t, st.Dropped)
	require.Equal(t, uint64(150), st.Written+st.Dropped)
	require.Equal(t, int(st.Dropped), droppedSeen)
	require.Zero(t, st.Queued)
}

// A write that fails is tried again; one that fails every attempt is
// dropped and counted.
func TestRetriesThenDrops(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name     string
		failures int
		written  uint64
		dropped  uint64
	}{
		{"OneFailure", 1, 3, 0},
		{"AlwaysFails", 100, 0, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			calls := 0
			s := &sink{put: func(ctx context.Context, d execlog.Destination, events []execlog.Event) (int, error) {
				calls++
				if calls <= tt.failures {
					return 0, errors.New("unavailable")
				}
				return 0, nil
			}}
			w, err := execlog.New(execlog.Config{StateMachines: fakeStateMachines(loggingText("ALL", true)), Sink: s, RetryBackoff: time.Millisecond})
			require.NoError(t, err)
			w.StepCommitted(failedStep("x", `{}`))
			require.NoError(t, w.Close(context.Background()))
			require.Equal(t, execlog.Stats{Written: tt.written, Dropped: tt.dropped}, w.Stats())
			require.Equal(t, min(tt.failures+1, execlog.DefaultAttempts), calls)
		})
	}
}

// Events a destination refuses one by one count as dropped.
func TestRejectedEventsCount(t *testing.T) {
	t.Parallel()
	s := &sink{put: func(ctx context.Context, d execlog.Destination, events []execlog.Event) (int, error) { return 1, nil }}
	w, err := execlog.New(execlog.Config{StateMachines: fakeStateMachines(loggingText("ALL", true)), Sink: s})
	require.NoError(t, err)
	w.StepCommitted(failedStep("x", `{}`))
	require.NoError(t, w.Close(context.Background()))
	require.Equal(t, execlog.Stats{Written: 2, Dropped: 1}, w.Stats())
}

// A state machine whose configuration cannot be read drops the records
// of the steps that needed it, and is read again for the next.
func TestUnreadableConfiguration(t *testing.T) {
	t.Parallel()
	fail := true
	sms := &stateMachines{get: func(ctx context.Context, arn string) (*store.StateMachine, error) {
		if fail {
			fail = false
			return nil, errors.New("disk on fire")
		}
		return &store.StateMachine{Arn: arn, Name: "sm", RevisionID: "r1", LoggingConfiguration: loggingText("FATAL", true)}, nil
	}}
	s := &sink{}
	w, err := execlog.New(execlog.Config{StateMachines: sms, Sink: s})
	require.NoError(t, err)
	w.StepCommitted(failedStep("x", `{}`))
	w.StepCommitted(failedStep("y", `{}`))
	require.NoError(t, w.Close(context.Background()))
	require.Equal(t, execlog.Stats{Written: 1, Dropped: 3}, w.Stats())
	require.Contains(t, string(s.took[0].Message), `"type":"ExecutionFailed"`)
}

func TestSettings(t *testing.T) {
	t.Parallel()
	st, err := execlog.ParseSettings(loggingText("ERROR", true), "sm")
	require.NoError(t, err)
	require.Equal(t, &execlog.Settings{Level: execlog.LevelError, IncludeExecutionData: true, LogGroupArn: groupArn,
		LogGroup: "/aws/vendedlogs/states/test", Region: "us-east-1", StateMachineName: "sm"}, st)
	for _, text := range []string{"", `{"level":"OFF","includeExecutionData":false}`, loggingText("OFF", true)} {
		st, err := execlog.ParseSettings(text, "sm")
		require.NoError(t, err)
		require.Nil(t, st, text)
	}
	_, err = execlog.ParseSettings(`{"level":"ALL","destinations":[{"cloudWatchLogsLogGroup":{"logGroupArn":"nope"}}]}`, "sm")
	require.Error(t, err)

	for arn, want := range map[string][2]string{
		"arn:aws:logs:eu-west-1:123456789012:log-group:g:*":       {"g", "eu-west-1"},
		"arn:aws-cn:logs:cn-north-1:123456789012:log-group:/a/b":  {"/a/b", "cn-north-1"},
		"arn:aws:logs:us-east-1:123456789012:log-group:a:b:*":     {"", ""},
		"arn:aws:sqs:us-east-1:123456789012:log-group:g:*":        {"", ""},
		"arn:aws:logs:us-east-1:123456789012:destination:g:*":     {"", ""},
		"arn:aws:logs:us-east-1:123456789012:log-group::*":        {"", ""},
		"arn:aws:logs:us-east-1:123456789012:log-group:g.x-y_z#1": {"g.x-y_z#1", "us-east-1"},
	} {
		name, region, ok := execlog.ParseLogGroupArn(arn)
		require.Equal(t, want[0] != "", ok, arn)
		require.Equal(t, want, [2]string{name, region}, arn)
	}

	require.True(t, execlog.LevelFatal.Logs(history.EventExecutionTimedOut))
	require.False(t, execlog.LevelFatal.Logs("FailStateEntered"))
	require.True(t, execlog.LevelError.Logs("TaskSubmitFailed"))
	require.False(t, execlog.LevelError.Logs(history.EventTaskSucceeded))
	require.False(t, execlog.LevelOff.Logs(history.EventExecutionFailed))
	for _, typ := range awsErrorEvents {
		require.True(t, execlog.LevelError.Logs(history.EventType(typ)), typ)
		require.Equal(t, contains(awsFatalEvents, typ), execlog.LevelFatal.Logs(history.EventType(typ)), typ)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestFileName(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"/aws/vendedlogs/states/x":            "aws_vendedlogs_states_x",
		"states/sm/2026-01-02-03-04/0a1b2c3d": "states_sm_2026-01-02-03-04_0a1b2c3d",
		"g#1.x":                               "g_1.x",
		"..":                                  "_..",
		"名前":                                  "名前",
		"/":                                   "_",
	} {
		require.Equal(t, want, execlog.FileName(in), in)
	}
}
