// Package sfn is the AWS SDK integration for Step Functions itself,
// arn:aws:states:::aws-sdk:sfn:<action>, carried out in process against
// the server's own API (integration.SelfCall: the operation run on its
// JSON request, without HTTP).
//
// Any action of the service works: the action names the operation
// (sendTaskSuccess → SendTaskSuccess), the Parameters are its request with
// the members in PascalCase, as every AWS SDK integration takes them, and
// the result is its response with the members in PascalCase and dates as
// ISO 8601 text. A string member given a JSON value (Input, Output,
// Definition) is sent as its JSON text. An API error fails the task with
// Sfn.<Code>Exception (Sfn.InvalidTokenException) and the cause
// "<message> (Service: Sfn, Status Code: 400, Request ID: <id>)", as
// recorded on AWS.
package sfn

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"time"
	"unicode"
	"unicode/utf8"

	"stepwise/failure"
	"stepwise/integration"
	"stepwise/jsonvalue"
	"stepwise/sfnapi"
)

// Resource is the resource ARN prefix served.
const Resource = integration.ResourcePrefix + "aws-sdk:sfn:"

func init() {
	integration.Register(integration.Module{
		Resource: Resource + "*",
		Patterns: []integration.Pattern{integration.WaitForTaskToken},
		New: func(cfg *integration.Config) (integration.Integration, error) {
			return &client{self: cfg.Self}, nil
		},
	})
}

type client struct {
	self *integration.SelfAPI
}

// Call runs one operation of the server's API, in process.
func (c *client) Call(ctx context.Context, r *integration.Request) (any, error) {
	call, err := c.self.Caller(ctx)
	if err != nil {
		return nil, err
	}
	body := jsonvalue.Marshal(toWire(r.Parameters, true))
	resp, err := call(ctx, upperFirst(r.Action), body)
	if err != nil {
		return nil, apiFailure(err)
	}
	out, err := jsonvalue.Parse(resp)
	if err != nil {
		return nil, fmt.Errorf("aws-sdk:sfn:%s: response: %w", r.Action, err)
	}
	return fromWire(out), nil
}

// apiFailure is the task failure of an API error: its code, message, and
// the HTTP status and request id the API answered it with.
func apiFailure(err error) error {
	var refused *sfnapi.Error
	if !errors.As(err, &refused) {
		return err
	}
	status, requestID := http.StatusBadRequest, ""
	var wire interface {
		HTTPStatus() int
		RequestID() string
	}
	if errors.As(err, &wire) {
		status, requestID = wire.HTTPStatus(), wire.RequestID()
	}
	code := refused.Code
	if code == "" {
		code = "SfnException"
	}
	return failure.New("Sfn."+integration.ExceptionName(code),
		fmt.Sprintf("%s (Service: Sfn, Status Code: %d, Request ID: %s)", refused.Message, status, requestID))
}

// jsonTextMembers are the string members that carry JSON text: a JSON
// value given for one is sent as its text.
var jsonTextMembers = map[string]bool{"input": true, "output": true, "definition": true, "variables": true}

// mapMembers hold maps keyed by names (variables, states), not members.
var mapMembers = map[string]bool{"assignedVariables": true, "variableReferences": true}

// timestampMembers are the members of type timestamp.
var timestampMembers = map[string]bool{
	"creationDate": true, "redriveDate": true, "startDate": true, "stopDate": true, "timestamp": true, "updateDate": true,
}

// toWire turns PascalCase Parameters into the API's camelCase request.
func toWire(v any, top bool) any {
	switch t := v.(type) {
	case *jsonvalue.Object:
		o := jsonvalue.NewObject(t.Len())
		for k, val := range t.All() {
			name := lowerFirst(k)
			switch {
			case top && jsonTextMembers[name]:
				if _, isString := val.(string); !isString && val != nil {
					val = jsonvalue.String(val)
				}
			case mapMembers[name]:
			default:
				val = toWire(val, false)
			}
			o.Set(name, val)
		}
		return o
	case []any:
		a := make([]any, len(t))
		for i, e := range t {
			a[i] = toWire(e, false)
		}
		return a
	}
	return v
}

// fromWire turns the API's camelCase response into PascalCase members,
// with dates as ISO 8601 text.
func fromWire(v any) any {
	switch t := v.(type) {
	case *jsonvalue.Object:
		o := jsonvalue.NewObject(t.Len())
		for k, val := range t.All() {
			switch {
			case mapMembers[k]:
			case timestampMembers[k]:
				val = isoDate(val)
			default:
				val = fromWire(val)
			}
			o.Set(upperFirst(k), val)
		}
		return o
	case []any:
		a := make([]any, len(t))
		for i, e := range t {
			a[i] = fromWire(e)
		}
		return a
	}
	return v
}

// isoDate renders epoch seconds the way the AWS SDK for Java v2 renders an
// Instant: 2024-04-10T18:55:26.123Z, without a fraction when it is zero.
func isoDate(v any) any {
	n, ok := v.(jsonvalue.Number)
	if !ok {
		return v
	}
	ms := new(big.Rat).Mul(n.Rat(), big.NewRat(1000, 1))
	millis := new(big.Int).Quo(ms.Num(), ms.Denom()).Int64()
	t := time.UnixMilli(millis).UTC()
	if t.Nanosecond() == 0 {
		return t.Format("2006-01-02T15:04:05Z")
	}
	return t.Format("2006-01-02T15:04:05.000Z")
}

func upperFirst(s string) string {
	r, size := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[size:]
}

func lowerFirst(s string) string {
	r, size := utf8.DecodeRuneInString(s)
	return string(unicode.ToLower(r)) + s[size:]
}
