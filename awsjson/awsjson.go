// Package awsjson serves the Step Functions API over HTTP as every AWS SDK
// and the AWS CLI speak it: the AWS JSON 1.0 protocol.
//
//	POST /
//	Content-Type: application/x-amz-json-1.0
//	X-Amz-Target: AWSStepFunctions.StartExecution
//
//	{"stateMachineArn": "...", "input": "{}"}
//
// The response is the operation's output as JSON (timestamps as epoch
// seconds) or an error:
//
//	HTTP/1.1 400 Bad Request
//	{"__type": "com.amazonaws.swf.service.v2.model#StateMachineDoesNotExist", "message": "..."}
//
// Every response carries x-amzn-RequestId. The Host header is not looked
// at: SDKs send StartSyncExecution and TestState to a "sync-" prefixed
// host. Handlers return errors; the API's front door (internal/frontdoor)
// renders them, once, in the shape above, as it gives every answer its
// request id, bounds the body and answers a panic. Listener gives
// net/http's own refusal of an oversized header block, written before any
// handler runs, the same shape.
//
// With quotas (Options.Quotas), a request its operation's token bucket
// refuses is answered before the operation runs, as AWS answers it:
//
//	HTTP/1.1 400 Bad Request
//	x-amz-retry-after: 600
//	{"__type": "com.amazon.coral.availability#ThrottlingException", "message": "Rate exceeded"}
//
// x-amz-retry-after (milliseconds until the bucket holds a token again)
// is a hint that newer AWS SDKs (the Go SDK v2 among them) wait at least
// before they retry, so that the retry is not refused again; every SDK
// retries ThrottlingException with back-off anyway.
//
// RequireAuth puts the API behind an Authenticator (serve --credentials:
// a SigV4 signature, or the console's session cookie): a request it
// refuses is answered before the operation, or its quota, sees it, in the
// words of AWS's JSON-protocol services, every one a 400:
//
//	MissingAuthenticationTokenException  Request is missing Authentication Token
//	UnrecognizedClientException          The security token included in the request is invalid.
//	InvalidSignatureException            The request signature we calculated does not match ...
//	                                     Signature expired: 20260102T030405Z is now earlier than ...
//	IncompleteSignatureException         Authorization header requires 'Signature' parameter. ...
//
// The in-process calls of the server's own Task states use the handler
// without it.
package awsjson

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"stepwise/internal/frontdoor"
	"stepwise/internal/security/quota"
	"stepwise/jsonvalue"
	"stepwise/service"
	"stepwise/sfnapi"
)

// Limits of a request.
const (
	// MaxBodySize is the largest request body (1 MiB, the largest
	// definition, plus room for the other members).
	MaxBodySize = 1024*1024 + 64*1024
	// maxDepth is the deepest nesting of a request body. No request shape
	// nests deeper than a few levels.
	maxDepth = 32
)

// TargetPrefix is the X-Amz-Target prefix of Step Functions operations.
const TargetPrefix = "AWSStepFunctions."

// Log keys (the front door's add request_id, status, error, panic).
const (
	logOperation = "operation"
	logRequestID = "request_id"
	logStatus    = "status"
	logError     = "error"
)

// operation decodes a request body and runs the operation.
type operation func(ctx context.Context, body []byte) (any, error)

// handler is the HTTP handler of the API.
type handler struct {
	door   *frontdoor.Door
	api    *API // the operations (call.go)
	quotas *quota.Quotas
}

// Options configure the API's handler.
type Options struct {
	// Logger logs internal failures and, at debug level, every request;
	// nil discards.
	Logger *slog.Logger
	// Quotas, when set, throttle requests by operation before they run:
	// a request its operation's bucket refuses is answered
	// ThrottlingException.
	Quotas *quota.Quotas
}

// New returns the HTTP handler of the API of svc. A nil logger discards.
// A server should set ConnContext as its http.Server's ConnContext, so
// GetActivityTask sees a worker that hung up at once.
func New(svc *service.Service, logger *slog.Logger) http.Handler {
	return NewWith(svc, Options{Logger: logger})
}

// NewWith is New with options.
func NewWith(svc *service.Service, opts Options) http.Handler {
	return &handler{door: newDoor(opts.Logger), api: NewAPI(svc, opts), quotas: opts.Quotas}
}

