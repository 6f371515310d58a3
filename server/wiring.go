package server

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	lambdasdk "github.com/aws/aws-sdk-go-v2/service/lambda"

	"stepwise/awsjson"
	"stepwise/console"
	"stepwise/deploy"
	"stepwise/integration"
	"stepwise/internal/frontdoor"
	"stepwise/store"
	"stepwise/wiring"
	"stepwise/wiring/api" // APIs' routes
	"stepwise/wiring/bus"
	_ "stepwise/wiring/queue" // sqs, sns, s3, s3-eventbridge
)

// buildWiring makes the host of the deployed stacks' event sources: a
// function's queue, a rule's targets, an API's routes. Its kinds reach
// the server through wiring.Env: the local functions, the API in
// process, the AWS endpoints.
func (s *Server) buildWiring() {
	ic := integration.Config{Region: s.cfg.Region, Account: s.cfg.Account,
		Endpoint: s.cfg.Integrations.AWSEndpoint, Endpoints: s.cfg.Integrations.Endpoints}
	env := &wiring.Env{
		Call:   s.selfCall,
		Region: s.cfg.Region, Account: s.cfg.Account, APIAddr: s.cfg.APIAddr,
		Log: s.log.With("component", "wiring"),
		AWS: func(ctx context.Context, service string) (aws.Config, error) {
			cfg, endpoint, err := ic.AWSConfig(ctx, service)
			if err != nil {
				return aws.Config{}, err
			}
			if endpoint == "" {
				return aws.Config{}, fmt.Errorf("no endpoint is given for %s (serve --aws-endpoint or --endpoint %s=URL)", service, service)
			}
			cfg.BaseEndpoint = aws.String(endpoint)
			return cfg, nil
		},
	}
	if s.local != nil {
		env.Invoke = s.invokeLocal
	}
	// AWS services' events (a bucket's, through EventBridge) go on the
	// local bus as they are.
	env.PutEvent = func(_ context.Context, name string, event []byte) error {
		b, err := s.localBus()
		if err != nil {
			return err
		}
		return b.PutEvent(name, event)
	}
	s.wenv = env
	s.wiring = wiring.NewHost(env)
	s.dep.Wiring = s.wiring
	s.dep.APIAddr = s.cfg.APIAddr
	// Schedules that target an event bus put their events on the local
	// one, where the deployed rules are.
	s.SetBusDelivery(func(_ context.Context, e *BusEvent) error {
		b, err := s.localBus()
		if err != nil {
			return err
		}
		b.Put([]bus.Entry{{Source: e.Source, DetailType: e.DetailType, Detail: e.Detail, EventBusName: e.Bus, Resources: e.Resources}}, nil)
		return nil
	})
	if b, err := s.localBus(); err == nil {
		b.SetSelf(s.isSelf)
		if s.tasks != nil {
			s.tasks.SetLocalEvents(s.putLocalEvents(b, ic.EndpointFor("events")))
		}
	}
}

// putLocalEvents is the events:putEvents Task's way onto the local bus.
// When the Task's endpoint for "events" is this server, its call put the
// events on the bus already: they are not put twice.
func (s *Server) putLocalEvents(b *bus.Bus, endpoint string) integration.PutLocalEvents {
	return func(_ context.Context, entries []integration.Event, ids []string) ([]integration.EventResult, error) {
		if endpoint != "" && s.isSelf(endpoint) {
			return nil, nil
		}
		in := make([]bus.Entry, len(entries))
		for i, e := range entries {
			in[i] = bus.Entry{Source: e.Source, DetailType: e.DetailType, Detail: e.Detail,
				EventBusName: e.EventBusName, Resources: e.Resources, Time: e.Time}
		}
		out := b.Take(in, ids)
		res := make([]integration.EventResult, len(out.Entries))
		for i, r := range out.Entries {
			res[i] = integration.EventResult{EventID: r.EventID, ErrorCode: r.ErrorCode, ErrorMessage: r.ErrorMessage}
		}
		return res, nil
	}
}

