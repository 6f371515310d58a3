package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"stepwise/engine"
	"stepwise/engine/task"
	"stepwise/internal/security/authn"
)

// clockPath is where a server shows its execution time and takes
// advances of it.
const clockPath = "/stepwise/clock"

// clockSigningName is the service a clock request is signed for when the
// server takes signed requests only: the Step Functions API's.
const clockSigningName = authn.Service

// maxClockBody bounds a clock request.
const maxClockBody = 4096

type clockCommand struct {
	*CommandBase
	endpoint string
	timeout  time.Duration
	to       string
}

func (c *clockCommand) command() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "clock",
		Short: "Show a server's execution time, or advance it (advance)",
		Long: `Show a running server's execution time: the clock its history timestamps,
Wait states, timeouts and schedules read. It is real time unless the server
runs with --time-skip or --wait-time-scale.

  stepwise clock --endpoint http://127.0.0.1:8083`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			resp, err := c.call(cmd.Context(), http.MethodGet, nil)
			if err != nil {
				return err
			}
			c.print(resp)
			return nil
		},
	}
	c.flags(cmd)
	advance := &cobra.Command{
		Use:   "advance [DURATION] [--to TIME]",
		Short: "Advance a server's virtual clock by DURATION, or to TIME",
		Long: `Advance the virtual clock of a server started with --time-skip or
--wait-time-scale by DURATION (a Go duration: 24h, 90m, 1h30m) or to TIME
(RFC 3339: 2026-12-01T02:00:00Z). On the way, the timers of running
executions (Wait states, retry back-offs, timeouts) and the schedules'
slots fire in the order of their times, each slot once, at its own time:
advancing past 02:00 runs a nightly schedule's night, and the execution
it starts has 02:00 as its start date. The command returns once the clock
is there and what fell due on the way has run (under --time-skip, and at a
--wait-time-scale above 0, the clock waits, as when it skips, for tasks that
wait on a worker, a callback or a service, running at its own rate
meanwhile). Advances take turns: a DURATION counts from where the one
before left the clock. The clock never goes back; real time is not advanced.

  stepwise clock advance 24h
  stepwise clock advance --to 2026-12-01T02:00:00Z --endpoint http://127.0.0.1:8083`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			req, err := c.advanceRequest(args)
			if err != nil {
				return err
			}
			resp, err := c.call(cmd.Context(), http.MethodPost, req)
			if err != nil {
				return err
			}
			c.print(resp)
			return nil
		},
	}
	c.flags(advance)
	advance.Flags().StringVar(&c.to, "to", "", "the time to advance to, in RFC 3339 (2026-12-01T02:00:00Z)")
	cmd.AddCommand(advance)
	return cmd
}

func (c *clockCommand) flags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&c.endpoint, "endpoint", "http://127.0.0.1:8083", "the server's URL")
	cmd.Flags().DurationVar(&c.timeout, "timeout", 10*time.Minute, "how long to wait for the server")
}

// advanceRequest is the request of `clock advance` ARGS --to.
func (c *clockCommand) advanceRequest(args []string) (*clockRequest, error) {
	switch {
	case len(args) == 1 && c.to != "":
		return nil, &UsageError{"clock advance: give a DURATION or --to TIME, not both"}
	case len(args) == 1:
		if _, err := parseAdvance(args[0]); err != nil {
			return nil, &UsageError{"clock advance: " + err.Error()}
		}
		return &clockRequest{Advance: args[0]}, nil
	case c.to != "":
		if _, err := parseClockTo(c.to); err != nil {
			return nil, &UsageError{"clock advance: --to: " + err.Error()}
		}
		return &clockRequest{To: c.to}, nil
	}
	return nil, &UsageError{"clock advance: give a DURATION (24h) or --to TIME (2026-12-01T02:00:00Z)"}
}