// operations maps operation names to the service methods.
func operations(svc *service.Service) map[string]operation {
	return map[string]operation{
		"CreateStateMachine":               op(svc.CreateStateMachine),
		"DescribeStateMachine":             op(svc.DescribeStateMachine),
		"UpdateStateMachine":               op(svc.UpdateStateMachine),
		"DeleteStateMachine":               op(svc.DeleteStateMachine),
		"ListStateMachines":                op(svc.ListStateMachines),
		"ValidateStateMachineDefinition":   op(svc.ValidateStateMachineDefinition),
		"PublishStateMachineVersion":       op(svc.PublishStateMachineVersion),
		"ListStateMachineVersions":         op(svc.ListStateMachineVersions),
		"DeleteStateMachineVersion":        op(svc.DeleteStateMachineVersion),
		"CreateStateMachineAlias":          op(svc.CreateStateMachineAlias),
		"DescribeStateMachineAlias":        op(svc.DescribeStateMachineAlias),
		"UpdateStateMachineAlias":          op(svc.UpdateStateMachineAlias),
		"DeleteStateMachineAlias":          op(svc.DeleteStateMachineAlias),
		"ListStateMachineAliases":          op(svc.ListStateMachineAliases),
		"StartExecution":                   op(svc.StartExecution),
		"StartSyncExecution":               op(svc.StartSyncExecution),
		"DescribeExecution":                op(svc.DescribeExecution),
		"DescribeStateMachineForExecution": op(svc.DescribeStateMachineForExecution),
		"ListExecutions":                   op(svc.ListExecutions),
		"GetExecutionHistory":              op(svc.GetExecutionHistory),
		"StopExecution":                    op(svc.StopExecution),
		"RedriveExecution":                 op(redriveBy(svc)),
		"DescribeMapRun":                   op(svc.DescribeMapRun),
		"ListMapRuns":                      op(svc.ListMapRuns),
		"UpdateMapRun":                     op(svc.UpdateMapRun),
		"TagResource":                      op(svc.TagResource),
		"UntagResource":                    op(svc.UntagResource),
		"ListTagsForResource":              op(svc.ListTagsForResource),
		"TestState":                        op(svc.RunTestState),
		"CreateActivity":                   op(svc.CreateActivity),
		"DescribeActivity":                 op(svc.DescribeActivity),
		"DeleteActivity":                   op(svc.DeleteActivity),
		"ListActivities":                   op(svc.ListActivities),
		"GetActivityTask":                  op(svc.GetActivityTask),
		"SendTaskSuccess":                  op(svc.SendTaskSuccess),
		"SendTaskFailure":                  op(svc.SendTaskFailure),
		"SendTaskHeartbeat":                op(svc.SendTaskHeartbeat),
	}
}

// Operations are the names of the operations the API serves (without
// TargetPrefix), sorted.
func Operations() []string {
	return slices.Sorted(maps.Keys(operations(nil)))
}

// longPolls are the operations that wait for something to hand out: their
// context also looks at the client's connection (see ConnContext).
var longPolls = map[string]bool{"GetActivityTask": true}

// op adapts a service method to an operation.
func op[I, O any](fn func(context.Context, *I) (*O, error)) operation {
	return func(ctx context.Context, body []byte) (any, error) {
		in := new(I)
		if err := decode(body, in); err != nil {
			return nil, err
		}
		out, err := fn(ctx, in)
		if err != nil {
			return nil, err
		}
		return out, nil
	}
}

// statusError is an API error with an HTTP status other than the one its
// code implies.
type statusError struct {
	status int
	err    *sfnapi.Error
}

func (e *statusError) Error() string { return e.err.Error() }
func (e *statusError) Unwrap() error { return e.err }

func withStatus(status int, code, format string, args ...any) error {
	return &statusError{status: status, err: sfnapi.NewError(code, format, args...)}
}

// ServeHTTP answers one request through the API's front door: a request
// id, the body's limit, panics and errors in the API's shape. The server
// logs each request (at debug level, with the request ID this sets); the
// door logs panics and server errors.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.door.Serve(w, r, h.serve)
}

// Refuse answers a request refused before it reached the API (by the
// server's cross-origin guard): status, with code and message in the
// API's error shape and a request id.
func Refuse(w http.ResponseWriter, r *http.Request, status int, code, message string) {
	refuser.Fail(w, r, withStatus(status, code, "%s", message))
}

// refuser is the door of Refuse: refusals are not logged.
var refuser = newDoor(nil)

