package engine

import (
	"encoding/json"
	"slices"
	"strconv"

	"stepwise/jsonvalue"
	"stepwise/stepwisetype"
)

// appendEvent appends the JSON of a history event, as GetExecutionHistory
// returns it, to dst. It is what every committed step stores for each of
// its events, so the events most steps write (state entered and exited,
// execution started and succeeded, activity scheduled, started and
// succeeded) are written by hand; the rest go
// through encoding/json. The output equals json.Marshal(e).
func appendEvent(dst []byte, e *stepwisetype.HistoryEvent) []byte {
	start := len(dst)
	dst = append(dst, `{"timestamp":`...)
	ms := e.Timestamp.UnixMilli()
	dst = strconv.AppendFloat(dst, float64(ms)/1000, 'f', -1, 64)
	dst = append(dst, `,"type":`...)
	dst = jsonvalue.AppendString(dst, string(e.Type))
	dst = append(dst, `,"id":`...)
	dst = strconv.AppendInt(dst, e.ID, 10)
	dst = append(dst, `,"previousEventId":`...)
	dst = strconv.AppendInt(dst, e.PreviousEventID, 10)
	switch {
	case e.StateEnteredEventDetails != nil:
		d := e.StateEnteredEventDetails
		dst = append(dst, `,"stateEnteredEventDetails":{"name":`...)
		dst = jsonvalue.AppendString(dst, d.Name)
		dst = append(dst, `,"input":`...)
		dst = jsonvalue.AppendString(dst, d.Input)
		dst = appendDataDetails(dst, `,"inputDetails":`, d.InputDetails)
		return append(dst, "}}"...)
	case e.StateExitedEventDetails != nil:
		d := e.StateExitedEventDetails
		dst = append(dst, `,"stateExitedEventDetails":{"name":`...)
		dst = jsonvalue.AppendString(dst, d.Name)
		dst = append(dst, `,"output":`...)
		dst = jsonvalue.AppendString(dst, d.Output)
		dst = appendDataDetails(dst, `,"outputDetails":`, d.OutputDetails)
		if len(d.AssignedVariables) > 0 {
			dst = append(dst, `,"assignedVariables":{`...)
			keys := make([]string, 0, len(d.AssignedVariables))
			for k := range d.AssignedVariables {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for i, k := range keys {
				if i > 0 {
					dst = append(dst, ',')
				}
				dst = jsonvalue.AppendString(dst, k)
				dst = append(dst, ':')
				dst = jsonvalue.AppendString(dst, d.AssignedVariables[k])
			}
			dst = append(dst, '}')
		}
		if d.AssignedVariablesDetails != nil {
			dst = appendDataDetails(dst, `,"assignedVariablesDetails":`, *d.AssignedVariablesDetails)
		}
		return append(dst, "}}"...)
	case e.ExecutionStartedEventDetails != nil:
		d := e.ExecutionStartedEventDetails
		dst = append(dst, `,"executionStartedEventDetails":{"input":`...)
		dst = jsonvalue.AppendString(dst, d.Input)
		dst = appendDataDetails(dst, `,"inputDetails":`, d.InputDetails)
		if d.RoleArn != "" {
			dst = append(dst, `,"roleArn":`...)
			dst = jsonvalue.AppendString(dst, d.RoleArn)
		}
		return append(dst, "}}"...)
	case e.ExecutionSucceededEventDetails != nil:
		d := e.ExecutionSucceededEventDetails
		dst = append(dst, `,"executionSucceededEventDetails":{"output":`...)
		dst = jsonvalue.AppendString(dst, d.Output)
		dst = appendDataDetails(dst, `,"outputDetails":`, d.OutputDetails)
		return append(dst, "}}"...)
	case e.ActivityScheduledEventDetails != nil:
		d := e.ActivityScheduledEventDetails
		dst = append(dst, `,"activityScheduledEventDetails":{"resource":`...)
		dst = jsonvalue.AppendString(dst, d.Resource)
		dst = append(dst, `,"input":`...)
		dst = jsonvalue.AppendString(dst, d.Input)
		dst = appendDataDetails(dst, `,"inputDetails":`, d.InputDetails)
		if d.TimeoutInSeconds != nil {
			dst = append(dst, `,"timeoutInSeconds":`...)
			dst = strconv.AppendInt(dst, *d.TimeoutInSeconds, 10)
		}
		if d.HeartbeatInSeconds != nil {
			dst = append(dst, `,"heartbeatInSeconds":`...)
			dst = strconv.AppendInt(dst, *d.HeartbeatInSeconds, 10)
		}
		return append(dst, "}}"...)
	case e.ActivityStartedEventDetails != nil:
		dst = append(dst, `,"activityStartedEventDetails":{`...)
		if w := e.ActivityStartedEventDetails.WorkerName; w != "" {
			dst = append(dst, `"workerName":`...)
			dst = jsonvalue.AppendString(dst, w)
		}
		return append(dst, "}}"...)
	case e.ActivitySucceededEventDetails != nil:
		d := e.ActivitySucceededEventDetails
		dst = append(dst, `,"activitySucceededEventDetails":{"output":`...)
		dst = jsonvalue.AppendString(dst, d.Output)
		dst = appendDataDetails(dst, `,"outputDetails":`, d.OutputDetails)
		return append(dst, "}}"...)
	}
	// Rarer events go through encoding/json.
	b, _ := json.Marshal(e)
	return append(dst[:start], b...)
}

func appendDataDetails(dst []byte, key string, d stepwisetype.DataDetails) []byte {
	dst = append(dst, key...)
	if d.Truncated {
		return append(dst, `{"truncated":true}`...)
	}
	return append(dst, `{"truncated":false}`...)
}