// call sends a clock request (nil for a GET) to the server, signed when
// the environment names AWS credentials (a server with --credentials
// takes only signed ones).
func (c *clockCommand) call(ctx context.Context, method string, req *clockRequest) (*clockResponse, error) {
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	var body []byte
	if req != nil {
		var err error
		if body, err = json.Marshal(req); err != nil {
			return nil, err
		}
	}
	url := strings.TrimSuffix(c.endpoint, "/") + clockPath
	hreq, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return nil, &UsageError{fmt.Sprintf("--endpoint %q: %v", c.endpoint, err)}
	}
	if req != nil {
		hreq.Header.Set("Content-Type", "application/json")
	}
	if os.Getenv("AWS_ACCESS_KEY_ID") != "" || os.Getenv("AWS_PROFILE") != "" {
		if err := signFor(ctx, clockSigningName, hreq, body); err != nil {
			return nil, err
		}
	}
	hresp, err := http.DefaultClient.Do(hreq)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s did not answer within --timeout %s", url, c.timeout)
		}
		return nil, fmt.Errorf("no server at %s (start one with `stepwise serve`): %w", c.endpoint, err)
	}
	defer hresp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(hresp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	var resp clockResponse
	if err := json.Unmarshal(data, &resp); err != nil || (resp.Now == nil && resp.Error == "") {
		return nil, fmt.Errorf("%s answered %s: %s", url, hresp.Status, strings.TrimSpace(string(data)))
	}
	if resp.Error != "" {
		return nil, errors.New(resp.Error)
	}
	return &resp, nil
}

// print writes the clock's reading, and whether it is virtual.
func (c *clockCommand) print(resp *clockResponse) {
	kind := "real time"
	if resp.Virtual {
		kind = "virtual"
	}
	fmt.Fprintf(c.Out, "%s (%s)\n", resp.Now.UTC().Format(time.RFC3339Nano), kind)
}

// clockRequest is an advance: by a duration, or to a time.
type clockRequest struct {
	Advance string `json:"advance,omitempty"`
	To      string `json:"to,omitempty"`
}

// clockResponse is the server's answer: the clock's reading, or the
// error that refused the request.
type clockResponse struct {
	Now     *time.Time `json:"now,omitempty"`
	Virtual bool       `json:"virtual"`
	Error   string     `json:"error,omitempty"`
}

// parseAdvance reads an advance's duration: a positive Go duration.
func parseAdvance(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration (24h, 90m, 1h30m)", s)
	}
	if d <= 0 {
		return 0, fmt.Errorf("%q: the clock only moves forward, by a positive duration", s)
	}
	return d, nil
}

// parseClockTo reads an advance's goal: an RFC 3339 time.
func parseClockTo(s string) (time.Time, error) {
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
		h.auth = gate.ForService(clockSigningName)
	}
	return []route{
		{pattern: "GET " + clockPath, handler: http.HandlerFunc(h.read)},
		{pattern: "POST " + clockPath, handler: http.HandlerFunc(h.advance), refuse: func(w http.ResponseWriter, r *http.Request, message string) {
			writeClock(w, http.StatusForbidden, &clockResponse{Error: message})
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
		writeClock(w, http.StatusRequestEntityTooLarge, &clockResponse{Error: fmt.Sprintf("a clock request is at most %d bytes", maxClockBody)})
		return
	}
	if !h.authenticated(w, r, body) {
		return
	}
	var req clockRequest
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
		if by, err = parseAdvance(req.Advance); err != nil {
			h.answer(w, http.StatusBadRequest, "advance: "+err.Error())
			return
		}
	default:
		if to, err = parseClockTo(req.To); err != nil {
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
		writeClock(w, http.StatusForbidden, &clockResponse{Error: "clock: " + err.Error()})
		return false
	}
	return true
}

// answer writes the clock's reading, with msg as the error when set.
func (h *clockHandler) answer(w http.ResponseWriter, status int, msg string) {
	now := h.eng.Now()
	writeClock(w, status, &clockResponse{Now: &now, Virtual: h.eng.VirtualClock(), Error: msg})
}

func writeClock(w http.ResponseWriter, status int, resp *clockResponse) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(resp)
}
