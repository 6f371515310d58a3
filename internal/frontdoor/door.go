package frontdoor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"

	"github.com/google/uuid"
)

// RequestIDHeader is the header of every answer that names its request,
// as AWS's SDKs read it.
const RequestIDHeader = "x-amzn-RequestId"

// Log keys.
const (
	logRequestID = "request_id"
	logStatus    = "status"
	logError     = "error"
	logPanic     = "panic"
	logStack     = "stack"
)

// NewRequestID returns a new request id.
func NewRequestID() string { return uuid.NewString() }

// StampRequestID gives w's answer a new request id and returns it.
func StampRequestID(w http.ResponseWriter) string {
	id := NewRequestID()
	w.Header().Set(RequestIDHeader, id)
	return id
}

type requestIDKey struct{}

// RequestID is the id Door.Serve gave the request of ctx ("" outside it).
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// Door is one API's front door: how it answers what every request has in
// common. Its fields are set once, when the API's handler is built.
type Door struct {
	// Name is the API's, the prefix of the door's log messages
	// ("awsjson", "scheduler").
	Name string
	// Log logs panics and internal failures (errors), and answers of
	// status 500 and above (warnings); nil discards.
	Log *slog.Logger
	// Shape writes the API's failures.
	Shape Shape
	// Limit is the largest request body, in bytes.
	Limit int64
	// Answer is the API's answer to err: ok is false for an error that is
	// not one of the API's own, an internal failure.
	Answer func(err error) (f Failure, ok bool)
	// Internal is the API's answer to an internal failure or a panic of
	// request reqID: a 5xx that tells the client only the request id.
	Internal func(reqID string) Failure
	// TooLarge is the API's error for a body larger than Limit.
	TooLarge func(limit int64) error
	// Unreadable is the API's error for a body that could not be read.
	Unreadable func(err error) error
	// Attrs, when set, are what the logs say of a request besides its id
	// (its operation, or its method and path).
	Attrs func(r *http.Request) []any
}

func (d *Door) log() *slog.Logger {
	if d.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return d.Log
}

func (d *Door) attrs(r *http.Request, reqID string, more ...any) []any {
	var a []any
	if d.Attrs != nil {
		a = d.Attrs(r)
	}
	a = append(a, logRequestID, reqID)
	return append(a, more...)
}

// Serve answers r with serve, the API's routing and operations: it gives
// the answer a request id (in RequestIDHeader, and in the context of the
// request serve gets), writes the error serve returns in the API's shape
// (Fail), and answers a panic of serve as an internal failure, logged
// with its stack; the server goes on serving. http.ErrAbortHandler is
// left to net/http.
func (d *Door) Serve(w http.ResponseWriter, r *http.Request, serve func(http.ResponseWriter, *http.Request) error) {
	reqID := StampRequestID(w)
	r = r.WithContext(context.WithValue(r.Context(), requestIDKey{}, reqID))
	defer func() {
		if rec := recover(); rec != nil {
			if rec == http.ErrAbortHandler {
				panic(rec)
			}
			d.log().ErrorContext(r.Context(), d.Name+": panic", d.attrs(r, reqID, logPanic, fmt.Sprint(rec), logStack, string(debug.Stack()))...)
			d.write(w, r, reqID, d.Internal(reqID))
		}
	}()
	if err := serve(w, r); err != nil {
		d.Fail(w, r, err)
	}
}

// Fail answers r with err in the API's shape and returns the status
// written. An error that is not the API's own is logged and answered
// Internal. Outside Serve, the answer gets a request id of its own.
func (d *Door) Fail(w http.ResponseWriter, r *http.Request, err error) int {
	reqID := RequestID(r.Context())
	if reqID == "" {
		reqID = StampRequestID(w)
	}
	f, ok := d.Answer(err)
	if !ok {
		d.log().ErrorContext(r.Context(), d.Name+": internal failure", d.attrs(r, reqID, logError, err)...)
		f = d.Internal(reqID)
	}
	return d.write(w, r, reqID, f)
}

// Refuse answers a request refused before it reached the API (a guard of
// the server's) with f in the API's shape, under a request id of its own.
func (d *Door) Refuse(w http.ResponseWriter, f Failure) {
	StampRequestID(w)
	_ = d.Shape.WriteFailure(w, f)
}

func (d *Door) write(w http.ResponseWriter, r *http.Request, reqID string, f Failure) int {
	if f.Status >= 500 {
		d.log().WarnContext(r.Context(), d.Name+": server error", d.attrs(r, reqID, logStatus, f.Status, logError, f.Message)...)
	}
	if err := d.Shape.WriteFailure(w, f); err != nil {
		d.log().ErrorContext(r.Context(), d.Name+": write error", logRequestID, reqID, logError, err)
	}
	return f.Status
}

type bodyKey struct{}

// WithBody is r carrying body, its whole body, read by a gate before the
// API (an authenticator), for ReadBody to give the API without reading
// again.
func WithBody(r *http.Request, body []byte) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), bodyKey{}, body))
}

// ReadBody returns r's body: the one WithBody gave it, or read here, at
// most d.Limit bytes. A larger one is d.TooLarge's error, refused by its
// Content-Length unread, or read no further than the limit; a body that
// cannot be read is d.Unreadable's.
func (d *Door) ReadBody(r *http.Request) ([]byte, error) {
	if body, ok := r.Context().Value(bodyKey{}).([]byte); ok {
		return body, nil
	}
	if r.ContentLength > d.Limit {
		return nil, d.TooLarge(d.Limit)
	}
	var body []byte
	if r.ContentLength > 0 {
		body = make([]byte, 0, r.ContentLength+1) // +1 to see the end without growing
	}
	body, err := readAll(body, io.LimitReader(r.Body, d.Limit+1))
	if err != nil {
		return nil, d.Unreadable(err)
	}
	if int64(len(body)) > d.Limit {
		return nil, d.TooLarge(d.Limit)
	}
	return body, nil
}

// readAll is io.ReadAll into buf.
func readAll(buf []byte, r io.Reader) ([]byte, error) {
	if buf == nil {
		return io.ReadAll(r)
	}
	for {
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)] // grow
		}
	}
}
