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
	"encoding/binary"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/google/uuid"

	"stepwise/awsarn"
	"stepwise/engine"
	"stepwise/history"
	"stepwise/jsonvalue"
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

// A notice is the compact record of a status change the outbox holds,
// written on the step that changed the status, so it costs the step
// little: no escaping, no names, only what the event does not repeat.
// Delivery renders the event from it (Render). Its layout:
//
//	noticeFormat, the event id (16 bytes of UUID), a flags byte,
//	varints: the time of the change, the start, the stop and redrive
//	dates when their flags say so, the redrive count;
//	strings (a uvarint length and the bytes): the execution and state
//	machine ARNs, the name, the status, the input, and the output,
//	error and cause when their flags say so.
const noticeFormat = 0xf1 // not '{': older outboxes held rendered events

const (
	hasStop = 1 << iota
	hasRedriveDate
	hasOutput
	hasError
	hasCause
)

// Notice records an execution's status change, as the execution's row was
// left by the step that changed it, with a new event id: the body the
// engine writes to the outbox (engine.Config.StatusNotice).
func Notice(row *store.Execution, at time.Time) []byte {
	b := make([]byte, 0, 64+len(row.Arn)+len(row.StateMachineArn)+len(row.Name)+len(row.Input)+lenOf(row.Output)+lenOf(row.Error)+lenOf(row.Cause))
	id := uuid.New()
	b = append(b, noticeFormat)
	b = append(b, id[:]...)
	flags := flag(row.StopDate != nil, hasStop) | flag(row.RedriveDate != nil, hasRedriveDate) |
		flag(row.Output != nil, hasOutput) | flag(row.Error != nil, hasError) | flag(row.Cause != nil, hasCause)
	b = append(b, flags)
	b = binary.AppendVarint(b, at.UnixMilli())
	b = binary.AppendVarint(b, row.StartDate.UnixMilli())
	if row.StopDate != nil {
		b = binary.AppendVarint(b, row.StopDate.UnixMilli())
	}
	if row.RedriveDate != nil {
		b = binary.AppendVarint(b, row.RedriveDate.UnixMilli())
	}
	b = binary.AppendUvarint(b, uint64(row.RedriveCount))
	for _, s := range []string{row.Arn, row.StateMachineArn, row.Name, string(row.Status), row.Input} {
		b = appendBytes(b, s)
	}
	for _, s := range []*string{row.Output, row.Error, row.Cause} {
		if s != nil {
			b = appendBytes(b, *s)
		}
	}
	return b
}

func flag(set bool, bit byte) byte {
	if set {
		return bit
	}
	return 0
}

func appendBytes(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// errNotNotice is Render's answer to bytes that are not a notice.
var errNotNotice = errors.New("not a status-change notice")

// noticeReader reads a notice's fields, remembering the first fault.
type noticeReader struct {
	b    []byte
	err  error
	text string // a copy of b when strings began, and the offset in it of b
	off  int
}

func (r *noticeReader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.err = errNotNotice
		return 0
	}
	r.b = r.b[n:]
	return v
}

// str reads a string: a substring of text, the notice's bytes from where
// strings start, copied once for them all.
func (r *noticeReader) str() string {
	l, n := binary.Uvarint(r.b)
	if n <= 0 || l > uint64(len(r.b)-n) {
		r.err = errNotNotice
		return ""
	}
	if r.text == "" {
		r.text, r.off = string(r.b), 0
	}
	start := r.off + n
	s := r.text[start : start+int(l)]
	r.b, r.off = r.b[n+int(l):], start+int(l)
	return s
}

func (r *noticeReader) date() *time.Time {
	t := time.UnixMilli(r.varint()).UTC()
	return &t
}

// Render renders the event a notice records, in EventBridge's shape as
// AWS sends it. An event an older outbox holds is returned as it is.
func Render(body []byte) ([]byte, error) {
	if bytes.HasPrefix(body, []byte(`{"version":"0","id":"`)) && json.Valid(body) {
		return body, nil
	}
	if len(body) < 18 || body[0] != noticeFormat {
		return nil, errNotNotice
	}
	id, _ := uuid.FromBytes(body[1:17])
	flags := body[17]
	r := &noticeReader{b: body[18:]}
	at := time.UnixMilli(r.varint()).UTC()
	row := &store.Execution{StartDate: time.UnixMilli(r.varint()).UTC()}
	if flags&hasStop != 0 {
		row.StopDate = r.date()
	}
	if flags&hasRedriveDate != 0 {
		row.RedriveDate = r.date()
	}
	count, n := binary.Uvarint(r.b)
	if n <= 0 || count > 1<<20 {
		return nil, errNotNotice
	}
	r.b = r.b[n:]
	row.RedriveCount = int(count)
	row.Arn, row.StateMachineArn, row.Name = r.str(), r.str(), r.str()
	row.Status = history.ExecutionStatus(r.str())
	row.Input = r.str()
	for _, f := range []struct {
		bit byte
		to  **string
	}{{hasOutput, &row.Output}, {hasError, &row.Error}, {hasCause, &row.Cause}} {
		if flags&f.bit != 0 {
			s := r.str()
			*f.to = &s
		}
	}
	if r.err != nil || len(r.b) != 0 || row.Arn == "" {
		return nil, errNotNotice
	}
	return renderEvent(row, id.String(), at), nil
}

// renderEvent renders an execution's status-change event.
func renderEvent(row *store.Execution, id string, at time.Time) []byte {
	region, account := arnRegionAccount(row.Arn)
	b := make([]byte, 0, 900+len(row.Name)+3*len(row.Arn)+len(row.StateMachineArn)+
		(3*(len(row.Input)+lenOf(row.Output)+lenOf(row.Error)+lenOf(row.Cause)))/2)
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
		// Escaping makes a byte 6 at most: small data cannot pass the
		// limit, and its output is appended in place below.
		if 6*(len(row.Input)+len(*row.Output))+4 > payloadLimit {
			out = jsonvalue.AppendString(nil, *row.Output)
			outLen = len(out)
		}
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
		if out != nil {
			b = append(b, out...)
		} else {
			b = jsonvalue.AppendString(b, *row.Output)
		}
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
	var why *engine.NotRedrivableError
	if errors.As(engine.Redrivable(row, at), &why) {
		reason := why.Reason()
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
	a, err := awsarn.Parse(arn)
	if err != nil {
		return "", ""
	}
	return a.Prefix.Region, a.Prefix.Account
}
