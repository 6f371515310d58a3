// Package restjson serves the EventBridge Scheduler API (package
// scheduler's operations) over HTTP as every AWS SDK and the AWS CLI
// speak it: REST-JSON, on Stepwise's own port.
//
//	POST /schedules/nightly?...        CreateSchedule
//	Content-Type: application/json
//
//	{"ScheduleExpression": "cron(0 2 * * ? *)", "Target": {...}, ...}
//
// The answer is the operation's output as JSON or an error:
//
//	HTTP/1.1 404 Not Found
//	x-amzn-ErrorType: ResourceNotFoundException
//	{"Message": "Schedule nightly does not exist."}
//
// Requests whose path HandlesPath says is the API's go to it. Every
// answer carries x-amzn-RequestId; a body larger than MaxBodySize is a
// ValidationException; a panic of an operation is a logged 500
// (InternalServerException): the front door (internal/frontdoor) does
// these for every route, as it does for the Step Functions API. The
// routing and the decoding of a request into an operation's arguments
// are here; the operations, their checks and their errors
// (*scheduler.Error) are package scheduler's.
package restjson

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"stepwise/internal/frontdoor"
	"stepwise/scheduler"
)

// MaxBodySize bounds a request's body.
const MaxBodySize = 1 << 20

// HandlesPath says whether a request path is the Scheduler API's:
// /schedules, /schedule-groups and /tags/ of a scheduler ARN.
func HandlesPath(path string) bool {
	switch {
	case path == "/schedules" || strings.HasPrefix(path, "/schedules/"),
		path == "/schedule-groups" || strings.HasPrefix(path, "/schedule-groups/"),
		path == "/file-triggers" || strings.HasPrefix(path, "/file-triggers/"),
		strings.HasPrefix(path, "/tags/arn:") && strings.Contains(path, ":scheduler:"):
		return true
	}
	return false
}

// Handler is the HTTP handler of the API.
type Handler struct {
	svc      *scheduler.Service
	door     *frontdoor.Door
	mux      *http.ServeMux
	patterns []string // of mux, in the order registered
}

// New returns the HTTP handler of the API of svc. A nil logger discards.
func New(svc *scheduler.Service, logger *slog.Logger) *Handler {
	h := &Handler{svc: svc, door: newDoor(logger)}
	h.routes()
	return h
}

// ServeHTTP serves the API.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.door.Serve(w, r, func(w http.ResponseWriter, r *http.Request) error {
		h.mux.ServeHTTP(w, r)
		return nil
	})
}

// Patterns are the routes the API registers ("POST /schedules/{name}",
// ...), for a test to walk every one.
func (h *Handler) Patterns() []string { return slices.Clone(h.patterns) }

// Refuse answers a request refused before it reached the API (by the
// server's cross-origin guard): status, with code and message as the API
// words its errors, and a request id.
func Refuse(w http.ResponseWriter, status int, code, message string) {
	refuser.Refuse(w, frontdoor.Failure{Status: status, Code: code, Message: message})
}

// refuser is the door of Refuse: refusals are not logged.
var refuser = newDoor(nil)

// newDoor is the API's front door. A nil logger discards.
func newDoor(logger *slog.Logger) *frontdoor.Door {
	return &frontdoor.Door{
		Name:   "scheduler",
		Log:    logger,
		Shape:  frontdoor.RESTJSON{},
		Limit:  MaxBodySize,
		Answer: answer,
		Internal: func(reqID string) frontdoor.Failure {
			return frontdoor.Failure{Status: http.StatusInternalServerError, Code: "InternalServerException",
				Message: "An internal error occurred (request " + reqID + ")"}
		},
		TooLarge: func(limit int64) error {
			return validationError("The request body is larger than %d bytes.", limit)
		},
		Unreadable: func(err error) error { return validationError("Could not read the request body: %v", err) },
		Attrs:      func(r *http.Request) []any { return []any{"method", r.Method, "path", r.URL.Path} },
	}
}

