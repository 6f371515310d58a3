// Package events is the optimized Amazon EventBridge integration:
// arn:aws:states:::events:putEvents, request-response and
// .waitForTaskToken, at the endpoint configured for "events".
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
	"math"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/types"

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
	return integration.Func(func(ctx context.Context, r *integration.Request) (any, error) {
		return putEvents(ctx, client, r)
	}), nil
}

// putEvents sends the entries and answers as AWS does.
func putEvents(ctx context.Context, client *eventbridge.Client, r *integration.Request) (any, error) {
	entries, err := requestEntries(r.Parameters, sourceArns(r.ExecutionArn))
	if err != nil {
		return nil, err
	}
	res, err := client.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: entries})
	if err != nil {
		return nil, integration.ServiceFailure("EventBridge", "AmazonEventBridge", err)
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
