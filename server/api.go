package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"stepwise/asl"
	"stepwise/awsjson"
	"stepwise/config"
	"stepwise/console"
	"stepwise/engine"
	"stepwise/integration"
	"stepwise/integration/awssdk"
	sqsint "stepwise/integration/sqs"
	"stepwise/integration/standard"
	"stepwise/internal/defcache"
	"stepwise/internal/security/authn"
	"stepwise/internal/security/crossorigin"
	"stepwise/internal/security/hostcheck"
	"stepwise/internal/security/quota"
	"stepwise/observe/metrics"
	"stepwise/scheduler"
	"stepwise/scheduler/restjson"
	"stepwise/service"
	"stepwise/service/teststate"
	"stepwise/sfnapi"
)

// buildAPI builds the HTTP side over the engine: the Step Functions
// service (with TestState), the Scheduler API, the console, the probes
// and /metrics, behind authentication when the server has credentials.
func (s *Server) buildAPI(ctx context.Context, defs *defcache.Cache) error {
	cfg, log := &s.cfg, s.log
	svcCfg := service.Config{
		Region:       cfg.Region,
		Account:      cfg.Account,
		PayloadLimit: cfg.PayloadLimit,
		Definitions:  defs,
	}
	if s.opts.mocks != nil {
		svcCfg.TestCase = s.opts.mocks.HasTestCase
	}
	svcCfg.KnowsResource = awssdk.KnowsResource
	svcCfg.OnDefinition = func(arn string, m *asl.StateMachine) {
		for _, u := range integration.UnservedTasks(m) {
			attrs := []any{"state_machine_arn", arn, "location", u.Location, "resource", u.Resource, "consequence", u.Consequence()}
			if u.Why != "" {
				attrs = append(attrs, "why", u.Why)
			}
			log.Warn("no integration runs a Task state's resource", attrs...)
		}
	}
	// The execution logs' writer, then the tracer, learn each revision's
	// settings as it is stored.
	s.logs.service(&svcCfg)
	tracerHook(s.tracer)(&svcCfg)
	svc, err := service.New(s.drv, s.eng, svcCfg)
	if err != nil {
		return err
	}
	s.svc = svc
	tsCfg := teststate.Config{Region: cfg.Region, Account: cfg.Account, PayloadLimit: cfg.PayloadLimit}
	if tasks := s.tasks; tasks != nil {
		// A Task state tested without a mock calls its resource for real.
		tsCfg.Invoke = func(ctx context.Context, call *teststate.Call) (any, error) {
			if call.TimeoutSeconds > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, time.Duration(call.TimeoutSeconds)*time.Second)
				defer cancel()
			}
			return tasks.Invoke(ctx, call.Resource, call.Parameters)
		}
	}
	svc.TestState = teststate.New(tsCfg).TestState
	calendars, err := scheduler.LoadCalendars(cfg.Calendars)
	if err != nil {
		return err
	}
	eng := s.eng
	sched := scheduler.New(s.drv.Executor(), scheduler.Config{Region: cfg.Region, Account: cfg.Account, Logger: log, Now: eng.Now, Calendars: calendars,
		FileTriggerRoots: cfg.FileTriggerRoots, Objects: bucketObjects(cfg)})
	s.sched = sched
	schedView := consoleSchedules{sched: sched}
	con, err := console.NewWith(svc, console.Options{Logger: log, SignIn: s.creds != nil, Prices: cfg.Prices, Now: eng.Now,
		Schedules: schedView.list, Scheduler: schedView, EventSources: s.eventSourceViews, Planned: schedView.planned,
		FileTriggers: schedView.fileTriggers})
	if err != nil {
		return err
	}
	s.console = con
	// The probes and /metrics are more specific than the console's
	// "GET /", so never shadowed by it.
	routes := []route{
		{pattern: "GET /health", handler: healthHandler(eng)},
		{pattern: "GET /healthz", handler: livenessHandler()},
	}
	var ping func(context.Context) error
	if p, ok := s.drv.(interface{ Ping(context.Context) error }); ok {
		ping = cachedPing(p.Ping, time.Second)
	}
	routes = append(routes, route{pattern: "GET /readyz", handler: readinessHandler(eng.Resumed(), eng.Health, ping)})
	met := s.met
	if met != nil {
		routes = append(routes, route{pattern: "GET /metrics", handler: met.Handler()})
	}
	plain := awsjson.NewWith(svc, awsjson.Options{Logger: log, Quotas: s.quotas})
	metered := func(h http.Handler) http.Handler {
		if met != nil {
			return met.API(h)
		}
		return h
	}
	s.self = metered(plain)
	s.calls = awsjson.NewAPI(svc, awsjson.Options{Logger: log, Quotas: s.quotas})
	s.selfCall = s.calls.Call
	if met != nil { // the server's own calls count as a client's do
		s.selfCall = func(ctx context.Context, op string, body []byte) ([]byte, error) {
			out, err := s.calls.Call(ctx, op, body)
			met.APICall(op, awsjson.StatusOf(err))
			return out, err
		}
	}
	s.starts = scheduleStarter(svc, s.quotas, met)
	s.deadLetters = sqsint.NewQueues(standard.Config(cfg, log))
	s.scheduleAPI = restjson.New(sched, log)
	var schedules http.Handler = s.scheduleAPI
	if s.creds == nil {
		routes = append(routes,
			route{pattern: "GET /", handler: con},
			route{pattern: "POST /schedule-list/", handler: sameOrigin(con), refuse: refusePlain},
			route{pattern: "/", handler: s.withEvents(s.self, nil, log), refuse: refuseAPI})
	} else {
		// The key of session cookies lives with the data, as the task
		// tokens' does: sessions outlive a restart.
		key, err := metaKey(ctx, s.drv.Executor(), "console-session-key")
		if err != nil {
			return fmt.Errorf("session key: %w", err)
		}
		s.gate, err = authn.New(authn.Config{Credentials: s.creds, SessionKey: key, SignInPage: con.SignIn, Logger: log})
		if err != nil {
			return err
		}
		// The console's assets are public; its pages and their JSON take a
		// session (or a signature); the API takes a signature (or, from the
		// console's own page, a session).
		schedules = restjson.RequireAuth(s.scheduleAPI, s.gate.ForService("scheduler"))
		routes = append(routes,
			route{pattern: "GET /static/", handler: con},
			route{pattern: "GET " + authn.SignInPath, handler: s.gate.SignInPage()},
			route{pattern: "POST " + authn.SignInPath, handler: s.gate.SignIn(), refuse: refusePlain},
			route{pattern: "POST " + authn.SignOutPath, handler: s.gate.SignOut(), refuse: refusePlain},
			route{pattern: "GET /", handler: s.gate.Console(con)},
			route{pattern: "POST /schedule-list/", handler: sameOrigin(s.gate.Console(con)), refuse: refusePlain},
			route{pattern: "/", handler: s.withEvents(metered(awsjson.RequireAuth(plain, s.gate, log)), s.gate.ForService("events"), log), refuse: refuseAPI})
	}
	routes = append(routes, clockRoutes(eng, s.gate, sched.Look)...)
	s.mux = http.NewServeMux()
	for _, rt := range routes {
		s.mux.Handle(rt.pattern, rt.handler)
	}
	s.routes = routes
	s.handler = crossorigin.Guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if restjson.HandlesPath(r.URL.Path) {
			schedules.ServeHTTP(w, r)
			return
		}
		s.mux.ServeHTTP(w, r)
	}), func(w http.ResponseWriter, r *http.Request) { s.refuse(w, r, crossorigin.Message) })
	if s.creds == nil {
		// Without authentication, the server answers only its own names
		// (DNS rebinding); with it, a request is signed or carries a
		// session, which a page of another name cannot have.
		names, err := serverNames(cfg)
		if err != nil {
			return err
		}
		s.handler = hostcheck.Guard(s.handler, names, isProbe, s.refuse)
	}
	return nil
}

