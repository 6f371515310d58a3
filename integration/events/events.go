// Package events is the optimized Amazon EventBridge integration:
// arn:aws:states:::events:putEvents, request-response and
// .waitForTaskToken, at the endpoint configured for "events". When the
// server runs a local event bus (Config.LocalEvents), the entries go on
// it too: after EventBridge took them, with its ids, or on it alone when
// no endpoint is given, with the bus's ids.
//
// The Parameters are {"Entries": [{"Detail", "DetailType", "Source",
// "EventBusName", "Resources", "Time", "TraceHeader"}, ...]}. A Detail
// that is not a string is sent as JSON text, and the ARNs of the state
// machine and the execution are appended to each entry's Resources, as
// AWS does.
//
// The result is {"Entries": [{"EventId"} or {"ErrorCode",
// "ErrorMessage"}, ...], "FailedEntryCount": n}, without HTTP metadata.
// When an entry failed, the task fails with EventBridge.FailedEntry and
// that result, as JSON text, as the cause. Service errors are named
// EventBridge.<Exception>.
package events

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"stepwise/awsarn"
	"stepwise/failure"
	"stepwise/integration"
	"stepwise/jsonvalue"
)

// Resource is the resource ARN of PutEvents.
const Resource = integration.ResourcePrefix + "events:putEvents"

// ErrorFailedEntry fails a task whose PutEvents call had failed entries.
const ErrorFailedEntry = "EventBridge.FailedEntry"

func init() {
	integration.Register(integration.Module{
		Resource: Resource,
		Patterns: []integration.Pattern{integration.WaitForTaskToken},
		New:      newPutEvents,
	})
}

// NewClient is an EventBridge client as the integrations' settings give
// it (the region, --aws-endpoint, --endpoint events=URL): the putEvents
// Task's, and the server's status-change events' bus.
func NewClient(ctx context.Context, cfg *integration.Config) (*eventbridge.Client, error) {
	awsCfg, endpoint, err := cfg.AWSConfig(ctx, "events")
	if err != nil {
		return nil, err
	}
	return eventbridge.NewFromConfig(awsCfg, func(o *eventbridge.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	}), nil
}

func newPutEvents(cfg *integration.Config) (integration.Integration, error) {
	client, err := NewClient(context.Background(), cfg)
	if err != nil {
		return nil, err
	}
	p := &putter{client: client, endpoint: cfg.EndpointFor("events"), local: cfg.LocalEvents, log: cfg.Logger}
	return integration.Func(p.putEvents), nil
}

// ForwardedHeader marks the PutEvents requests of a Task whose entries
// go on the server's local bus too: the local bus of a server that takes
// them puts them on its own bus, but sends them on to no other (see
// package wiring/bus, which names the same header).
const ForwardedHeader = "X-Stepwise-Forwarded"

// putter sends a Task's entries to EventBridge at the endpoint given for
// "events", and onto the server's local bus when there is one: after
// EventBridge took them, with its ids, or alone when no endpoint is
// given.
type putter struct {
	client   *eventbridge.Client
	endpoint string
	local    *integration.LocalEvents
	log      *slog.Logger
}

// putEvents sends the entries and answers as AWS does.
func (p *putter) putEvents(ctx context.Context, r *integration.Request) (any, error) {
	entries, err := requestEntries(r.Parameters, sourceArns(r.ExecutionArn))
	if err != nil {
		return nil, err
	}
	local := p.local.Get()
	var res *eventbridge.PutEventsOutput
	if local != nil && p.endpoint == "" {
		res, err = putLocal(ctx, local, entries)
		if err != nil {
			return nil, failure.Newf("EventBridge.InternalException", "The local event bus did not take the events: %v", err)
		}
	} else {
		var opts []func(*eventbridge.Options)
		if local != nil {
			opts = append(opts, func(o *eventbridge.Options) {
				o.APIOptions = append(o.APIOptions, smithyhttp.AddHeaderValue(ForwardedHeader, "events"))
			})
		}
		res, err = p.client.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: entries}, opts...)
		if err != nil {
			return nil, integration.ServiceFailure("EventBridge", "AmazonEventBridge", err)
		}
		if local != nil {
			p.alsoLocal(ctx, local, entries, res.Entries)
		}
	}
	out := jsonvalue.NewObject(2)
	results := make([]any, len(res.Entries))
	for i, e := range res.Entries {
		results[i] = resultEntry(e)
	}
	out.Set("Entries", results)
	out.Set("FailedEntryCount", jsonvalue.NumberFromInt(int64(res.FailedEntryCount)))
	if res.FailedEntryCount > 0 {
		return nil, failure.New(ErrorFailedEntry, jsonvalue.String(out))
	}
	return out, nil
}