// answer is the failure of an API error (*scheduler.Error). Any other
// error is an internal failure.
func answer(err error) (frontdoor.Failure, bool) {
	var e *scheduler.Error
	if !errors.As(err, &e) {
		return frontdoor.Failure{}, false
	}
	return frontdoor.Failure{Status: e.Status, Code: e.Code, Message: e.Message}, true
}

// validationError is a ValidationException of the wire's own checks.
func validationError(format string, args ...any) error {
	return &scheduler.Error{Code: "ValidationException", Status: http.StatusBadRequest, Message: fmt.Sprintf(format, args...)}
}

// operation answers one request: the output to write, or the error.
type operation func(r *http.Request, body []byte) (any, error)

// serve is the route of op: the body read through the door, the output
// written as JSON, an error in the API's shape.
func (h *Handler) serve(op operation) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, err := h.door.ReadBody(r)
		var out any
		if err == nil {
			out, err = op(r, body)
		}
		if err == nil {
			err = frontdoor.WriteJSON(w, http.StatusOK, frontdoor.ContentTypeRESTJSON, out)
		}
		if err != nil {
			h.door.Fail(w, r, err)
		}
	}
}

func (h *Handler) routes() {
	m := http.NewServeMux()
	handle := func(pattern string, op operation) {
		m.HandleFunc(pattern, h.serve(op))
		h.patterns = append(h.patterns, pattern)
	}
	s := h.svc
	handle("POST /schedules/{name}", func(r *http.Request, body []byte) (any, error) {
		var in scheduler.Schedule
		if err := decodeBody(body, &in); err != nil {
			return nil, err
		}
		in.Name = r.PathValue("name")
		arn, err := s.CreateSchedule(r.Context(), &in)
		return map[string]string{"ScheduleArn": arn}, err
	})
	handle("PUT /schedules/{name}", func(r *http.Request, body []byte) (any, error) {
		var in scheduler.Schedule
		if err := decodeBody(body, &in); err != nil {
			return nil, err
		}
		in.Name = r.PathValue("name")
		arn, err := s.UpdateSchedule(r.Context(), &in)
		return map[string]string{"ScheduleArn": arn}, err
	})
	handle("GET /schedules/{name}", func(r *http.Request, _ []byte) (any, error) {
		return s.GetSchedule(r.Context(), r.URL.Query().Get("groupName"), r.PathValue("name"))
	})
	handle("DELETE /schedules/{name}", func(r *http.Request, _ []byte) (any, error) {
		return struct{}{}, s.DeleteSchedule(r.Context(), r.URL.Query().Get("groupName"), r.PathValue("name"))
	})
	// Stepwise's own: hold a schedule's next run (it is skipped), or
	// take the hold back.
	handle("POST /schedules/{name}/hold-next", func(r *http.Request, _ []byte) (any, error) {
		at, err := s.HoldNext(r.Context(), r.URL.Query().Get("groupName"), r.PathValue("name"))
		if err != nil {
			return nil, err
		}
		return map[string]any{"HeldRun": scheduler.Epoch{Time: at}}, nil
	})
	handle("DELETE /schedules/{name}/hold-next", func(r *http.Request, _ []byte) (any, error) {
		released, err := s.ReleaseHold(r.Context(), r.URL.Query().Get("groupName"), r.PathValue("name"))
		return map[string]bool{"Released": released}, err
	})
	// Stepwise's own: the file-arrival triggers.
	handle("POST /file-triggers/{name}", func(r *http.Request, body []byte) (any, error) {
		var in scheduler.FileTrigger
		if err := decodeBody(body, &in); err != nil {
			return nil, err
		}
		in.Name = r.PathValue("name")
		return struct{}{}, s.PutFileTrigger(r.Context(), &in)
	})
	handle("GET /file-triggers/{name}", func(r *http.Request, _ []byte) (any, error) {
		t, err := s.GetFileTrigger(r.Context(), r.PathValue("name"))
		if err != nil {
			return nil, err
		}
		files, err := s.ListFileArrivals(r.Context(), t.Name)
		if err != nil {
			return nil, err
		}
		return struct {
			*scheduler.FileTrigger
			Started []scheduler.FileArrival
		}{t, files}, nil
	})
	handle("GET /file-triggers", func(r *http.Request, _ []byte) (any, error) {
		ts, err := s.ListFileTriggers(r.Context())
		return map[string][]*scheduler.FileTrigger{"FileTriggers": ts}, err
	})
	handle("DELETE /file-triggers/{name}", func(r *http.Request, _ []byte) (any, error) {
		return struct{}{}, s.DeleteFileTrigger(r.Context(), r.PathValue("name"))
	})
	handle("GET /schedules", func(r *http.Request, _ []byte) (any, error) {
		q := r.URL.Query()
		max, err := queryInt(q.Get("MaxResults"))
		if err != nil {
			return nil, err
		}
		return s.ListSchedules(r.Context(), &scheduler.ListSchedulesInput{GroupName: q.Get("ScheduleGroup"), NamePrefix: q.Get("NamePrefix"),
			State: q.Get("State"), NextToken: q.Get("NextToken"), MaxResults: max})
	})
	handle("POST /schedule-groups/{name}", func(r *http.Request, body []byte) (any, error) {
		var in struct {
			ClientToken string
			Tags        []scheduler.Tag
		}
		if err := decodeBody(body, &in); err != nil {
			return nil, err
		}
		arn, err := s.CreateScheduleGroup(r.Context(), r.PathValue("name"), in.ClientToken, in.Tags)
		return map[string]string{"ScheduleGroupArn": arn}, err
	})
	handle("GET /schedule-groups/{name}", func(r *http.Request, _ []byte) (any, error) {
		return s.GetScheduleGroup(r.Context(), r.PathValue("name"))
	})
	handle("DELETE /schedule-groups/{name}", func(r *http.Request, _ []byte) (any, error) {
		return struct{}{}, s.DeleteScheduleGroup(r.Context(), r.PathValue("name"))
	})
	handle("GET /schedule-groups", func(r *http.Request, _ []byte) (any, error) {
		q := r.URL.Query()
		max, err := queryInt(q.Get("MaxResults"))
		if err != nil {
			return nil, err
		}
		return s.ListScheduleGroups(r.Context(), q.Get("NamePrefix"), q.Get("NextToken"), max)
	})
	handle("GET /tags/{arn...}", func(r *http.Request, _ []byte) (any, error) {
		tags, err := s.ListTagsForResource(r.Context(), r.PathValue("arn"))
		return map[string][]scheduler.Tag{"Tags": tags}, err
	})
	handle("POST /tags/{arn...}", func(r *http.Request, body []byte) (any, error) {
		var in struct{ Tags []scheduler.Tag }
		if err := decodeBody(body, &in); err != nil {
			return nil, err
		}
		if in.Tags == nil {
			return nil, validationError("1 validation error detected: Value null at 'tags' failed to satisfy constraint: Member must not be null")
		}
		return struct{}{}, s.TagResource(r.Context(), r.PathValue("arn"), in.Tags)
	})
	handle("DELETE /tags/{arn...}", func(r *http.Request, _ []byte) (any, error) {
		return struct{}{}, s.UntagResource(r.Context(), r.PathValue("arn"), r.URL.Query()["TagKeys"])
	})
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		h.door.Fail(w, r, &scheduler.Error{Code: "UnknownOperationException", Status: http.StatusNotFound,
			Message: "No operation matches " + r.Method + " " + r.URL.Path + "."})
	})
	h.mux = m
}

// decodeBody reads a request's JSON body into v; an empty body is an
// empty request.
func decodeBody(body []byte, v any) error {
	if len(strings.TrimSpace(string(body))) == 0 {
		return nil
	}
	if err := json.Unmarshal(body, v); err != nil {
		return validationError("Could not read the request body: %v", err)
	}
	return nil
}

func queryInt(s string) (int, error) {
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, validationError("MaxResults must be an integer: %q.", s)
	}
	return n, nil
}