// serverNames are the names a server without authentication answers
// besides localhost and IP addresses: its --addr host and the
// --allowed-host names, and in a container the names without a dot.
func serverNames(cfg *config.Serve) (*hostcheck.Names, error) {
	names := slices.Clone(cfg.AllowedHosts)
	if host, _, err := net.SplitHostPort(cfg.Addr); err == nil && host != "" {
		if _, err := hostcheck.ParseName(host); err == nil {
			names = append(names, host)
		}
	}
	n, err := hostcheck.NewNames(names...)
	if err == nil && cfg.Container {
		n.AllowSingleLabel()
	}
	return n, err
}

// probePaths are the probes' paths: answered whatever a request's Host,
// as they are without a signature, since they show nothing but the
// server's health and change nothing, and monitors (a load balancer, a
// Kubernetes probe) name the server as they please. /metrics is not one:
// it names state machines, activities and functions, and Prometheus
// scrapes by address, which the Host check answers.
var probePaths = map[string]bool{"/healthz": true, "/readyz": true, "/health": true}

// isProbe reports whether r reads a probe.
func isProbe(r *http.Request) bool {
	return (r.Method == http.MethodGet || r.Method == http.MethodHead) && probePaths[r.URL.Path]
}

// route is one of the routes of the server's mux.
type route struct {
	// pattern is the http.ServeMux pattern.
	pattern string
	handler http.Handler
	// refuse answers, in the words of the route's protocol, a request
	// the cross-origin guard or the Host check refuses, with message:
	// set on every route that takes a method other than GET and HEAD
	// (the others' refusal is plain text, refusePlain).
	refuse func(w http.ResponseWriter, r *http.Request, message string)
}