// putLocal puts the entries on the local bus alone, answering as
// EventBridge does with the bus's ids.
func putLocal(ctx context.Context, local integration.PutLocalEvents, entries []types.PutEventsRequestEntry) (*eventbridge.PutEventsOutput, error) {
	results, err := local(ctx, localEvents(entries), nil)
	if err != nil {
		return nil, err
	}
	if len(results) != len(entries) {
		return nil, fmt.Errorf("%d results for %d entries", len(results), len(entries))
	}
	res := &eventbridge.PutEventsOutput{Entries: make([]types.PutEventsResultEntry, len(results))}
	for i, r := range results {
		e := &res.Entries[i]
		if r.ErrorCode != "" {
			e.ErrorCode, e.ErrorMessage = aws.String(r.ErrorCode), aws.String(r.ErrorMessage)
			res.FailedEntryCount++
			continue
		}
		e.EventId = aws.String(r.EventID)
	}
	return res, nil
}

// alsoLocal puts on the local bus the entries EventBridge took, with the
// ids it gave them. The Task's result stays EventBridge's: a failure
// here is logged.
func (p *putter) alsoLocal(ctx context.Context, local integration.PutLocalEvents, entries []types.PutEventsRequestEntry, results []types.PutEventsResultEntry) {
	var taken []types.PutEventsRequestEntry
	var ids []string
	for i, r := range results {
		if i < len(entries) && r.EventId != nil && r.ErrorCode == nil {
			taken = append(taken, entries[i])
			ids = append(ids, *r.EventId)
		}
	}
	if len(taken) == 0 {
		return
	}
	if _, err := local(ctx, localEvents(taken), ids); err != nil && p.log != nil {
		p.log.Warn("events:putEvents: the local event bus did not take the events", "error", err)
	}
}

// localEvents are entries as the local bus takes them.
func localEvents(entries []types.PutEventsRequestEntry) []integration.Event {
	out := make([]integration.Event, len(entries))
	for i, e := range entries {
		out[i] = integration.Event{Source: aws.ToString(e.Source), DetailType: aws.ToString(e.DetailType),
			Detail: aws.ToString(e.Detail), EventBusName: aws.ToString(e.EventBusName), Resources: e.Resources}
		if e.Time != nil {
			out[i].Time = *e.Time
		}
	}
	return out
}

// resultEntry is a result entry with its members in alphabetical order.
func resultEntry(e types.PutEventsResultEntry) *jsonvalue.Object {
	obj := jsonvalue.NewObject(3)
	for _, m := range []struct {
		name string
		val  *string
	}{{"ErrorCode", e.ErrorCode}, {"ErrorMessage", e.ErrorMessage}, {"EventId", e.EventId}} {
		if m.val != nil {
			obj.Set(m.name, *m.val)
		}
	}
	return obj
}

// sourceArns returns the ARNs of the state machine and of the execution
// (arn:aws:states:<region>:<account>:execution:<machine>:<name>), or nil
// when the execution ARN is not one.
func sourceArns(executionArn string) []string {
	a, err := awsarn.Parse(executionArn)
	if err != nil || len(a.Parts) < 2 {
		return nil
	}
	machine, _, _ := strings.Cut(a.Parts[0], "/") // a Map Run's child: <machine>/<map run>
	return []string{a.Prefix.StateMachine(machine), executionArn}
}