// isSelf says whether an endpoint URL is this server's: the same port,
// on the address it listens on or, when it listens on a loopback or
// every address, on a loopback one (localhost, 127.0.0.1, ::1).
func (s *Server) isSelf(endpoint string) bool {
	addr, ok := s.Addr().(*net.TCPAddr)
	if !ok || addr == nil {
		return false
	}
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return false
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	if port != strconv.Itoa(addr.Port) {
		return false
	}
	host := u.Hostname()
	if host == "localhost" {
		return addr.IP.IsLoopback() || addr.IP.IsUnspecified()
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return false
	}
	return ip.Equal(addr.IP) || ip.IsLoopback() && (addr.IP.IsLoopback() || addr.IP.IsUnspecified())
}

// localAPI is the base URL of the API listener when it serves the API
// of id (a route of it runs), for apigateway:invoke.
func (s *Server) localAPI(id string) (string, bool) {
	if s.wiring == nil || id == "" {
		return "", false
	}
	for _, w := range s.wiring.Wires() {
		if w.Kind == "api" && w.Running && api.IDOf(w.Wire) == id {
			return "http://" + cmp.Or(s.cfg.APIAddr, api.DefaultAddr), true
		}
	}
	return "", false
}

// invokeLocal invokes a local function as Lambda's event sources do.
func (s *Server) invokeLocal(ctx context.Context, name string, payload []byte) ([]byte, bool, error) {
	fn := s.local.Lookup(name)
	if fn == nil {
		return nil, false, fmt.Errorf("function %s is not deployed here", name)
	}
	out, err := fn.Invoke(ctx, &lambdasdk.InvokeInput{FunctionName: aws.String(name), Payload: payload})
	if err != nil {
		return nil, false, err
	}
	return out.Payload, out.FunctionError != nil, nil
}

// restoreWires starts again the event sources of the stacks deployed
// before, once the service runs (they start executions).
func restoreWires(ctx context.Context, records store.StackStore, host *wiring.Host) error {
	d := &deploy.Deployer{Records: stackRecords{records}, Wiring: host}
	return d.Restore(ctx)
}

// Wiring is the host of the deployed stacks' event sources.
func (s *Server) Wiring() *wiring.Host { return s.wiring }

// eventSourceViews is the console's event sources' page.
func (s *Server) eventSourceViews(context.Context) []console.EventSource {
	if s.wiring == nil {
		return nil
	}
	list := s.wiring.Wires()
	out := make([]console.EventSource, len(list))
	for i, w := range list {
		src := string(w.Source)
		if len(src) > 300 {
			src = src[:300] + "…"
		}
		out[i] = console.EventSource{Stack: w.Stack, ID: w.ID, Kind: w.Kind, Source: src,
			TargetType: w.Target.Type, Target: w.Target.ARN, Running: w.Running, Problem: w.Problem,
			Delivered: w.Delivered, LastError: w.LastError}
		if !w.LastDelivery.IsZero() {
			at := w.LastDelivery
			out[i].LastDelivery = &at
		}
	}
	return out
}

// withEvents is api, but for EventBridge's operations (X-Amz-Target:
// AWSEvents.*), which the local bus of the deployed rules answers
// (PutEvents), signed for "events" when the server takes signatures.
func (s *Server) withEvents(api http.Handler, auth awsjson.Authenticator, log *slog.Logger) http.Handler {
	var events http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if body, err := eventsBodyDoor.ReadBody(r); err == nil {
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		b, err := s.localBus()
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		b.ServeHTTP(w, r)
	})
	if auth != nil {
		events = awsjson.RequireAuth(events, auth, log)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if bus.IsEventsRequest(r) {
			events.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	})
}

// eventsBodyDoor reads a PutEvents body, or gives the one the
// authentication read.
var eventsBodyDoor = &frontdoor.Door{Limit: bus.MaxRequestSize,
	TooLarge:   func(int64) error { return errors.New("too large") },
	Unreadable: func(err error) error { return err }}

// localBus is the local event bus of the deployed rules.
func (s *Server) localBus() (*bus.Bus, error) {
	if s.wiring == nil {
		return nil, errors.New("event sources are not run by this server")
	}
	k, err := s.wiring.Kind(bus.Kind)
	if err != nil {
		return nil, err
	}
	b, ok := k.(*bus.Bus)
	if !ok {
		return nil, fmt.Errorf("the kind %s is not the local event bus", bus.Kind)
	}
	return b, nil
}
