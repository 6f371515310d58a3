package execlog

import (
	"bytes"
	"strconv"
	"unicode/utf8"

	"stepwise/history"
	"stepwise/jsonvalue"
)

// MaxDataBytes is the most bytes of JSON text an input or output keeps in
// a record: AWS cuts longer ones at 248 KiB, for CloudWatch Logs' quotas,
// and says so in inputDetails or outputDetails.
const MaxDataBytes = 248 * 1024

// captured is a history event as a step told of it, copied: its header
// and the JSON of its details.
type captured struct {
	id, previous, millis int64
	typ                  history.EventType
	// details is the JSON object of the event's details; nil when it has
	// none.
	details []byte
}

// capture copies ev's JSON onto buf and returns buf and the event. The
// details are the value of the one member after previousEventId in the
// event's JSON (history.Event.AppendJSON writes timestamp,
// type, id and previousEventId first).
func capture(buf []byte, ev *history.Event) ([]byte, captured) {
	c := captured{id: ev.ID, previous: ev.PreviousEventID, millis: ev.Timestamp.UnixMilli(), typ: ev.Type}
	start := len(buf)
	buf = ev.AppendJSON(buf)
	c.details = detailsOf(buf[start:len(buf):len(buf)])
	return buf, c
}

var previousKey = []byte(`,"previousEventId":`)

// detailsOf returns the details object in the JSON of an event; nil when
// there is none.
func detailsOf(ev []byte) []byte {
	i := bytes.Index(ev, previousKey)
	if i < 0 {
		return nil
	}
	i += len(previousKey)
	for i < len(ev) && (ev[i] == '-' || ev[i] >= '0' && ev[i] <= '9') {
		i++
	}
	if i >= len(ev) || ev[i] != ',' {
		return nil
	}
	// ,"<name>EventDetails":{...}}
	end := bytes.IndexByte(ev[i+2:], '"')
	if end < 0 {
		return nil
	}
	v := i + 2 + end + 2 // past the name's closing quote and the colon
	if v >= len(ev)-1 || ev[v] != '{' {
		return nil
	}
	return ev[v : len(ev)-1]
}

// dataMembers are the members of events' details that hold the
// execution's data, left out unless includeExecutionData is true.
var dataMembers = []string{
	"input", "inputDetails", "output", "outputDetails",
	"parameters", "assignedVariables", "assignedVariablesDetails",
}

// appendRecord appends the log record of an event of an execution to dst.
func appendRecord(dst []byte, c *captured, executionArn string, redriveCount int, includeData bool) []byte {
	dst = append(dst, `{"id":"`...)
	dst = strconv.AppendInt(dst, c.id, 10)
	dst = append(dst, `","type":`...)
	dst = jsonvalue.AppendString(dst, string(c.typ))
	dst = append(dst, `,"details":`...)
	dst = appendDetails(dst, c.details, includeData)
	dst = append(dst, `,"previous_event_id":"`...)
	dst = strconv.AppendInt(dst, c.previous, 10)
	dst = append(dst, `","event_timestamp":"`...)
	dst = strconv.AppendInt(dst, c.millis, 10)
	dst = append(dst, `","execution_arn":`...)
	dst = jsonvalue.AppendString(dst, executionArn)
	dst = append(dst, `,"redrive_count":"`...)
	dst = strconv.AppendInt(dst, int64(redriveCount), 10)
	return append(dst, `"}`...)
}

// appendDetails appends the details of a record: the event's details
// without its data unless includeData, with an input or output past
// MaxDataBytes cut.
func appendDetails(dst, details []byte, includeData bool) []byte {
	if details == nil {
		return append(dst, "{}"...)
	}
	if includeData && len(details) <= MaxDataBytes {
		return append(dst, details...)
	}
	v, err := jsonvalue.Parse(details)
	obj, ok := v.(*jsonvalue.Object)
	if err != nil || !ok {
		return append(dst, "{}"...)
	}
	if !includeData {
		for _, k := range dataMembers {
			obj.Delete(k)
		}
		return jsonvalue.Append(dst, obj)
	}
	for _, k := range []string{"input", "output"} {
		s, ok := obj.Get(k)
		text, isString := s.(string)
		if !ok || !isString {
			continue
		}
		if cut, truncated := truncate(text, MaxDataBytes); truncated {
			obj.Set(k, cut)
			more := jsonvalue.NewObject(1)
			more.Set("truncated", true)
			obj.Set(k+"Details", more)
		}
	}
	return jsonvalue.Append(dst, obj)
}

// truncate cuts s, at a character's boundary, so that its JSON text
// (quotes aside) takes at most max bytes.
func truncate(s string, max int) (string, bool) {
	cut := false
	for {
		n := len(jsonvalue.AppendString(nil, s)) - 2
		if n <= max {
			return s, cut
		}
		end := len(s) - (n - max)
		for end > 0 && !utf8.RuneStart(s[end]) {
			end--
		}
		s, cut = s[:end], true
	}
}
