package awssdk

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/aws/smithy-go"

	"stepwise/integration"
	"stepwise/integration/awssdk/awsmodel"
	"stepwise/jsonvalue"
)

// Reply is the answer to one call Invoke made.
type Reply struct {
	// Result is the response's members as Call renders them, except
	// timestamps: epoch milliseconds, as the optimized integrations
	// render them.
	Result *jsonvalue.Object
	Status int
	Header http.Header
}

// RequestID is the request ID of the answer.
func (r *Reply) RequestID() string {
	return firstHeader(r.Header, "X-Amzn-Requestid", "X-Amz-Request-Id")
}

// ServiceError is a service's error answer to Invoke: a smithy.APIError
// that knows its HTTP status, request ID and, when the model has the
// error, its modeled exception.
type ServiceError struct {
	Code, Message, RequestID string
	Status                   int
	// Modeled is the shape of the error in the model ("" when the model
	// does not know the code).
	Modeled string
}

var _ smithy.APIError = (*ServiceError)(nil)

func (e *ServiceError) Error() string {
	return fmt.Sprintf("%s: %s (status %d, request ID %s)", e.Code, e.Message, e.Status, e.RequestID)
}

// ErrorCode is the error's code.
func (e *ServiceError) ErrorCode() string { return e.Code }

// ErrorMessage is the service's message.
func (e *ServiceError) ErrorMessage() string { return e.Message }

// ErrorFault is unknown: the models do not say.
func (e *ServiceError) ErrorFault() smithy.ErrorFault { return smithy.FaultUnknown }

// HTTPStatusCode is the status of the answer.
func (e *ServiceError) HTTPStatusCode() int { return e.Status }

// ServiceRequestID is the request ID of the answer.
func (e *ServiceError) ServiceRequestID() string { return e.RequestID }

// ModeledException is the modeled exception the error is, or "".
func (e *ServiceError) ModeledException() string { return e.Modeled }

// InvokeOptions are how Invoke renders a result.
type InvokeOptions struct {
	// EmptyLists renders the lists a structure leaves unset as [], as
	// the AWS SDK for Java's models of some services (ECS) do.
	EmptyLists bool
	// StrictStrings refuses, in Check, other JSON values for string
	// members instead of sending their text.
	StrictStrings bool
	// Region is the region called ("": the configured one).
	Region string
}

// Invoke makes one call of a service's operation (the service as Step
// Functions names it, the operation as its model does: StartJobRun) with
// params as its input, checked, addressed, signed and retried as Call
// does. A service's error answer is a *ServiceError; a problem of the
// Parameters or a call that got no answer is the task failure Call gives.
// It lets the optimized integrations call a service without a client
// written for it.
func (c *Client) Invoke(ctx context.Context, service, operation string, params *jsonvalue.Object, opts InvokeOptions) (*Reply, error) {
	r := &integration.Request{Service: service, Action: operation, Parameters: params}
	m, op, resp, apiErr, err := c.exchangeRaw(ctx, r, opts.Region, false, nil)
	if err != nil {
		return nil, err
	}
	if apiErr != nil {
		modeled, _ := m.ErrorShape(apiErr.code)
		return nil, &ServiceError{Code: apiErr.code, Message: apiErr.message, RequestID: apiErr.requestID, Status: apiErr.status, Modeled: modeled}
	}
	out, err := unmarshal(m, op, resp)
	if err != nil {
		return nil, clientFailure(m, "Unable to unmarshall response (%v). Response Code: %d", err, resp.status)
	}
	result, _ := out.(*jsonvalue.Object)
	if result == nil {
		result = jsonvalue.NewObject(0)
	}
	if op.Output != nil && op.Output.Shape != nil {
		result = opts.render(result, op.Output.Shape).(*jsonvalue.Object)
	}
	return &Reply{Result: result, Status: resp.status, Header: resp.header}, nil
}

// render turns the timestamps of a rendered value of shape s into epoch
// milliseconds and, with EmptyLists, adds the unset lists, in place where
// it can, and returns the value.
func (o InvokeOptions) render(v any, s *awsmodel.Shape) any {
	if v == nil || s == nil || s.Document {
		return v
	}
	switch s.Type {
	case "structure":
		obj, ok := v.(*jsonvalue.Object)
		if !ok {
			return v
		}
		added := false
		for _, m := range s.Members {
			if m.Ref == nil || m.Shape == nil {
				continue
			}
			name := awsmodel.Pascal(m.Name)
			x, ok := obj.Get(name)
			switch {
			case ok && x != nil:
				obj.Set(name, o.render(x, m.Shape))
			case o.EmptyLists && m.Shape.Type == "list" && m.Location == "":
				obj.Set(name, []any{})
				added = true
			}
		}
		if added {
			return sortedMembers(obj)
		}
	case "list":
		if arr, ok := v.([]any); ok && s.Member != nil {
			for i, e := range arr {
				arr[i] = o.render(e, s.Member.Shape)
			}
		}
	case "map":
		if obj, ok := v.(*jsonvalue.Object); ok && s.Value != nil {
			for k, e := range obj.All() {
				obj.Set(k, o.render(e, s.Value.Shape))
			}
		}
	case "timestamp":
		if text, ok := v.(string); ok {
			if t, err := time.Parse(time.RFC3339Nano, text); err == nil {
				return jsonvalue.NumberFromInt(t.UnixMilli())
			}
		}
	}
	return v
}

// Check checks params against the input of a service's operation as
// Invoke does, without calling it: the task failure of Parameters it
// cannot send, or nil.
func (c *Client) Check(service, operation string, params *jsonvalue.Object, opts InvokeOptions) error {
	_, op, err := c.operation(service, operation)
	if err != nil {
		return err
	}
	_, err = converter{strict: opts.StrictStrings}.convert(params, op.Input)
	return err
}

// Shared returns a client of the configured endpoints and credentials
// that reads the models the aws-sdk integration reads.
func Shared(cfg *integration.Config) *Client { return New(cfg, knownModels()) }

// sortedMembers is obj with its members in alphabetical order.
func sortedMembers(obj *jsonvalue.Object) *jsonvalue.Object {
	keys := slices.Sorted(slices.Values(obj.Keys())) // a copy: Keys is the object's own

	out := jsonvalue.NewObject(len(keys))
	for _, k := range keys {
		v, _ := obj.Get(k)
		out.Set(k, v)
	}
	return out
}
