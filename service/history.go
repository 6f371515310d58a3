package service

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"

	"stepwise/jsonvalue"
	"stepwise/store"
)

// GetExecutionHistory pages through an execution's history events, oldest
// first or, with reverseOrder, newest first. With includeExecutionData
// false the events' input and output are left out.
func (s *Service) GetExecutionHistory(ctx context.Context, in *GetExecutionHistoryInput) (*GetExecutionHistoryOutput, error) {
	v := newValidator()
	if v.required("executionArn", in.ExecutionArn) {
		v.length("executionArn", in.ExecutionArn, 1, maxArnLength)
	}
	v.intRange("maxResults", in.MaxResults, 0, maxPageSize)
	if in.NextToken != nil {
		v.tokenLength("nextToken", *in.NextToken, maxTokenLength)
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	ref, err := s.parseExecutionArn(in.ExecutionArn)
	if err != nil {
		return nil, err
	}
	if _, err := s.getExecution(ctx, ref); err != nil {
		return nil, err
	}
	scope := ref.arn + "|" + strconv.FormatBool(in.ReverseOrder)
	c, err := decodeToken(in.NextToken, cursorHistory, scope)
	if err != nil {
		return nil, err
	}
	limit := pageSize(in.MaxResults)
	p := &store.EventListParams{ExecutionArn: ref.arn, Reverse: in.ReverseOrder, Limit: limit + 1}
	if c != nil {
		p.AfterID = c.ID
	}
	events, err := s.db().EventList(ctx, p)
	if err != nil {
		return nil, storeError("list history", err)
	}
	withData := in.IncludeExecutionData == nil || *in.IncludeExecutionData
	out := &GetExecutionHistoryOutput{Events: make([]json.RawMessage, 0, min(len(events), limit))}
	for i, ev := range events {
		if i == limit {
			out.NextToken = encodeToken(cursor{Kind: cursorHistory, Scope: scope, ID: events[i-1].ID})
			break
		}
		body := ev.Body
		if !withData {
			body = stripExecutionData(body)
		}
		out.Events = append(out.Events, json.RawMessage(body))
	}
	return out, nil
}

// stripExecutionData removes the payloads (input and output) from the
// details of an event.
func stripExecutionData(body []byte) []byte {
	v, err := jsonvalue.Parse(body)
	if err != nil {
		return body
	}
	ev, ok := v.(*jsonvalue.Object)
	if !ok {
		return body
	}
	changed := false
	for k, d := range ev.All() {
		det, ok := d.(*jsonvalue.Object)
		if !ok || !strings.HasSuffix(k, "EventDetails") {
			continue
		}
		if det.Has("input") || det.Has("output") {
			det = det.Clone()
			det.Delete("input")
			det.Delete("output")
			ev.Set(k, det)
			changed = true
		}
	}
	if !changed {
		return body
	}
	return jsonvalue.Marshal(ev)
}

// GetExecutionHistoryInput is the request of GetExecutionHistory.
type GetExecutionHistoryInput struct {
	ExecutionArn         string  `json:"executionArn"`
	MaxResults           *int    `json:"maxResults,omitempty"`
	ReverseOrder         bool    `json:"reverseOrder,omitempty"`
	NextToken            *string `json:"nextToken,omitempty"`
	IncludeExecutionData *bool   `json:"includeExecutionData,omitempty"`
}

// GetExecutionHistoryOutput is the response of GetExecutionHistory. Each
// event is the JSON the store keeps for it.
type GetExecutionHistoryOutput struct {
	Events    []json.RawMessage `json:"events"`
	NextToken string            `json:"nextToken,omitempty"`
}
