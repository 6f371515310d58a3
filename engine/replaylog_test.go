package engine

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/interp"
	"stepwise/jsonvalue"
)

// entryJSON is a replay log entry as the format is documented, for
// encoding/json to read it.
type entryJSON struct {
	Kind   interp.EventKind `json:"kind"`
	ID     string           `json:"id,omitempty"`
	Output *string          `json:"output,omitempty"`
	Error  string           `json:"error,omitempty"`
	Cause  string           `json:"cause,omitempty"`
	Worker string           `json:"worker,omitempty"`
}

// TestReplayLogEntryRoundTrips checks the hand-written entries against
// encoding/json and reads them back.
func TestReplayLogEntryRoundTrips(t *testing.T) {
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
		b := encodeEntry(&entry{Event: ev})
		j := entryJSON{Kind: ev.Kind, ID: ev.ID, Error: ev.Error, Cause: ev.Cause, Worker: ev.WorkerName}
		if ev.Kind == interp.TaskSucceeded || ev.Kind == interp.TaskSubmitted {
			s := jsonvalue.String(ev.Output)
			j.Output = &s
		}
		var got, want entryJSON
		std, _ := json.Marshal(j)
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if err := json.Unmarshal(std, &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("encodeEntry = %s, want the same as %s", b, std)
		}
		back, err := decodeEvent(b)
		if err != nil {
			t.Fatal(err)
		}
		if back.Kind != ev.Kind || back.ID != ev.ID || back.Error != ev.Error || back.Cause != ev.Cause || back.WorkerName != ev.WorkerName ||
			jsonvalue.String(back.Output) != jsonvalue.String(ev.Output) {
			t.Errorf("decodeEvent(encodeEntry(%+v)) = %+v", ev, back)
		}
	}
}

// TestReplayLogEntryMarks checks that the evaluations a step cut short come
// back from the replay log as they went in, for a start's entry too.
func TestReplayLogEntryMarks(t *testing.T) {
	t.Parallel()
	marks := []interp.Mark{{Eval: 2, Steps: 5120}, {Eval: 0, Steps: 1024, Stop: true, Error: "E\"", Cause: "c\n"}}
	for _, ev := range []interp.Event{{Kind: interp.TimerFired, ID: "w"}, {}} {
		back, err := decodeEntry(encodeEntry(&entry{Event: ev, Marks: marks}))
		require.NoError(t, err)
		require.Equal(t, ev.Kind, back.Event.Kind)
		require.Equal(t, ev.ID, back.Event.ID)
		require.Equal(t, marks, back.Marks)
	}
	back, err := decodeEntry(encodeEntry(&entry{Event: interp.Event{Kind: interp.Redrive}}))
	require.NoError(t, err)
	require.Empty(t, back.Marks)
	require.Empty(t, back.Missing)
}

// TestReplayLogEntryMissingActivities checks that the activities a step
// found missing come back from the replay log.
func TestReplayLogEntryMissingActivities(t *testing.T) {
	t.Parallel()
	missing := []string{"arn:aws:states:us-east-1:123456789012:activity:gone", "arn:x\"y"}
	back, err := decodeEntry(encodeEntry(&entry{Missing: missing}))
	require.NoError(t, err)
	require.Equal(t, missing, back.Missing)
	_, err = decodeEntry([]byte(`{"kind":0,"missing":[1]}`))
	require.ErrorContains(t, err, `member "missing" is number`)
}

func TestReplayLogEntryErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, msg string }{
		{`{"kind":`, "unexpected end of JSON input"},
		{`[]`, "array, not an object"},
		{`{"kind":"3"}`, `member "kind" is string`},
		{`{"kind":3,"output":"{"}`, "unexpected end of JSON input"},
		{`{"kind":0,"marks":[{"eval":1.5,"steps":1}]}`, `member "eval" is number`},
		{`{"kind":0,"marks":{}}`, `member "marks" is object`},
	} {
		_, err := decodeEntry([]byte(tt.in))
		require.ErrorContains(t, err, tt.msg, tt.in)
	}
}
