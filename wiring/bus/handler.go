package bus

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// TargetPrefix is the X-Amz-Target prefix of EventBridge's operations.
const TargetPrefix = "AWSEvents."

// IsEventsRequest says whether a request is one of EventBridge's
// operations (X-Amz-Target: AWSEvents.*).
func IsEventsRequest(r *http.Request) bool {
	return strings.HasPrefix(r.Header.Get("X-Amz-Target"), TargetPrefix)
}

// apiError is an error of the EventBridge API.
type apiError struct {
	status  int
	code    string
	message string
}

func (e *apiError) Error() string { return e.code + ": " + e.message }

func validation(format string, args ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, code: "ValidationException", message: fmt.Sprintf(format, args...)}
}

// ServeHTTP answers EventBridge's PutEvents (AWS JSON 1.1); other
// operations are refused, saying what is served.
func (b *Bus) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	out, err := b.serve(r)
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	if err != nil {
		e, ok := err.(*apiError)
		if !ok {
			e = &apiError{status: http.StatusInternalServerError, code: "InternalException", message: err.Error()}
		}
		w.WriteHeader(e.status)
		_ = json.NewEncoder(w).Encode(map[string]string{"__type": e.code, "message": e.message})
		return
	}
	_ = json.NewEncoder(w).Encode(out)
}

// MaxRequestSize is the largest PutEvents body read.
const MaxRequestSize = 1 << 20

func (b *Bus) serve(r *http.Request) (any, error) {
	if r.Method != http.MethodPost {
		return nil, &apiError{status: http.StatusMethodNotAllowed, code: "UnknownOperationException", message: "EventBridge's API takes POST"}
	}
	op := strings.TrimPrefix(r.Header.Get("X-Amz-Target"), TargetPrefix)
	if op != "PutEvents" {
		return nil, &apiError{status: http.StatusBadRequest, code: "UnknownOperationException",
			message: fmt.Sprintf("Operation %s is not served here: this server's EventBridge serves PutEvents only, onto its local bus of the deployed rules (make rules with a template's AWS::Events::Rule or a SAM EventBridgeRule event)", op)}
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxRequestSize+1))
	if err != nil {
		return nil, validation("Could not read the request body: %v", err)
	}
	if len(body) > MaxRequestSize {
		return nil, &apiError{status: http.StatusRequestEntityTooLarge, code: "ValidationException", message: "Total size of the entries in the request is over the limit."}
	}
	if r.Header.Get(ForwardedHeader) != "" {
		return b.put(r.Context(), body, false)
	}
	return b.PutEvents(r.Context(), body)
}

// ForwardedHeader marks a PutEvents request a Stepwise server sends on
// to the EventBridge of its endpoint for "events" (the bus forwarding
// what it takes, the events:putEvents Task): a bus takes such events onto
// its own rules but sends them on to no other, so that two servers each
// the other's endpoint, or a server its own, do not send events round.
const ForwardedHeader = "X-Stepwise-Forwarded"

// putEventsInput is PutEvents' input.
type putEventsInput struct {
	Entries []struct {
		Entry
		Time        *float64 `json:"Time"`
		TraceHeader string   `json:"TraceHeader"`
	} `json:"Entries"`
	EndpointID string `json:"EndpointId"`
}

// ResultEntry is one entry of PutEvents' output.
type ResultEntry struct {
	EventID      string `json:"EventId,omitempty"`
	ErrorCode    string `json:"ErrorCode,omitempty"`
	ErrorMessage string `json:"ErrorMessage,omitempty"`
}

// PutEventsOutput is PutEvents' output.
type PutEventsOutput struct {
	Entries          []ResultEntry `json:"Entries"`
	FailedEntryCount int           `json:"FailedEntryCount"`
}

// PutEvents runs a PutEvents request (its JSON body): the entries are
// checked as EventBridge does, the good ones go on to the AWS endpoint's
// EventBridge when one is given for "events" (their ids are then its),
// and onto the local bus.
func (b *Bus) PutEvents(ctx context.Context, body []byte) (*PutEventsOutput, error) {
	return b.put(ctx, body, true)
}

