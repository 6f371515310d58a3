// Package notify delivers the execution status-change notices the engine
// writes to the store's outbox (engine.Config.StatusNotice) to the
// outside: HTTP webhooks, an Amazon EventBridge event bus, and a JSON-lines
// file, each event in EventBridge's shape ("Step Functions Execution
// Status Change" from "aws.states").
//
// Delivery is at least once: each destination keeps a cursor in the store
// (the last notice it took) and moves it only after the destination
// accepted the notice, so a crash in between delivers it again, with the
// same event id. A destination that fails is retried with back-off and
// holds back only itself; executions never wait on delivery. Notices
// every destination has taken are deleted.
package notify

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"stepwise/jsonvalue"
	"stepwise/service"
	"stepwise/stepwisetype"
	"stepwise/store"
)

// DetailType and Source are those of AWS's execution status-change events.
const (
	DetailType = "Step Functions Execution Status Change"
	Source     = "aws.states"
)

// payloadLimit is the most escaped input and output an event carries
// together, as AWS's EventBridge events: past it the input is left out,
// and the output too when it alone is past it.
const payloadLimit = 248 * 1024

// Event is a status-change event in EventBridge's shape.
type Event struct {
	Version    string   `json:"version"`
	ID         string   `json:"id"`
	DetailType string   `json:"detail-type"`
	Source     string   `json:"source"`
	Account    string   `json:"account"`
	Time       string   `json:"time"`
	Region     string   `json:"region"`
	Resources  []string `json:"resources"`
	Detail     Detail   `json:"detail"`
}

// Detail is the event's detail, as AWS documents it.
type Detail struct {
	ExecutionArn        string       `json:"executionArn"`
	StateMachineArn     string       `json:"stateMachineArn"`
	Name                string       `json:"name"`
	Status              string       `json:"status"`
	StartDate           int64        `json:"startDate"`
	StopDate            *int64       `json:"stopDate"`
	Input               *string      `json:"input"`
	InputDetails        *DataDetails `json:"inputDetails"`
	Output              *string      `json:"output"`
	OutputDetails       *DataDetails `json:"outputDetails"`
	Error               *string      `json:"error"`
	Cause               *string      `json:"cause"`
	RedriveCount        int          `json:"redriveCount"`
	RedriveDate         *int64       `json:"redriveDate"`
	RedriveStatus       string       `json:"redriveStatus"`
	RedriveStatusReason *string      `json:"redriveStatusReason,omitempty"`
}

// DataDetails says whether the input or output is included.
type DataDetails struct {
	Included bool `json:"included"`
}

func init() {
	// Event ids are random UUIDs made on every status change: draw their
	// randomness from a buffer filled a few at a time (still crypto/rand)
	// rather than a system call each.
	uuid.EnableRandPool()
}

// notice is the compact record of a status change the outbox holds: what
// the event says, under short names, without what the event repeats.
// Delivery renders the event from it (Render), so a step writes about a
// third of the event's bytes.
type notice struct {
	ID              string  `json:"i"`
	At              int64   `json:"t"`
	Arn             string  `json:"x"`
	StateMachineArn string  `json:"m"`
	Name            string  `json:"n"`
	Status          string  `json:"s"`
	Start           int64   `json:"b"`
	Stop            *int64  `json:"e,omitempty"`
	Input           string  `json:"in"`
	Output          *string `json:"o,omitempty"`
	Error           *string `json:"er,omitempty"`
	Cause           *string `json:"c,omitempty"`
	RedriveCount    int     `json:"r,omitempty"`
	RedriveDate     *int64  `json:"rd,omitempty"`
}

// Notice records an execution's status change, as the execution's row was
// left by the step that changed it, with a new event id: the body the
// engine writes to the outbox (engine.Config.StatusNotice). It appends by
// hand, for it runs on every such step.
func Notice(row *store.Execution, at time.Time) []byte {
	b := make([]byte, 0, 256+len(row.Input)+lenOf(row.Output)+lenOf(row.Error)+lenOf(row.Cause))
	b = append(b, `{"i":`...)
	b = jsonvalue.AppendString(b, uuid.NewString())
	b = append(b, `,"t":`...)
	b = strconv.AppendInt(b, at.UnixMilli(), 10)
	b = append(b, `,"x":`...)
	b = jsonvalue.AppendString(b, row.Arn)
	b = append(b, `,"m":`...)
	b = jsonvalue.AppendString(b, row.StateMachineArn)
	b = append(b, `,"n":`...)
	b = jsonvalue.AppendString(b, row.Name)
	b = append(b, `,"s":`...)
	b = jsonvalue.AppendString(b, string(row.Status))
	b = append(b, `,"b":`...)
	b = strconv.AppendInt(b, row.StartDate.UnixMilli(), 10)
	if row.StopDate != nil {
		b = append(b, `,"e":`...)
		b = strconv.AppendInt(b, row.StopDate.UnixMilli(), 10)
	}
	b = append(b, `,"in":`...)
	b = jsonvalue.AppendString(b, row.Input)
	for _, f := range []struct {
		key string
		v   *string
	}{{`,"o":`, row.Output}, {`,"er":`, row.Error}, {`,"c":`, row.Cause}} {
		if f.v != nil {
			b = append(b, f.key...)
			b = jsonvalue.AppendString(b, *f.v)
		}
	}
	if row.RedriveCount != 0 {
		b = append(b, `,"r":`...)
		b = strconv.AppendInt(b, int64(row.RedriveCount), 10)
	}
	if row.RedriveDate != nil {
		b = append(b, `,"rd":`...)
		b = strconv.AppendInt(b, row.RedriveDate.UnixMilli(), 10)
	}
	return append(b, '}')
}

