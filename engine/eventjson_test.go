package engine

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/interp"
	"stepwise/jsonvalue"
	"stepwise/stepwisetype"
)

// TestAppendEventMatchesEncodingJSON checks the hand-written encoder against
// encoding/json on every event of a history that has them all.
func TestAppendEventMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	b := setup(t, 0)
	_, m := b.machine(t, "all", `{"StartAt": "P", "States": {
		"P": {"Type": "Pass", "Assign": {"b": 2, "a": "x\"y"}, "Next": "Par"},
		"Par": {"Type": "Parallel", "Next": "M", "Branches": [{"StartAt": "W", "States": {"W": {"Type": "Wait", "Seconds": 0, "End": true}}}]},
		"M": {"Type": "Map", "Next": "F", "ItemProcessor": {"StartAt": "I", "States": {"I": {"Type": "Succeed"}}}},
		"F": {"Type": "Fail", "Error": "E", "Cause": "<é>\n"}}}`)
	in, err := jsonvalue.ParseString(`[1, "two"]`)
	require.NoError(t, err)
	x := interp.New(m, interp.Info{ExecutionArn: "arn:x", RoleArn: "role", StartTime: time.UnixMilli(1700000000123)}, in, interp.Options{})
	events, _, err := x.Start(time.UnixMilli(1700000000123))
	require.NoError(t, err)
	require.Greater(t, len(events), 10)
	for _, e := range events {
		want, err := json.Marshal(e)
		require.NoError(t, err)
		require.Equal(t, string(want), string(appendEvent(nil, e)), "event %d %s", e.ID, e.Type)
	}
}

// TestAppendEventActivities checks the hand-written activity events against
// encoding/json, with and without their optional members.
func TestAppendEventActivities(t *testing.T) {
	t.Parallel()
	at := time.UnixMilli(1700000000123)
	ten := int64(10)
	events := []*stepwisetype.HistoryEvent{
		{Timestamp: at, Type: stepwisetype.EventActivityScheduled, ID: 3, PreviousEventID: 2, ActivityScheduledEventDetails: &stepwisetype.ActivityScheduledEventDetails{
			Resource: "arn:aws:states:us-east-1:123456789012:activity:work", Input: `{"a":"é\\u0001"}`}},
		{Timestamp: at, Type: stepwisetype.EventActivityScheduled, ID: 3, PreviousEventID: 2, ActivityScheduledEventDetails: &stepwisetype.ActivityScheduledEventDetails{
			Resource: "arn:x", Input: `{}`, InputDetails: stepwisetype.DataDetails{Truncated: true}, TimeoutInSeconds: &ten, HeartbeatInSeconds: &ten}},
		{Timestamp: at, Type: stepwisetype.EventActivityStarted, ID: 4, PreviousEventID: 3, ActivityStartedEventDetails: &stepwisetype.ActivityStartedEventDetails{}},
		{Timestamp: at, Type: stepwisetype.EventActivityStarted, ID: 4, PreviousEventID: 3, ActivityStartedEventDetails: &stepwisetype.ActivityStartedEventDetails{WorkerName: "w\"1"}},
		{Timestamp: at, Type: stepwisetype.EventActivitySucceeded, ID: 5, PreviousEventID: 4, ActivitySucceededEventDetails: &stepwisetype.OutputEventDetails{Output: `[1,"\n"]`}},
	}
	for _, e := range events {
		want, err := json.Marshal(e)
		require.NoError(t, err)
		require.Equal(t, string(want), string(appendEvent(nil, e)))
	}
}

func TestEncodeEventDecodes(t *testing.T) {
	out, err := jsonvalue.ParseString(`{"a":"<b>&\u2028","n":[1,2.50,null],"s":"\"q\"\\"}`)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range []interp.Event{
		{Kind: interp.TaskSucceeded, ID: "t1", Output: out},
		{Kind: interp.TaskSucceeded, ID: "t2", Output: ""},
		{Kind: interp.TaskSubmitted, ID: "t3", Output: nil},
		{Kind: interp.TaskFailed, ID: "t4", Error: "E<rr>\n", Cause: "c\u00e9\"\t"},
		{Kind: interp.TimerFired, ID: "w"},
		{Kind: interp.Stop, Error: "Abort"},
		{Kind: interp.Redrive},
		{Kind: interp.TaskStarted, ID: "t5", WorkerName: "worker \"7\""},
	} {
		b := encodeEvent(&ev, nil)
		j := eventJSON{Kind: ev.Kind, ID: ev.ID, Error: ev.Error, Cause: ev.Cause, Worker: ev.WorkerName}
		if ev.Kind == interp.TaskSucceeded || ev.Kind == interp.TaskSubmitted {
			s := jsonvalue.String(ev.Output)
			j.Output = &s
		}
		var got, want eventJSON
		std, _ := json.Marshal(j)
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if err := json.Unmarshal(std, &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("encodeEvent = %s, want the same as %s", b, std)
		}
		back, err := decodeEvent(b)
		if err != nil {
			t.Fatal(err)
		}
		if back.Kind != ev.Kind || back.ID != ev.ID || back.Error != ev.Error || back.Cause != ev.Cause || back.WorkerName != ev.WorkerName ||
			jsonvalue.String(back.Output) != jsonvalue.String(ev.Output) {
			t.Errorf("decodeEvent(encodeEvent(%+v)) = %+v", ev, back)
		}
	}
}

// TestEncodeEventMarks checks that the evaluations a step cut short come
// back from the replay log as they went in, for a start's entry too.
func TestEncodeEventMarks(t *testing.T) {
	t.Parallel()
	marks := []interp.Mark{{Eval: 2, Steps: 5120}, {Eval: 0, Steps: 1024, Stop: true, Error: "E\"", Cause: "c\n"}}
	for _, ev := range []interp.Event{{Kind: interp.TimerFired, ID: "w"}, {}} {
		back, got, err := decodeEntry(encodeEvent(&ev, marks))
		require.NoError(t, err)
		require.Equal(t, ev.Kind, back.Kind)
		require.Equal(t, ev.ID, back.ID)
		require.Equal(t, marks, got)
	}
	_, got, err := decodeEntry(encodeEvent(&interp.Event{Kind: interp.Redrive}, nil))
	require.NoError(t, err)
	require.Empty(t, got)
}
