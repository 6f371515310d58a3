package engine

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/interp"
	"stepwise/jsonvalue"
)

// TestHistoryEventJSONMatchesEncodingJSON checks the hand-written encoder against
// encoding/json on every event of a history that has them all.
func TestHistoryEventJSONMatchesEncodingJSON(t *testing.T) {
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
		require.Equal(t, string(want), string(e.AppendJSON(nil)), "event %d %s", e.ID, e.Type)
	}
}