// put is PutEvents, sending the events on to the AWS endpoint when
// forward says so.
func (b *Bus) put(ctx context.Context, body []byte, forward bool) (*PutEventsOutput, error) {
	var in putEventsInput
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&in); err != nil {
		return nil, &apiError{status: http.StatusBadRequest, code: "SerializationException", message: "The request body is not PutEvents' input: " + err.Error()}
	}
	if len(in.Entries) == 0 {
		if in.Entries == nil {
			return nil, validation("1 validation error detected: Value null at 'entries' failed to satisfy constraint: Member must not be null")
		}
		return nil, validation("1 validation error detected: Value '[]' at 'entries' failed to satisfy constraint: Member must have length greater than or equal to 1")
	}
	if len(in.Entries) > MaxEntries {
		return nil, validation("1 validation error detected: Value at 'entries' failed to satisfy constraint: Member must have length less than or equal to %d", MaxEntries)
	}
	entries := make([]Entry, len(in.Entries))
	size := 0
	for i, e := range in.Entries {
		entries[i] = e.Entry
		if e.Time != nil && !math.IsNaN(*e.Time) && !math.IsInf(*e.Time, 0) {
			sec, frac := math.Modf(*e.Time)
			entries[i].Time = time.Unix(int64(sec), int64(frac*1e9))
		}
		size += entrySize(entries[i])
	}
	if size > MaxEventSize {
		return nil, validation("Total size of the entries in the request is over the limit.")
	}
	var good []Entry
	for _, e := range entries {
		if code, _ := entryError(e); code == "" {
			good = append(good, e)
		}
	}
	var ids []string
	if forward {
		ids = b.forward(ctx, good)
	}
	return b.Take(entries, ids), nil
}

// Take puts entries on the local bus, each checked as PutEvents checks
// it, and answers as PutEvents does. ids, when given, are the ids of the
// good entries in their order ("" or none: the bus makes one).
func (b *Bus) Take(entries []Entry, ids []string) *PutEventsOutput {
	out := &PutEventsOutput{Entries: make([]ResultEntry, len(entries))}
	var good []Entry
	var goodIDs []string
	for i, e := range entries {
		if code, msg := entryError(e); code != "" {
			out.Entries[i] = ResultEntry{ErrorCode: code, ErrorMessage: msg}
			out.FailedEntryCount++
			continue
		}
		id := ""
		if j := len(good); j < len(ids) {
			id = ids[j]
		}
		if id == "" {
			id = newUUID()
		}
		good = append(good, e)
		goodIDs = append(goodIDs, id)
		out.Entries[i] = ResultEntry{EventID: id}
	}
	b.Put(good, goodIDs)
	return out
}

// forward sends the entries on to the AWS endpoint's EventBridge, when
// one is given; it returns the ids that endpoint gave them ("" where
// none). A failure there is logged: the local bus takes them still.
func (b *Bus) forward(ctx context.Context, entries []Entry) []string {
	ids := make([]string, len(entries))
	if len(entries) == 0 || b.env.AWS == nil {
		return ids
	}
	cfg, err := b.env.AWS(ctx, "events")
	if err != nil {
		return ids
	}
	if cfg.BaseEndpoint != nil && b.isSelf(*cfg.BaseEndpoint) {
		return ids
	}
	in := &eventbridge.PutEventsInput{}
	for _, e := range entries {
		pe := ebtypes.PutEventsRequestEntry{Source: aws.String(e.Source), DetailType: aws.String(e.DetailType),
			Detail: aws.String(e.Detail), Resources: e.Resources}
		if e.EventBusName != "" {
			pe.EventBusName = aws.String(e.EventBusName)
		}
		if !e.Time.IsZero() {
			pe.Time = aws.Time(e.Time)
		}
		in.Entries = append(in.Entries, pe)
	}
	res, err := eventbridge.NewFromConfig(cfg).PutEvents(ctx, in, func(o *eventbridge.Options) {
		o.APIOptions = append(o.APIOptions, smithyhttp.AddHeaderValue(ForwardedHeader, "events"))
	})
	if err != nil {
		b.log().Warn("events not sent on to the AWS endpoint", "error", err)
		return ids
	}
	for i, r := range res.Entries {
		if i < len(ids) && r.EventId != nil {
			ids[i] = *r.EventId
		}
	}
	return ids
}
