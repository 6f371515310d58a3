// Package notify delivers the execution status-change notices the engine
// writes to the store's outbox (engine.Config.StatusEvents) to the
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
	"encoding/json"
	"strings"
	"time"

	"stepwise/engine"
	"stepwise/service"
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
	Version    string    `json:"version"`
	ID         string    `json:"id"`
	DetailType string    `json:"detail-type"`
	Source     string    `json:"source"`
	Account    string    `json:"account"`
	Time       string    `json:"time"`
	Region     string    `json:"region"`
	Resources  []string  `json:"resources"`
	Detail     Detail    `json:"detail"`
	notice     time.Time // when the notice was written
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

// Render builds the EventBridge event of a notice from the outbox.
func Render(n *store.OutboxEvent) (*Event, error) {
	var sc engine.StatusChange
	if err := json.Unmarshal(n.Body, &sc); err != nil {
		return nil, err
	}
	region, account := arnRegionAccount(sc.ExecutionArn)
	d := Detail{
		ExecutionArn: sc.ExecutionArn, StateMachineArn: sc.StateMachineArn, Name: sc.Name, Status: string(sc.Status),
		StartDate: sc.StartDate.UnixMilli(), StopDate: millis(sc.StopDate), Error: sc.Error, Cause: sc.Cause,
		RedriveCount: sc.RedriveCount, RedriveDate: millis(sc.RedriveDate),
	}
	input := sc.Input
	d.Input, d.InputDetails = &input, &DataDetails{Included: true}
	if sc.Output != nil {
		out := *sc.Output
		d.Output, d.OutputDetails = &out, &DataDetails{Included: true}
	}
	outLen := 0
	if d.Output != nil {
		outLen = escapedLen(*d.Output)
	}
	if escapedLen(input)+outLen > payloadLimit {
		d.Input, d.InputDetails.Included = nil, false
	}
	if outLen > payloadLimit {
		d.Output, d.OutputDetails.Included = nil, false
	}
	row := &store.Execution{Arn: sc.ExecutionArn, Status: sc.Status, StopDate: sc.StopDate}
	if reason := service.NotRedrivableReason(row, false, sc.Time); reason != "" {
		d.RedriveStatus, d.RedriveStatusReason = "NOT_REDRIVABLE", &reason
	} else {
		d.RedriveStatus = "REDRIVABLE"
	}
	return &Event{
		Version: "0", ID: sc.EventID, DetailType: DetailType, Source: Source, Account: account,
		Time: sc.Time.UTC().Format("2006-01-02T15:04:05Z"), Region: region, Resources: []string{sc.ExecutionArn},
		Detail: d, notice: n.CreatedAt,
	}, nil
}

func millis(t *time.Time) *int64 {
	if t == nil {
		return nil
	}
	ms := t.UnixMilli()
	return &ms
}

// escapedLen is the length of s as a JSON string.
func escapedLen(s string) int {
	b, _ := json.Marshal(s)
	return len(b)
}

// arnRegionAccount reads the region and account of an ARN.
func arnRegionAccount(arn string) (region, account string) {
	parts := strings.SplitN(arn, ":", 6)
	if len(parts) < 5 {
		return "", ""
	}
	return parts[3], parts[4]
}