// refuse answers a request refused before it reached its route (the
// cross-origin guard, the Host check) with 403 and message, as the route
// that would have served it words its errors.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, message string) {
	if restjson.HandlesPath(r.URL.Path) {
		restjson.Refuse(w, http.StatusForbidden, codeAccessDenied, message)
		return
	}
	_, pattern := s.mux.Handler(r)
	for _, rt := range s.routes {
		if rt.pattern == pattern && rt.refuse != nil {
			rt.refuse(w, r, message)
			return
		}
	}
	refusePlain(w, r, message)
}

// codeAccessDenied is the error code of a refusal before the API, as AWS
// names a refusal to act.
const codeAccessDenied = "AccessDeniedException"

// refuseAPI refuses a request of the Step Functions API.
func refuseAPI(w http.ResponseWriter, r *http.Request, message string) {
	awsjson.Refuse(w, r, http.StatusForbidden, codeAccessDenied, message)
}

// sameOrigin lets through the console's forms that change something (a
// schedule's Enable and Disable) only when the browser says they come
// from the console's own page: a request that says nothing is refused
// too, so that a session cookie alone never acts.
func sameOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !crossorigin.SameOrigin(r) {
			w.Header().Set("Cache-Control", "no-store")
			http.Error(w, notFromConsole, http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// notFromConsole refuses a console form that does not say it comes from
// the console's page.
const notFromConsole = "The console's forms act only from the console's own page (its Origin or Sec-Fetch-Site: same-origin)"

// refusePlain refuses in plain text a console's page or form (sign-in,
// sign-out, a schedule's state).
func refusePlain(w http.ResponseWriter, r *http.Request, message string) {
	w.Header().Set("Cache-Control", "no-store")
	http.Error(w, message, http.StatusForbidden)
}

// The quotas hold back the engine's state transitions.
var _ engine.TransitionLimiter = (*quota.Quotas)(nil)

// newQuotas makes the token buckets of limits, counted in met when it is
// set; nil when there are none.
func newQuotas(limits map[string]quota.Limit, met *metrics.Metrics) *quota.Quotas {
	if len(limits) == 0 {
		return nil
	}
	q := quota.New(limits)
	if met != nil {
		q.OnThrottle = met.APIThrottled
		q.OnConsume = met.APIConsumed
		q.OnThrottled = met.ExecutionThrottled
	}
	return q
}

// healthHandler answers GET /health: 200 while the store takes the
// engine's commits, 503 with the cause while it does not (a full disk, an
// I/O error), for load balancers and monitors.
func healthHandler(eng *engine.Engine) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := eng.Health()
		type storeJSON struct {
			OK            bool       `json:"ok"`
			Since         *time.Time `json:"since,omitempty"`
			Error         string     `json:"error,omitempty"`
			FailedCommits int64      `json:"failedCommits"`
			Retrying      int64      `json:"retryingSteps"`
		}
		body := struct {
			Status string    `json:"status"`
			Store  storeJSON `json:"store"`
		}{Status: "ok", Store: storeJSON{OK: h.StoreOK, Error: h.Error, FailedCommits: h.FailedCommits, Retrying: h.Retrying}}
		status := http.StatusOK
		if !h.StoreOK {
			body.Status, status = "unavailable", http.StatusServiceUnavailable
			body.Store.Since = &h.Since
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(body)
	})
}