// Render renders the event a notice records, in EventBridge's shape as
// AWS sends it.
func Render(body []byte) ([]byte, error) {
	var n notice
	if err := json.Unmarshal(body, &n); err != nil {
		return nil, err
	}
	if n.ID == "" || n.Arn == "" {
		return nil, errors.New("not a status-change notice")
	}
	row := &store.Execution{Arn: n.Arn, StateMachineArn: n.StateMachineArn, Name: n.Name,
		Status: stepwisetype.ExecutionStatus(n.Status), StartDate: time.UnixMilli(n.Start).UTC(), StopDate: fromMillis(n.Stop),
		Input: n.Input, Output: n.Output, Error: n.Error, Cause: n.Cause, RedriveCount: n.RedriveCount, RedriveDate: fromMillis(n.RedriveDate)}
	return renderEvent(row, n.ID, time.UnixMilli(n.At).UTC()), nil
}

func fromMillis(ms *int64) *time.Time {
	if ms == nil {
		return nil
	}
	t := time.UnixMilli(*ms).UTC()
	return &t
}

// renderEvent renders an execution's status-change event.
func renderEvent(row *store.Execution, id string, at time.Time) []byte {
	region, account := arnRegionAccount(row.Arn)
	b := make([]byte, 0, 640+len(row.Input)+lenOf(row.Output)+lenOf(row.Cause))
	b = append(b, `{"version":"0","id":`...)
	b = jsonvalue.AppendString(b, id)
	b = append(b, `,"detail-type":"`+DetailType+`","source":"`+Source+`","account":`...)
	b = jsonvalue.AppendString(b, account)
	b = append(b, `,"time":`...)
	b = jsonvalue.AppendString(b, at.UTC().Format("2006-01-02T15:04:05Z"))
	b = append(b, `,"region":`...)
	b = jsonvalue.AppendString(b, region)
	b = append(b, `,"resources":[`...)
	b = jsonvalue.AppendString(b, row.Arn)
	b = append(b, `],"detail":{"executionArn":`...)
	b = jsonvalue.AppendString(b, row.Arn)
	b = append(b, `,"stateMachineArn":`...)
	b = jsonvalue.AppendString(b, row.StateMachineArn)
	b = append(b, `,"name":`...)
	b = jsonvalue.AppendString(b, row.Name)
	b = append(b, `,"status":`...)
	b = jsonvalue.AppendString(b, string(row.Status))
	b = append(b, `,"startDate":`...)
	b = strconv.AppendInt(b, row.StartDate.UnixMilli(), 10)
	b = append(b, `,"stopDate":`...)
	b = appendMillis(b, row.StopDate)

	// The input and output, unless together they pass the limit (then
	// the input is left out) or the output alone does (then both are).
	mark := len(b)
	b = append(b, `,"input":`...)
	inStart := len(b)
	b = jsonvalue.AppendString(b, row.Input)
	inLen := len(b) - inStart
	outLen := 0
	var out []byte
	if row.Output != nil {
		out = jsonvalue.AppendString(nil, *row.Output)
		outLen = len(out)
	}
	inputIncluded := inLen+outLen <= payloadLimit
	if !inputIncluded {
		b = append(b[:mark], `,"input":null,"inputDetails":{"included":false}`...)
	} else {
		b = append(b, `,"inputDetails":{"included":true}`...)
	}
	switch {
	case row.Output == nil:
		b = append(b, `,"output":null,"outputDetails":null`...)
	case outLen > payloadLimit:
		b = append(b, `,"output":null,"outputDetails":{"included":false}`...)
	default:
		b = append(b, `,"output":`...)
		b = append(b, out...)
		b = append(b, `,"outputDetails":{"included":true}`...)
	}
	b = append(b, `,"error":`...)
	b = appendNullable(b, row.Error)
	b = append(b, `,"cause":`...)
	b = appendNullable(b, row.Cause)
	b = append(b, `,"redriveCount":`...)
	b = strconv.AppendInt(b, int64(row.RedriveCount), 10)
	b = append(b, `,"redriveDate":`...)
	b = appendMillis(b, row.RedriveDate)
	if reason := service.NotRedrivableReason(row, false, at); reason != "" {
		b = append(b, `,"redriveStatus":"NOT_REDRIVABLE","redriveStatusReason":`...)
		b = jsonvalue.AppendString(b, reason)
	} else {
		b = append(b, `,"redriveStatus":"REDRIVABLE"`...)
	}
	return append(b, "}}"...)
}

// Parse reads an event a notice holds.
func Parse(body []byte) (*Event, error) {
	var ev Event
	if err := json.Unmarshal(body, &ev); err != nil {
		return nil, err
	}
	return &ev, nil
}

// eventID reads the id of an event: renderEvent writes it first after
// the version.
func eventID(body []byte) string {
	const head = `{"version":"0","id":"`
	if rest, ok := bytes.CutPrefix(body, []byte(head)); ok {
		if end := bytes.IndexByte(rest, '"'); end >= 0 {
			return string(rest[:end])
		}
	}
	if ev, err := Parse(body); err == nil {
		return ev.ID
	}
	return ""
}

func lenOf(s *string) int {
	if s == nil {
		return 0
	}
	return len(*s)
}

func appendMillis(b []byte, t *time.Time) []byte {
	if t == nil {
		return append(b, "null"...)
	}
	return strconv.AppendInt(b, t.UnixMilli(), 10)
}

func appendNullable(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return jsonvalue.AppendString(b, *s)
}

// arnRegionAccount reads the region and account of an ARN.
func arnRegionAccount(arn string) (region, account string) {
	parts := strings.SplitN(arn, ":", 6)
	if len(parts) < 5 {
		return "", ""
	}
	return parts[3], parts[4]
}
