package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"stepwise/engine"
	"stepwise/engine/task"
	"stepwise/internal/security/authn"
)

// ClockPath is where a server shows its execution time and takes
// advances of it.
const ClockPath = "/stepwise/clock"

// ClockSigningName is the service a clock request is signed for when the
// server takes signed requests only: the Step Functions API's.
const ClockSigningName = authn.Service

// maxClockBody bounds a clock request.
const maxClockBody = 4096

// ClockRequest is an advance (stepwise clock advance): by a duration, or to a time.
type ClockRequest struct {
	Advance string `json:"advance,omitempty"`
	To      string `json:"to,omitempty"`
}

// ClockResponse is the server's answer: the clock's reading, or the
// error that refused the request.
type ClockResponse struct {
	Now     *time.Time `json:"now,omitempty"`
	Virtual bool       `json:"virtual"`
	Error   string     `json:"error,omitempty"`
}

// ParseAdvance reads an advance's duration: a positive Go duration.
func ParseAdvance(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration (24h, 90m, 1h30m)", s)
	}
	if d <= 0 {
		return 0, fmt.Errorf("%q: the clock only moves forward, by a positive duration", s)
	}
	return d, nil
}

// ParseClockTo reads an advance's goal: an RFC 3339 time.
func ParseClockTo(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not an RFC 3339 time (2026-12-01T02:00:00Z)", s)
	}
	return t, nil
}

// clockHandler serves GET and POST /stepwise/clock. With authentication
// on, a request is signed (for "states") or carries a console session.
type clockHandler struct {
	eng *engine.Engine
	// look has the schedules looked at before an advance, so that the
	// slots of one made a moment ago are armed.
	look func(ctx context.Context)
	auth interface {
		Authenticate(r *http.Request, body []byte) error
	}
}

// clockRoutes are the routes of the clock: gate, when set, authenticates
// them; look looks at the schedules.
func clockRoutes(eng *engine.Engine, gate *authn.Gate, look func(ctx context.Context)) []route {
	h := &clockHandler{eng: eng, look: look}
	if gate != nil {
		h.auth = gate.ForService(ClockSigningName)
	}
	return []route{
		{pattern: "GET " + ClockPath, handler: http.HandlerFunc(h.read)},
		{pattern: "POST " + ClockPath, handler: http.HandlerFunc(h.advance), refuse: func(w http.ResponseWriter, r *http.Request, message string) {
			writeClock(w, http.StatusForbidden, &ClockResponse{Error: message})
		}},
	}
}

func (h *clockHandler) read(w http.ResponseWriter, r *http.Request) {
	if !h.authenticated(w, r, nil) {
		return
	}
	h.answer(w, http.StatusOK, "")
}

func (h *clockHandler) advance(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxClockBody))
	if err != nil {
		writeClock(w, http.StatusRequestEntityTooLarge, &ClockResponse{Error: fmt.Sprintf("a clock request is at most %d bytes", maxClockBody)})
		return
	}
	if !h.authenticated(w, r, body) {
		return
	}
	var req ClockRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		h.answer(w, http.StatusBadRequest, `a clock request is JSON, {"advance": "24h"} or {"to": "2026-12-01T02:00:00Z"}: `+err.Error())
		return
	}
	var (
		to time.Time
		by time.Duration
	)
	switch {
	case (req.Advance == "") == (req.To == ""):
		h.answer(w, http.StatusBadRequest, `a clock request names one of "advance" (a duration: 24h) and "to" (a time: 2026-12-01T02:00:00Z)`)
		return
	case req.Advance != "":
		if by, err = ParseAdvance(req.Advance); err != nil {
			h.answer(w, http.StatusBadRequest, "advance: "+err.Error())
			return
		}
	default:
		if to, err = ParseClockTo(req.To); err != nil {
			h.answer(w, http.StatusBadRequest, "to: "+err.Error())
			return
		}
	}
	if h.look != nil && h.eng.VirtualClock() {
		h.look(r.Context())
	}
	if by > 0 {
		// From the reading once the advances before it are over.
		_, err = h.eng.AdvanceClockBy(r.Context(), by)
	} else {
		_, err = h.eng.AdvanceClock(r.Context(), to)
	}
	var back *engine.ClockBackError
	switch {
	case err == nil:
		h.answer(w, http.StatusOK, "")
	case errors.Is(err, engine.ErrRealClock), errors.Is(err, engine.ErrClusterClock):
		h.answer(w, http.StatusConflict, err.Error())
	case errors.As(err, &back):
		h.answer(w, http.StatusBadRequest, err.Error())
	case errors.Is(err, task.ErrStopped):
		h.answer(w, http.StatusServiceUnavailable, "the server is stopping")
	case r.Context().Err() != nil:
		// The client left: the clock stays where the advance got to.
	default:
		h.answer(w, http.StatusInternalServerError, err.Error())
	}
}

// authenticated checks a request when the server authenticates, and
// answers it when it fails.
func (h *clockHandler) authenticated(w http.ResponseWriter, r *http.Request, body []byte) bool {
	if h.auth == nil {
		return true
	}
	if err := h.auth.Authenticate(r, body); err != nil {
		writeClock(w, http.StatusForbidden, &ClockResponse{Error: "clock: " + err.Error()})
		return false
	}
	return true
}

// answer writes the clock's reading, with msg as the error when set.
func (h *clockHandler) answer(w http.ResponseWriter, status int, msg string) {
	now := h.eng.Now()
	writeClock(w, status, &ClockResponse{Now: &now, Virtual: h.eng.VirtualClock(), Error: msg})
}

func writeClock(w http.ResponseWriter, status int, resp *ClockResponse) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(resp)
}
