package history

import (
	"encoding/json"
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