// requestEntries reads the Entries parameter, appending resources to
// each entry's Resources.
func requestEntries(params any, resources []string) ([]types.PutEventsRequestEntry, error) {
	obj, ok := params.(*jsonvalue.Object)
	if !ok {
		return nil, invalid("Parameters", "must be an object, not %s", jsonvalue.TypeName(params))
	}
	for name := range obj.All() {
		if name != "Entries" {
			return nil, invalid(name, "is not supported by Step Functions")
		}
	}
	v, _ := obj.Get("Entries")
	if v == nil {
		return nil, invalid("Entries", "is required but was missing")
	}
	list, ok := v.([]any)
	if !ok {
		return nil, invalid("Entries", "must be an array, not %s", jsonvalue.TypeName(v))
	}
	entries := make([]types.PutEventsRequestEntry, len(list))
	for i, e := range list {
		entry, err := requestEntry(e, fmt.Sprintf("Entries[%d]", i))
		if err != nil {
			return nil, err
		}
		entry.Resources = append(entry.Resources, resources...)
		entries[i] = entry
	}
	return entries, nil
}

// requestEntry reads one entry; path names it in errors.
func requestEntry(v any, path string) (types.PutEventsRequestEntry, error) {
	var e types.PutEventsRequestEntry
	obj, ok := v.(*jsonvalue.Object)
	if !ok {
		return e, invalid(path, "must be an object, not %s", jsonvalue.TypeName(v))
	}
	strs := map[string]**string{
		"DetailType": &e.DetailType, "Source": &e.Source,
		"EventBusName": &e.EventBusName, "TraceHeader": &e.TraceHeader,
	}
	for name, val := range obj.All() {
		if val == nil {
			continue
		}
		field := path + "." + name
		var err error
		switch dst, isString := strs[name]; {
		case isString:
			*dst, err = stringValue(val, field)
		case name == "Detail":
			detail, _ := integration.StringParam(obj, name)
			e.Detail = &detail
		case name == "Resources":
			e.Resources, err = stringList(val, field)
		case name == "Time":
			e.Time, err = timeValue(val, field)
		default:
			err = invalid(field, "is not supported by Step Functions")
		}
		if err != nil {
			return e, err
		}
	}
	return e, nil
}

func stringValue(v any, field string) (*string, error) {
	s, ok := v.(string)
	if !ok {
		return nil, invalid(field, "must be a string, not %s", jsonvalue.TypeName(v))
	}
	return &s, nil
}

func stringList(v any, field string) ([]string, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, invalid(field, "must be an array of strings, not %s", jsonvalue.TypeName(v))
	}
	out := make([]string, len(list))
	for i, e := range list {
		s, ok := e.(string)
		if !ok {
			return nil, invalid(fmt.Sprintf("%s[%d]", field, i), "must be a string, not %s", jsonvalue.TypeName(e))
		}
		out[i] = s
	}
	return out, nil
}

// timeValue reads a timestamp: RFC 3339 text or seconds since the epoch.
func timeValue(v any, field string) (*time.Time, error) {
	switch t := v.(type) {
	case string:
		ts, err := time.Parse(time.RFC3339Nano, t)
		if err != nil {
			return nil, invalid(field, "must be an RFC 3339 timestamp: %v", err)
		}
		return &ts, nil
	case jsonvalue.Number:
		sec, frac := math.Modf(t.Float64())
		ts := time.Unix(int64(sec), int64(frac*1e9)).UTC()
		return &ts, nil
	default:
		return nil, invalid(field, "must be a timestamp, not %s", jsonvalue.TypeName(v))
	}
}

// invalid is the task failure of a Parameters member that cannot be sent.
func invalid(field, format string, args ...any) *failure.Failure {
	return failure.Newf(failure.TaskFailed, "The field '%s' "+format, append([]any{field}, args...)...)
}
