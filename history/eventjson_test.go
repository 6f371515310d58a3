package history

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestAppendJSONActivities checks the hand-written activity events against
// encoding/json, with and without their optional members.
func TestAppendJSONActivities(t *testing.T) {
	t.Parallel()
	at := time.UnixMilli(1700000000123)
	ten := int64(10)
	events := []*Event{
		{Timestamp: at, Type: EventActivityScheduled, ID: 3, PreviousEventID: 2, ActivityScheduledEventDetails: &ActivityScheduledEventDetails{
			Resource: "arn:aws:states:us-east-1:123456789012:activity:work", Input: `{"a":"é\\u0001"}`}},
		{Timestamp: at, Type: EventActivityScheduled, ID: 3, PreviousEventID: 2, ActivityScheduledEventDetails: &ActivityScheduledEventDetails{
			Resource: "arn:x", Input: `{}`, InputDetails: DataDetails{Truncated: true}, TimeoutInSeconds: &ten, HeartbeatInSeconds: &ten}},
		{Timestamp: at, Type: EventActivityStarted, ID: 4, PreviousEventID: 3, ActivityStartedEventDetails: &ActivityStartedEventDetails{}},
		{Timestamp: at, Type: EventActivityStarted, ID: 4, PreviousEventID: 3, ActivityStartedEventDetails: &ActivityStartedEventDetails{WorkerName: "w\"1"}},
		{Timestamp: at, Type: EventActivitySucceeded, ID: 5, PreviousEventID: 4, ActivitySucceededEventDetails: &OutputEventDetails{Output: `[1,"\n"]`}},
	}
	for _, e := range events {
		want, err := json.Marshal(e)
		require.NoError(t, err)
		require.Equal(t, string(want), string(e.AppendJSON(nil)))
	}
}

// TestAppendJSONEscapesAsEncodingJSON checks the hand-written strings
// against encoding/json on what it escapes specially.
func TestAppendJSONEscapesAsEncodingJSON(t *testing.T) {
	t.Parallel()
	at := time.UnixMilli(1700000000123)
	for _, s := range []string{"plain", "<a href=\"x\">&amp;</a>", "tab\tnl\ncr\rbs\\", "\x00\x1f\x7f", "é😀", "\u2028\u2029", "bad\xffutf8\xc3", ""} {
		e := &Event{Timestamp: at, Type: StateEnteredType("Pass"), ID: 2, PreviousEventID: 1,
			StateEnteredEventDetails: &StateEnteredEventDetails{Name: s, Input: s}}
		want, err := json.Marshal(e)
		require.NoError(t, err)
		require.Equal(t, string(want), string(e.AppendJSON(nil)), "%q", s)
	}
}

// The size hint covers the JSON of the events most steps write, so that
// a step's buffer is sized once.
func TestJSONSizeHint(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	input := `{"a":"` + strings.Repeat("x", 500) + `","b":[1,2,3]}`
	for _, e := range []*Event{
		{Timestamp: at, Type: StateEnteredType("Pass"), ID: 2, PreviousEventID: 1, StateEnteredEventDetails: &StateEnteredEventDetails{Name: "P", Input: input}},
		{Timestamp: at, Type: StateExitedType("Pass"), ID: 3, PreviousEventID: 2, StateExitedEventDetails: &StateExitedEventDetails{Name: "P", Output: input}},
		{Timestamp: at, Type: EventExecutionStarted, ID: 1, ExecutionStartedEventDetails: &ExecutionStartedEventDetails{Input: input, RoleArn: "arn:aws:iam::123456789012:role/r"}},
		{Timestamp: at, Type: EventExecutionSucceeded, ID: 4, PreviousEventID: 3, ExecutionSucceededEventDetails: &OutputEventDetails{Output: input}},
	} {
		if got, hint := len(e.AppendJSON(nil)), e.JSONSizeHint(); got > hint {
			t.Errorf("%s: JSON of %d bytes, hint %d", e.Type, got, hint)
		}
	}
}
