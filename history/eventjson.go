package history

import (
	"encoding/json"
	"slices"
	"strconv"
	"unicode/utf8"
)

// AppendJSON appends the JSON of the event, as GetExecutionHistory returns
// it, to dst. It is what every committed step stores for each of its
// events, so the events most steps write (state entered and exited,
// execution started and succeeded, activity scheduled, started and
// succeeded) are written by hand; the rest go through encoding/json. The
// output is json.Marshal(e)'s.
func (e *Event) AppendJSON(dst []byte) []byte {
	start := len(dst)
	dst = append(dst, `{"timestamp":`...)
	ms := e.Timestamp.UnixMilli()
	dst = strconv.AppendFloat(dst, float64(ms)/1000, 'f', -1, 64)
	dst = append(dst, `,"type":`...)
	dst = appendString(dst, string(e.Type))
	dst = append(dst, `,"id":`...)
	dst = strconv.AppendInt(dst, e.ID, 10)
	dst = append(dst, `,"previousEventId":`...)
	dst = strconv.AppendInt(dst, e.PreviousEventID, 10)
	switch {
	case e.StateEnteredEventDetails != nil:
		d := e.StateEnteredEventDetails
		dst = append(dst, `,"stateEnteredEventDetails":{"name":`...)
		dst = appendString(dst, d.Name)
		dst = append(dst, `,"input":`...)
		dst = appendString(dst, d.Input)
		dst = appendDataDetails(dst, `,"inputDetails":`, d.InputDetails)
		return append(dst, "}}"...)
	case e.StateExitedEventDetails != nil:
		d := e.StateExitedEventDetails
		dst = append(dst, `,"stateExitedEventDetails":{"name":`...)
		dst = appendString(dst, d.Name)
		dst = append(dst, `,"output":`...)
		dst = appendString(dst, d.Output)
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
				dst = appendString(dst, k)
				dst = append(dst, ':')
				dst = appendString(dst, d.AssignedVariables[k])
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
		dst = appendString(dst, d.Input)
		dst = appendDataDetails(dst, `,"inputDetails":`, d.InputDetails)
		if d.RoleArn != "" {
			dst = append(dst, `,"roleArn":`...)
			dst = appendString(dst, d.RoleArn)
		}
		return append(dst, "}}"...)
	case e.ExecutionSucceededEventDetails != nil:
		d := e.ExecutionSucceededEventDetails
		dst = append(dst, `,"executionSucceededEventDetails":{"output":`...)
		dst = appendString(dst, d.Output)
		dst = appendDataDetails(dst, `,"outputDetails":`, d.OutputDetails)
		return append(dst, "}}"...)
	case e.ActivityScheduledEventDetails != nil:
		d := e.ActivityScheduledEventDetails
		dst = append(dst, `,"activityScheduledEventDetails":{"resource":`...)
		dst = appendString(dst, d.Resource)
		dst = append(dst, `,"input":`...)
		dst = appendString(dst, d.Input)
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
			dst = appendString(dst, w)
		}
		return append(dst, "}}"...)
	case e.ActivitySucceededEventDetails != nil:
		d := e.ActivitySucceededEventDetails
		dst = append(dst, `,"activitySucceededEventDetails":{"output":`...)
		dst = appendString(dst, d.Output)
		dst = appendDataDetails(dst, `,"outputDetails":`, d.OutputDetails)
		return append(dst, "}}"...)
	}
	// Rarer events go through encoding/json.
	b, _ := json.Marshal(e)
	return append(dst[:start], b...)
}

// JSONSizeHint is about the length of the event's JSON (AppendJSON): its
// frame and the texts of the details most events carry. A caller writing
// many events sizes its buffer by their sum once, instead of growing it
// again and again.
func (e *Event) JSONSizeHint() int {
	const frame = 160 // timestamp, type, ids, details' names and data details
	t := 0            // the texts, written as JSON strings: a quarter more for escapes
	switch {
	case e.StateEnteredEventDetails != nil:
		t = len(e.StateEnteredEventDetails.Name) + len(e.StateEnteredEventDetails.Input)
	case e.StateExitedEventDetails != nil:
		t = len(e.StateExitedEventDetails.Name) + len(e.StateExitedEventDetails.Output)
	case e.ExecutionStartedEventDetails != nil:
		t = len(e.ExecutionStartedEventDetails.Input) + len(e.ExecutionStartedEventDetails.RoleArn)
	case e.ExecutionSucceededEventDetails != nil:
		t = len(e.ExecutionSucceededEventDetails.Output)
	case e.ActivityScheduledEventDetails != nil:
		t = len(e.ActivityScheduledEventDetails.Resource) + len(e.ActivityScheduledEventDetails.Input)
	case e.ActivitySucceededEventDetails != nil:
		t = len(e.ActivitySucceededEventDetails.Output)
	case e.TaskScheduledEventDetails != nil:
		t = len(e.TaskScheduledEventDetails.Parameters)
	}
	return frame + t + t/4
}

func appendDataDetails(dst []byte, key string, d DataDetails) []byte {
	dst = append(dst, key...)
	if d.Truncated {
		return append(dst, `{"truncated":true}`...)
	}
	return append(dst, `{"truncated":false}`...)
}

// plainByte holds the ASCII bytes appendString copies as they are: one
// look-up a byte rather than six comparisons.
var plainByte = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// appendString appends s as a JSON string the way encoding/json writes
// it: HTML characters and the line and paragraph separators escaped, and
// invalid UTF-8 as U+FFFD.
func appendString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if plainByte[c] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