// serve answers one request, or returns the error to render.
func (h *handler) serve(w http.ResponseWriter, r *http.Request) error {
	if r.URL.Path != "/" {
		return withStatus(http.StatusNotFound, sfnapi.CodeUnknownOperation, "No operation at path %s: the API is served at POST /", r.URL.Path)
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		return withStatus(http.StatusMethodNotAllowed, sfnapi.CodeUnknownOperation, "Method %s is not allowed: the API takes POST", r.Method)
	}
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.Contains(strings.ToLower(ct), "json") {
		return sfnapi.NewError(sfnapi.CodeUnknownOperation, "Content-Type %q is not supported: send application/x-amz-json-1.0", ct)
	}
	target := r.Header.Get("X-Amz-Target")
	if target == "" {
		return sfnapi.NewError(sfnapi.CodeUnknownOperation, "Missing X-Amz-Target header: it names the operation, as in %sStartExecution", TargetPrefix)
	}
	run := h.api.run
	name, ok := strings.CutPrefix(target, TargetPrefix)
	if !ok {
		if name, ok = strings.CutPrefix(target, StepwiseTargetPrefix); ok && h.api.stepwise[name] != nil {
			run = h.api.runStepwise
		} else {
			return sfnapi.NewError(sfnapi.CodeUnknownOperation, "Unknown operation %s", target)
		}
	} else if !h.api.has(name) {
		return sfnapi.NewError(sfnapi.CodeUnknownOperation, "Unknown operation %s", target)
	}
	if err := signedRegion(r, h.api.region); err != nil {
		return err
	}
	if ok, after := h.quotas.Allow(name); !ok {
		w.Header().Set("x-amz-retry-after", strconv.FormatInt(after.Milliseconds(), 10))
		return errThrottled
	}
	body, err := h.door.ReadBody(r) // or the one RequireAuth read
	if err != nil {
		return err
	}
	ctx := r.Context()
	if longPolls[name] {
		var cancel context.CancelFunc
		ctx, cancel = withHangUp(ctx)
		defer cancel()
	}
	if actor(ctx) == "" {
		ctx = withActor(ctx, anonymous(r))
	}
	out, err := run(ctx, name, body)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, out)
}

// errThrottled is AWS's answer to a request its quota refused.
var errThrottled = sfnapi.NewError(sfnapi.CodeThrottling, "Rate exceeded")

func errTooLarge() error {
	return withStatus(http.StatusRequestEntityTooLarge, sfnapi.CodeRequestEntityTooLarge,
		"Request body exceeds the maximum size of %d bytes", MaxBodySize)
}

// decode reads a request body into the operation's input. The body must
// be one JSON object of valid UTF-8, nested at most maxDepth deep; an
// empty body is an empty request. Unknown members are ignored, as AWS
// does. Names keep unpaired surrogates (see keepNames).
func decode(body []byte, in any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	// Most bodies are small, valid objects: check what encoding/json does
	// not (UTF-8, depth, an object) without building the value, and let
	// anything else take the slow path, which words the error.
	plain, unpaired := scanBody(body)
	if plain && json.Unmarshal(body, in) == nil {
		if unpaired {
			keepNames(body, in)
		}
		return nil
	}
	v, err := jsonvalue.ParseDepth(body, maxDepth)
	if err != nil {
		if errors.Is(err, jsonvalue.ErrTooDeep) {
			return sfnapi.NewError(sfnapi.CodeSerialization, "The request body is nested too deeply (more than %d levels)", maxDepth)
		}
		return sfnapi.NewError(sfnapi.CodeSerialization, "The request body is not valid JSON: %v", err)
	}
	if _, ok := v.(*jsonvalue.Object); !ok {
		return sfnapi.NewError(sfnapi.CodeSerialization, "Start of structure or map expected: the request body must be a JSON object")
	}
	if err := json.Unmarshal(body, in); err != nil {
		return serializationError(err)
	}
	if unpaired {
		keepNames(body, in)
	}
	return nil
}

// serializationError words a member of the wrong type as AWS's
// deserializer (Coral) does.
func serializationError(err error) error {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return sfnapi.NewError(sfnapi.CodeSerialization, "%v", err)
	}
	var msg string
	switch {
	case te.Value == "object":
		msg = "Start of structure or map found where not expected."
	case te.Value == "array":
		msg = "Start of list found where not expected."
	default:
		msg = fmt.Sprintf("%s can not be converted to %s", valueKind(te.Value), typeName(te.Type))
	}
	if te.Field != "" {
		msg += " (member " + te.Field + ")"
	}
	return sfnapi.NewError(sfnapi.CodeSerialization, "%s", msg)
}