// livenessHandler answers GET /healthz: 200 while the process serves
// HTTP at all. It looks at nothing else, so a liveness probe never
// restarts a server that is only resuming or waiting for its disk.
func livenessHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeProbe(w, http.StatusOK, probeJSON{Status: "ok"})
	})
}

// readinessHandler answers GET /readyz: 200 once the engine has resumed
// the executions that were running at start (resumed is closed), while
// the store takes its commits and, for a database server (ping not nil),
// while it answers; 503 with the reason otherwise, so a load balancer
// sends no traffic before the server can serve it.
func readinessHandler(resumed <-chan struct{}, health func() engine.Health, ping func(context.Context) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-resumed:
		default:
			writeProbe(w, http.StatusServiceUnavailable, probeJSON{Status: "not ready", Reason: "resuming the executions that were running at start"})
			return
		}
		if h := health(); !h.StoreOK {
			writeProbe(w, http.StatusServiceUnavailable, probeJSON{Status: "not ready", Reason: "the store does not take writes: " + h.Error, Since: &h.Since})
			return
		}
		if ping != nil {
			if err := ping(r.Context()); err != nil {
				writeProbe(w, http.StatusServiceUnavailable, probeJSON{Status: "not ready", Reason: "the database does not answer: " + err.Error()})
				return
			}
		}
		writeProbe(w, http.StatusOK, probeJSON{Status: "ready"})
	})
}

// probeJSON is the body of /healthz and /readyz.
type probeJSON struct {
	Status string     `json:"status"`
	Reason string     `json:"reason,omitempty"`
	Since  *time.Time `json:"since,omitempty"`
}

func writeProbe(w http.ResponseWriter, status int, body probeJSON) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(body)
}

// cachedPing asks ping at most once per interval (2 s at most each
// time), so that probes do not load the database; callers in between get
// the last answer.
func cachedPing(ping func(context.Context) error, interval time.Duration) func(context.Context) error {
	var mu sync.Mutex
	var last time.Time
	var lastErr error
	return func(ctx context.Context) error {
		mu.Lock()
		defer mu.Unlock()
		if time.Since(last) < interval {
			return lastErr
		}
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		lastErr, last = ping(ctx), time.Now()
		return lastErr
	}
}

// scheduleStarter starts the schedules' executions: the service's
// StartExecution, in process, counted against its quota as the API's
// are (a start refused is ThrottlingException, retried as a slot's
// other refusals).
func scheduleStarter(svc *service.Service, quotas *quota.Quotas, met *metrics.Metrics) scheduler.StarterFunc {
	return func(ctx context.Context, r *scheduler.StartExecution) (err error) {
		if met != nil { // counted as a client's StartExecution is
			defer func() { met.APICall("StartExecution", awsjson.StatusOf(err)) }()
		}
		if ok, _ := quotas.Allow("StartExecution"); !ok {
			return sfnapi.NewError(sfnapi.CodeThrottling, "Rate exceeded")
		}
		_, err = svc.StartExecution(ctx, &service.StartExecutionInput{StateMachineArn: r.StateMachineArn,
			Name: r.Name, Input: r.Input, TraceHeader: r.TraceHeader})
		return err
	}
}

// startSchedules fires the schedules' slots (scheduler.Service.Start) until
// the returned function is called, which waits for the loop to end.
func (s *Server) startSchedules(ctx context.Context) (stop func()) {
	eng := s.eng
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := s.sched.Start(sctx, scheduler.FireConfig{Starter: s.starts, Targets: s.scheduleTargets(s.wenv), Now: eng.Now, Leads: eng.Leads, Ready: eng.Resumed(), Interval: scheduleInterval,
		Alarm: func(at time.Time, fire func(context.Context)) { eng.Alarm("scheduler", at, fire) },
		DeadLetter: func(ctx context.Context, m *scheduler.DeadLetter) error {
			attrs := make(map[string]sqstypes.MessageAttributeValue, len(m.Attributes))
			for _, a := range m.Attributes {
				attrs[a.Name] = sqstypes.MessageAttributeValue{DataType: aws.String(a.DataType), StringValue: aws.String(a.Value)}
			}
			return s.deadLetters.Send(ctx, m.QueueArn, m.Body, attrs)
		}})
	return func() { cancel(); <-done }
}

// scheduleInterval is the real time between two looks at the schedules.
var scheduleInterval = 500 * time.Millisecond
