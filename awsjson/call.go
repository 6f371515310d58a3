package awsjson

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"

	"stepwise/internal/frontdoor"
	"stepwise/service"
	"stepwise/sfnapi"
)

// API is the Step Functions API in process: its operations by name, each
// run on a request body as the HTTP API runs it (decoded, validated,
// answered as JSON), without HTTP. The HTTP handler (New) serves its
// operations; the server's own calls (the aws-sdk:sfn integration) make
// them with Call.
type API struct {
	log *slog.Logger
	ops map[string]operation
	// stepwise are Stepwise's own operations: served over HTTP only.
	stepwise map[string]operation
	opt      Options
	// region is the server's: the hint of an error for another's.
	region string
}

// NewAPI returns the API of svc in process; opts are the HTTP handler's
// (its logger, and the quotas a call counts against).
func NewAPI(svc *service.Service, opts Options) *API {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &API{log: opts.Logger, ops: operations(svc), stepwise: stepwiseOperations(svc), opt: opts, region: svc.Config().Region}
}

// Error is an operation's failure as the HTTP API answers it: its API
// error, its HTTP status and the request's id.
type Error struct {
	Err    *sfnapi.Error
	Status int
	ID     string
}

func (e *Error) Error() string     { return e.Err.Error() }
func (e *Error) Unwrap() error     { return e.Err }
func (e *Error) HTTPStatus() int   { return e.Status }
func (e *Error) RequestID() string { return e.ID }

// Call runs the operation name (without TargetPrefix) on a request body
// and returns the response's body, the JSON the HTTP API answers with, or
// an *Error (whose Unwrap is the *sfnapi.Error): an operation that does
// not exist is UnknownOperation, a call its quota refuses
// ThrottlingException, an internal failure InternalFailure (logged).
func (a *API) Call(ctx context.Context, name string, body []byte) ([]byte, error) {
	id := frontdoor.NewRequestID()
	var out any
	var err error
	if len(body) > MaxBodySize { // as the HTTP API refuses it
		err = errTooLarge()
	} else {
		out, err = a.call(ctx, name, body)
	}
	if err != nil {
		var apiErr *sfnapi.Error
		if !errors.As(err, &apiErr) {
			a.log.ErrorContext(ctx, "awsjson: internal failure", logOperation, name, logRequestID, id, logError, err)
			apiErr = sfnapi.NewError(sfnapi.CodeInternalFailure, "An internal error occurred (request %s)", id)
		}
		return nil, &Error{Err: apiErr, Status: statusOf(apiErr.Code), ID: id}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		a.log.ErrorContext(ctx, "awsjson: encode response", logOperation, name, logRequestID, id, logError, err)
		return nil, &Error{Err: sfnapi.NewError(sfnapi.CodeInternalFailure, "An internal error occurred (request %s)", id),
			Status: statusOf(sfnapi.CodeInternalFailure), ID: id}
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// call runs an operation: its quota first, then the operation.
func (a *API) call(ctx context.Context, name string, body []byte) (any, error) {
	if a.ops[name] == nil {
		return nil, sfnapi.NewError(sfnapi.CodeUnknownOperation, "Unknown operation %s%s", TargetPrefix, name)
	}
	if ok, _ := a.opt.Quotas.Allow(name); !ok {
		return nil, errThrottled
	}
	return a.run(ctx, name, body)
}

// run runs an operation that exists on a request body: the one way the
// HTTP handler and Call reach the service.
func (a *API) run(ctx context.Context, name string, body []byte) (any, error) {
	out, err := a.ops[name](ctx, body)
	return out, hintRegion(err, a.region)
}

// runStepwise runs one of Stepwise's own operations.
func (a *API) runStepwise(ctx context.Context, name string, body []byte) (any, error) {
	out, err := a.stepwise[name](ctx, body)
	return out, hintRegion(err, a.region)
}

// has reports whether name is an operation of the API.
func (a *API) has(name string) bool { return a.ops[name] != nil }

// StatusOf is the HTTP status the API answers an operation's outcome
// with: 200 for none, an *Error's or an API error's own, 500 for any
// other error.
func StatusOf(err error) int {
	if err == nil {
		return http.StatusOK
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Status
	}
	if f, ok := answer(err); ok {
		return f.Status
	}
	return http.StatusInternalServerError
}