func valueKind(v string) string {
	switch {
	case v == "string":
		return "STRING_VALUE"
	case v == "bool":
		return "BOOLEAN_VALUE"
	case strings.HasPrefix(v, "number"):
		return "NUMBER_VALUE"
	}
	return strings.ToUpper(v) + "_VALUE"
}

func typeName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a String"
	case reflect.Bool:
		return "a Boolean"
	case reflect.Int, reflect.Int32, reflect.Int64:
		return "an Integer"
	case reflect.Float32, reflect.Float64:
		return "a Double"
	case reflect.Slice:
		return "a List"
	case reflect.Struct, reflect.Map:
		return "a Structure"
	}
	return "the member's type"
}

// writeJSON writes a response body; HTML characters are not escaped, so
// definitions and payloads come back as they were sent.
func writeJSON(w http.ResponseWriter, status int, v any) error {
	return frontdoor.WriteJSON(w, status, frontdoor.ContentTypeJSON10, v)
}

// Error type prefixes: AWS's framework errors are Coral's, the others the
// service's model's.
const (
	typePrefixModel = "com.amazonaws.swf.service.v2.model#"
	typePrefixCoral = "com.amazon.coral.service#"
	// typePrefixAvailability is that of Coral's throttling.
	typePrefixAvailability = "com.amazon.coral.availability#"
)

var coralCodes = map[string]bool{
	sfnapi.CodeUnknownOperation:    true,
	sfnapi.CodeSerialization:       true,
	sfnapi.CodeInternalFailure:     true,
	sfnapi.CodeServiceUnavailable:  true,
	sfnapi.CodeAccessDenied:        true,
	sfnapi.CodeMissingAction:       true,
	sfnapi.CodeInvalidSignature:    true,
	sfnapi.CodeIncompleteSignature: true,
	sfnapi.CodeUnrecognizedClient:  true,
	sfnapi.CodeMissingAuthToken:    true,
}

// statusOf is the HTTP status of an error code: 400 for everything a
// client did wrong, as AWS does (ThrottlingException, and the refusals of
// unsigned or badly signed requests, included).
func statusOf(code string) int {
	switch code {
	case sfnapi.CodeInternalFailure:
		return http.StatusInternalServerError
	case sfnapi.CodeServiceUnavailable:
		return http.StatusServiceUnavailable
	case sfnapi.CodeRequestEntityTooLarge:
		return http.StatusRequestEntityTooLarge
	case sfnapi.CodeRequestHeaderFieldsTooLarge:
		return http.StatusRequestHeaderFieldsTooLarge
	case sfnapi.CodeAccessDenied:
		return http.StatusForbidden
	}
	return http.StatusBadRequest
}

// typeOf is the __type of an error code: AWS's framework errors are
// Coral's, the others the service's model's.
func typeOf(code string) string {
	switch {
	case coralCodes[code]:
		return typePrefixCoral + code
	case code == sfnapi.CodeThrottling:
		return typePrefixAvailability + code
	}
	return typePrefixModel + code
}

// shape is the API's error shape: AWS JSON 1.0.
var shape = frontdoor.JSON10{TypeOf: typeOf}

// newDoor is the API's front door. A nil logger discards.
func newDoor(logger *slog.Logger) *frontdoor.Door {
	return &frontdoor.Door{
		Name:   "awsjson",
		Log:    logger,
		Shape:  shape,
		Limit:  MaxBodySize,
		Answer: answer,
		Internal: func(reqID string) frontdoor.Failure {
			f, _ := answer(sfnapi.NewError(sfnapi.CodeInternalFailure, "An internal error occurred (request %s)", reqID))
			return f
		},
		TooLarge: func(int64) error { return errTooLarge() },
		Unreadable: func(err error) error {
			return sfnapi.NewError(sfnapi.CodeSerialization, "Could not read the request body: %v", err)
		},
		Attrs: func(r *http.Request) []any {
			return []any{logOperation, strings.TrimPrefix(r.Header.Get("X-Amz-Target"), TargetPrefix)}
		},
	}
}

// answer is the failure of an API error (*sfnapi.Error): its status is
// its code's, or a statusError's. Any other error is an internal failure.
func answer(err error) (frontdoor.Failure, bool) {
	var apiErr *sfnapi.Error
	if !errors.As(err, &apiErr) {
		return frontdoor.Failure{}, false
	}
	status := statusOf(apiErr.Code)
	var se *statusError
	if errors.As(err, &se) {
		status = se.status
	}
	return frontdoor.Failure{Status: status, Code: apiErr.Code, Message: apiErr.Message}, true
}
