// Package api serves the routes of the deployed stacks' APIs (API
// Gateway's REST and HTTP APIs) on one local HTTP listener, as `sam
// local start-api` does: a route's Lambda proxy integration invokes its
// local function with the event of payload format 1.0 (REST) or 2.0
// (HTTP), and maps its answer back; a Step Functions integration starts
// an execution (StartExecution, StartSyncExecution) and answers with
// the operation's output.
//
// The listener opens at the first route (wiring.Env's APIAddr,
// 127.0.0.1:3000 by default) and serves until the server stops.
package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"stepwise/wiring"
)

// DefaultAddr is where the routes are served unless told otherwise, as
// sam local start-api.
const DefaultAddr = "127.0.0.1:3000"

// maxBody is the largest request body, API Gateway's payload limit.
const maxBody = 10 << 20

func init() { wiring.Register("api", newKind) }

// kind serves every route of the kind's wires.
type kind struct {
	env *wiring.Env
	srv *http.Server
	ln  net.Listener

	mu      sync.RWMutex
	entries []*entry
}

// entry is a served route.
type entry struct {
	wire  wiring.Wire
	route Route
	tmpl  template
}

func newKind(env *wiring.Env) (wiring.Kind, error) {
	addr := env.APIAddr
	if addr == "" {
		addr = DefaultAddr
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("APIs are not served: %w (serve --api-addr sets the address)", err)
	}
	k := &kind{env: env, ln: ln}
	k.srv = &http.Server{Handler: k, ReadHeaderTimeout: 10 * time.Second, MaxHeaderBytes: 10240}
	go k.srv.Serve(ln)
	if env.Log != nil {
		env.Log.Info("serving APIs", "addr", ln.Addr().String())
	}
	return k, nil
}

// Add serves w's route, unless another wire serves the same one.
func (k *kind) Add(_ context.Context, w wiring.Wire) (func(), error) {
	var r Route
	if err := json.Unmarshal(w.Source, &r); err != nil {
		return nil, fmt.Errorf("route: %w", err)
	}
	if err := r.check(); err != nil {
		return nil, err
	}
	e := &entry{wire: w, route: r}
	if r.Template != "" {
		e.tmpl, _ = parseTemplate(r.Template) // checked
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, o := range k.entries {
		if o.route.Key() == r.Key() && o.route.Stage == r.Stage {
			return nil, fmt.Errorf("route %s of stage %s is already served by %s/%s", r.Key(), r.Stage, o.wire.Stack, o.wire.ID)
		}
	}
	k.entries = append(k.entries, e)
	return func() {
		k.mu.Lock()
		defer k.mu.Unlock()
		k.entries = slices.DeleteFunc(k.entries, func(o *entry) bool { return o == e })
	}, nil
}

// Close stops serving.
func (k *kind) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = k.srv.Shutdown(ctx)
}

func (k *kind) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	k.mu.RLock()
	f := find(k.entries, r.Method, r.URL.Path)
	k.mu.RUnlock()
	if f == nil {
		// API Gateway's answer to a path and method no route has
		writeJSON(w, http.StatusForbidden, map[string]string{"message": "Missing Authentication Token"})
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"message": "Bad request: " + err.Error()})
		return
	}
	if len(body) > maxBody {
		writeJSON(w, http.StatusRequestEntityTooLarge, map[string]string{"message": "Request Too Long"})
		return
	}
	in := &incoming{r: r, body: body, found: f, id: newRequestID(), at: time.Now()}
	var out *response
	switch f.entry.route.Integration {
	case Lambda:
		out, err = k.proxy(r.Context(), in)
	case States:
		out, err = k.states(r.Context(), in)
	}
	k.env.Delivered(f.entry.wire, 1, err)
	if err != nil {
		if k.env.Log != nil {
			k.env.Log.Warn("API route failed", "route", f.entry.route.Key(), "wire", f.entry.wire.ID, "error", err)
		}
		var bad *BadBodyError
		if errors.As(err, &bad) {
			writeJSON(w, http.StatusBadRequest, map[string]string{"message": bad.Error()})
			return
		}
		// API Gateway's answer to a failed or malformed integration
		writeJSON(w, http.StatusBadGateway, map[string]string{"message": "Internal server error"})
		return
	}
	out.write(w)
}

// proxy is a Lambda proxy integration: the event of the route's payload
// format to the function, its answer mapped back.
func (k *kind) proxy(ctx context.Context, in *incoming) (*response, error) {
	route := &in.found.entry.route
	var event any
	if route.PayloadFormat == "2.0" {
		event = in.eventV2(k.env)
	} else {
		event = in.eventV1(k.env)
	}
	payload, err := json.Marshal(event)
	if err != nil {
		return nil, err
	}
	result, err := k.env.Deliver(ctx, in.found.entry.wire.Target, payload)
	if err != nil {
		return nil, err
	}
	if route.PayloadFormat == "2.0" {
		return responseV2(result)
	}
	return responseV1(result)
}

// states is a Step Functions integration: the action's input made by
// the route's template or request parameters, its output the answer.
func (k *kind) states(ctx context.Context, in *incoming) (*response, error) {
	route := &in.found.entry.route
	var input []byte
	if route.Template != "" {
		s, err := in.found.entry.tmpl.render(in.templateRequest(k.env))
		if err != nil {
			return nil, err
		}
		input = []byte(s)
	} else {
		m, err := in.parameters(route.Parameters)
		if err != nil {
			return nil, err
		}
		if input, err = json.Marshal(m); err != nil {
			return nil, err
		}
	}
	if k.env.Call == nil {
		return nil, errors.New("executions are not started here")
	}
	out, err := k.env.Call(ctx, route.Action, input)
	if err != nil {
		return apiError(err), nil
	}
	return &response{status: http.StatusOK, header: http.Header{"Content-Type": {"application/json"}}, body: out}, nil
}

// apiError is the answer of a Step Functions error: its status, and
// {"__type", "message"} as the Step Functions API answers.
func apiError(err error) *response {
	status := http.StatusBadRequest
	var hs interface{ HTTPStatus() int }
	if errors.As(err, &hs) {
		status = hs.HTTPStatus()
	}
	typ, msg := "", err.Error()
	if i := strings.Index(msg, ": "); i > 0 {
		typ, msg = msg[:i], msg[i+2:]
	}
	b, _ := json.Marshal(map[string]string{"__type": typ, "message": msg})
	return &response{status: status, header: http.Header{"Content-Type": {"application/json"}}, body: b}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}
