package server

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"stepwise/awsjson"
	"stepwise/config"
	"stepwise/console"
	"stepwise/deploy"
	"stepwise/engine"
	"stepwise/integration"
	"stepwise/integration/lambda"
	sqsint "stepwise/integration/sqs"
	"stepwise/integration/standard"
	"stepwise/internal/defcache"
	"stepwise/internal/retention"
	"stepwise/internal/security/authn"
	"stepwise/internal/security/certfile"
	"stepwise/internal/security/quota"
	"stepwise/internal/security/sigv4auth"
	"stepwise/observe/metrics"
	"stepwise/observe/notify"
	"stepwise/observe/tracing"
	"stepwise/scheduler"
	"stepwise/scheduler/restjson"
	"stepwise/service"
	"stepwise/store"
	"stepwise/wiring"
)

// Server is a whole Stepwise server: its store, engine, service,
// scheduler, console and observers, and the HTTP server in front of them.
// New assembles it, Start starts it, Serve serves until told to stop and
// Close releases everything.
type Server struct {
	cfg  config.Serve
	opts options
	log  *slog.Logger
	// node is the server's name among the servers of its database, where
	// says where its data is (for the start-up line).
	node, where string

	creds *sigv4auth.Credentials // nil: requests are not authenticated
	cert  *certfile.Holder       // nil: plain HTTP

	drv       store.Driver
	tasks     *integration.Registry // nil when WithTasks gave another runner
	local     *lambda.Local         // nil without local functions
	met       *metrics.Metrics      // nil: WithMetrics(false)
	logs      *serverLogs
	deliverer *notify.Deliverer // nil without WithEvents
	tracer    *tracing.Tracer   // nil without WithTracing
	quotas    *quota.Quotas
	eng       *engine.Engine
	svc       *service.Service
	sched     *scheduler.Service
	console   *console.Console
	// scheduleAPI serves the Scheduler's operations on the same port
	// (requests whose path restjson.HandlesPath says is its own).
	scheduleAPI *restjson.Handler
	dep         *deploy.Deployer
	// wiring delivers the deployed stacks' event sources (wiring.go);
	// wenv is its Env, through which schedules reach their targets too
	// (schedule_targets.go), bus a schedule's way to the event bus.
	wiring *wiring.Host
	wenv   *wiring.Env
	busMu  sync.Mutex
	bus    func(ctx context.Context, e *BusEvent) error

	// The HTTP side (api.go).
	// handler serves everything: the API, the console, the probes and
	// /metrics, behind the cross-origin guard.
	handler http.Handler
	// self is the API's HTTP handler without authentication.
	self http.Handler
	// calls is the API in process, without HTTP, for the server's own
	// Task states (aws-sdk:sfn); starts starts the schedules' executions.
	calls    *awsjson.API
	selfCall integration.SelfCall // calls, counted in the metrics
	starts   scheduler.Starter
	// gate authenticates, when the server has credentials.
	gate *authn.Gate
	// mux serves the requests that are not the Scheduler API's, by
	// routes.
	mux    *http.ServeMux
	routes []route
	// deadLetters sends the schedules' dead-letter events, to the SQS
	// endpoint the sendMessage Task uses.
	deadLetters *sqsint.Queues

	// Set by Start.
	started  bool
	ln       net.Listener
	http     *http.Server
	scheme   string
	served   chan error // the HTTP server's end
	shutdown bool       // the HTTP server was shut down

	// What Close stops, in the order it stops them (each nil when not
	// running).
	stopSchedules  func()
	stopLate       func()
	stopRetention  func()
	releaseInvokes func()
	engineStarted  bool
	stopTracer     func()
	stopDeliveries func()
	closeOnce      sync.Once
}

// New assembles a server from cfg and opts: it opens the store (unless
// WithStore), builds the task runners, the engine, the service, the
// scheduler, the console, the observers and the HTTP handler. Nothing
// runs until Start. On error, what was made is released.
func New(cfg config.Serve, opts ...Option) (_ *Server, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, &ConfigError{err}
	}
	s := &Server{cfg: cfg, opts: defaultOptions()}
	for _, opt := range opts {
		if err := opt(&s.opts); err != nil {
			return nil, err
		}
	}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	ctx := context.Background()
	s.log = s.opts.log
	if cfg.Credentials != "" {
		if s.creds, err = loadCredentials(cfg.Credentials, s.log); err != nil {
			return nil, err
		}
	}
	if cfg.TLSCert != "" {
		if s.cert, err = certfile.Load(cfg.TLSCert, cfg.TLSKey); err != nil {
			return nil, err
		}
	}
	s.node = nodeID(&s.cfg)
	if cfg.Postgres() {
		s.log = s.log.With("node", s.node)
	}
	if err := s.openStore(ctx); err != nil {
		return nil, err
	}
	if err := s.buildTasks(); err != nil {
		return nil, err
	}
	if s.opts.metrics {
		s.met = metrics.New()
		s.met.SetPrices(cfg.Prices)
		s.met.Node(s.node)
	}
	// Executions' logs are written until the engine has stopped.
	if s.logs, err = startLogs(ctx, &s.cfg, s.drv, s.met, s.log); err != nil {
		return nil, err
	}
	// The engine and the service share one cache of parsed definitions.
	defs := defcache.New(0)
	if err := s.buildEngine(ctx, defs); err != nil {
		return nil, err
	}
	if err := s.buildAPI(ctx, defs); err != nil {
		return nil, err
	}
	// The server's own Task states call the API in-process, unsigned.
	if s.tasks != nil {
		s.tasks.SetSelf(s.selfCall)
	}
	// Templates deploy onto it (stepwise deploy, WithDeployAtStart).
	s.dep = newDeployer(&s.cfg, s.svc, s.sched, s.drv.Executor(), s.local, s.log)
	s.buildWiring()
	if s.tasks != nil {
		s.tasks.SetLocalAPIs(s.localAPI)
	}
	s.handleDeploy(s.dep)
	return s, nil
}

// openStore opens the store, or takes the one WithStore gave.
func (s *Server) openStore(ctx context.Context) error {
	if s.opts.store != nil {
		s.drv, s.where = s.opts.store, "the store given to the server"
		return nil
	}
	drv, where, err := openStore(ctx, &s.cfg, s.log)
	if err != nil {
		return err
	}
	s.drv, s.where = drv, where
	return nil
}

// buildTasks makes the task runners: the built-in integrations, unless
// WithTasks gave others.
func (s *Server) buildTasks() error {
	if s.opts.tasks != nil {
		s.tasks, _ = s.opts.tasks.(*integration.Registry)
	} else {
		tasks, err := standard.ForServe(&s.cfg, s.log)
		if err != nil {
			return err
		}
		s.tasks = tasks
	}
	if s.tasks != nil {
		s.local = lambda.LocalOf(s.tasks)
	}
	if s.local != nil && s.opts.tasks == nil {
		// Before any invoke: what functions of a server that died left
		// running is killed, and this server's are recorded.
		killed, err := s.local.RecordGroups(s.cfg.FunctionGroupsDir())
		if err != nil {
			s.log.Warn("serve: the local functions' processes are not recorded", "error", err)
		}
		if killed > 0 {
			s.log.Info("serve: killed the local functions' processes a server that died left", "processes", killed)
		}
	}
	return nil
}

// buildEngine makes the engine and what observes it: the metrics, the
// execution logs, the status-change events and the traces.
func (s *Server) buildEngine(ctx context.Context, defs *defcache.Cache) error {
	// The key of task tokens lives with the data, so tokens handed out
	// before a restart still work after it.
	tokenKey, err := metaKey(ctx, s.drv.Executor(), "task-token-key")
	if err != nil {
		return fmt.Errorf("task token key: %w", err)
	}
	engCfg := engine.Config{
		Definitions:   defs,
		Region:        s.cfg.Region,
		Account:       s.cfg.Account,
		WaitTimeScale: s.cfg.WaitTimeScale,
		TimeSkip:      s.cfg.TimeSkip,
		PayloadLimit:  s.cfg.PayloadLimit,
		EvalLimits:    s.cfg.Eval.Budget(),
		TokenKey:      tokenKey,
		Logger:        s.log,
	}
	if s.opts.tasks != nil {
		engCfg.Tasks = s.opts.tasks
	} else {
		engCfg.Tasks = s.tasks
	}
	if s.cfg.Postgres() {
		engCfg.Cluster = &engine.ClusterConfig{Node: s.node, Lease: s.cfg.Lease}
	}
	// A virtual clock starts after every slot fired, even those fired
	// before the store kept the clock.
	engCfg.ClockFloor = func(ctx context.Context) (time.Time, error) { return lastFired(ctx, s.drv.Executor()) }
	if s.opts.mocks != nil {
		engCfg.Mocks = s.opts.mocks
	}
	var observers observers
	if s.met != nil {
		observers = append(observers, s.met)
	}
	// Of the servers sharing a database, one delivers the events: the
	// engine, made below, knows which.
	leads := func(ctx context.Context) bool { return s.eng != nil && s.eng.Leads(ctx) }
	if s.opts.events != nil {
		if s.deliverer, err = deliverer(ctx, *s.opts.events, &s.cfg, s.drv.Executor(), s.met, leads, s.log); err != nil {
			return &ConfigError{err}
		}
	}
	if s.deliverer != nil {
		engCfg.StatusNotice = notify.Notice
		observers = append(observers, nudger{s.deliverer})
	}
	observers = append(observers, s.logs.observers()...)
	// Traces are exported until the engine has stopped.
	if s.opts.tracing != nil {
		if s.tracer, s.stopTracer, err = startTracer(ctx, *s.opts.tracing, s.drv.Executor(), s.log); err != nil {
			return err
		}
	}
	wireTracer(s.tracer, &engCfg, &observers)
	if len(observers) > 0 {
		engCfg.Observer = observers
	}
	s.quotas = newQuotas(s.cfg.Quotas, s.met)
	if s.quotas.Transitions() {
		engCfg.Transitions = s.quotas
	}
	if s.eng, err = engine.New(s.drv, engCfg); err != nil {
		return err
	}
	if s.met != nil {
		s.met.WatchEngine(s.eng)
	}
	return nil
}

// metaKey is the 32-byte key named name kept with the data, made the
// first time it is asked for.
func metaKey(ctx context.Context, st store.MetaStore, name string) ([]byte, error) {
	fresh := make([]byte, 32)
	if _, err := rand.Read(fresh); err != nil {
		return nil, err
	}
	return st.MetaGetOrPut(ctx, name, fresh)
}

// Start starts the server's work: the status-change events' delivery,
// the engine (which resumes the executions that were running), the
// deletion of old executions, the deploys of WithDeployAtStart and the
// schedules. Handler then serves it all; Listen serves it on Addr. ctx
// bounds the start only: Close stops what it started.
func (s *Server) Start(ctx context.Context) error {
	if s.started {
		return errors.New("server: already started")
	}
	s.started = true
	if s.deliverer != nil {
		deliveries, stop := context.WithCancel(context.WithoutCancel(ctx))
		delivered := make(chan struct{})
		go func() { s.deliverer.Run(deliveries); close(delivered) }()
		s.stopDeliveries = func() { stop(); <-delivered }
	}
	// The functions of the stacks deployed before are back before an
	// execution resumes: a task re-dispatched after a restart invokes
	// the local function, never the Lambda API. Those deployed at start
	// deploy once the service is up: until then invokes wait.
	if err := restoreFunctions(ctx, s.drv.Executor(), s.local); err != nil {
		s.log.Warn("serve: a deployed stack's functions are not back", "error", err)
	}
	if s.opts.deployAtStart != nil && s.local != nil {
		s.releaseInvokes = s.local.Hold()
	}
	if err := s.eng.Start(ctx); err != nil {
		if s.releaseInvokes != nil {
			s.releaseInvokes()
		}
		return fmt.Errorf("start engine: %w", err)
	}
	s.engineStarted = true
	if s.cfg.Retention > 0 {
		stop, err := startRetention(ctx, &s.cfg, s.drv.Executor(), s.eng, s.met, s.log)
		if err != nil {
			return err
		}
		s.stopRetention = stop
	}
	if err := restoreWires(ctx, s.drv.Executor(), s.wiring); err != nil {
		s.log.Warn("serve: a deployed stack's event sources are not back", "error", err)
	}
	if s.opts.deployAtStart != nil {
		if err := s.opts.deployAtStart(ctx, s.dep); err != nil {
			return err
		}
	}
	if s.releaseInvokes != nil {
		s.releaseInvokes()
	}
	// Schedules fire on the leader, in execution time.
	s.stopSchedules = s.startSchedules(ctx)
	// Jobs running late are looked for on the leader too.
	s.stopLate = s.startLateJobs(ctx)
	return nil
}

// Listen listens on config.Serve's Addr and serves Handler there in the
// background, until Shutdown or Close; URL and Addr then say where.
// Without credentials, an address that is not a loopback one is refused
// unless config.Serve's Insecure or Container allows it.
func (s *Server) Listen() error {
	if s.ln != nil {
		return errors.New("server: already listening")
	}
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", s.cfg.Addr, err)
	}
	if s.creds == nil && !s.cfg.Insecure && !s.cfg.Container {
		// A name (checked only now) may stand for an address others
		// can reach.
		if a, ok := ln.Addr().(*net.TCPAddr); ok && !a.IP.IsLoopback() {
			ln.Close()
			return &ConfigError{config.NotLoopbackError(s.cfg.Addr)}
		}
	}
	srv := &http.Server{
		Handler:           requestLog(s.log, s.handler),
		ReadHeaderTimeout: s.cfg.ReadHeaderTimeout,
		// Bounds reading the header block and the body; the server lifts
		// the deadline once the body is read, so a long poll outlasts it.
		ReadTimeout:    s.cfg.ReadTimeout,
		IdleTimeout:    s.cfg.IdleTimeout,
		MaxHeaderBytes: s.cfg.MaxHeaderBytes,
		// Long polls look at their connection to see a client leave.
		ConnContext: awsjson.ConnContext,
		// No WriteTimeout: a GetActivityTask long poll answers after up
		// to a minute and StartSyncExecution when its execution ends.
	}
	ln = awsjson.Listener(ln, s.cfg.MaxHeaderBytes)
	// Long polls end at once on shutdown rather than holding it for up to
	// a minute.
	srv.RegisterOnShutdown(s.eng.ReleasePolls)
	s.scheme = "http"
	if s.cert != nil {
		s.scheme = "https"
		srv.TLSConfig = s.cert.Config()
		s.log.Info("serve: TLS", "certificate", s.cert.Describe(time.Now()))
	}
	if s.creds != nil {
		s.log.Info("serve: requests must be signed", "credentials", s.cfg.Credentials, "access_keys", s.creds.Len())
	}
	s.ln, s.http = ln, srv
	s.tellFunctions()
	s.served = make(chan error, 1)
	go func() {
		if s.cert != nil {
			s.served <- srv.ServeTLS(ln, "", "")
			return
		}
		s.served <- srv.Serve(ln)
	}()
	return nil
}

// Serve serves until ctx ends, then shuts down gracefully; it starts the
// server and listens first unless Start and Listen did. It returns nil
// after a graceful shutdown, and an error when the HTTP server fails or
// the server lost its lease on a shared database (another server may own
// its executions now: it stops at once). Close still releases the rest.
func (s *Server) Serve(ctx context.Context) error {
	if !s.started {
		if err := s.Start(ctx); err != nil {
			return err
		}
	}
	if s.ln == nil {
		if err := s.Listen(); err != nil {
			return err
		}
	}
	select {
	case err := <-s.served:
		return fmt.Errorf("serve: %w", err)
	case <-s.eng.Lost():
		s.eng.Halt()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.shutdown = true
		_ = s.http.Shutdown(shutdown)
		return fmt.Errorf("serve: this server lost its lease on the database: %w", s.eng.LostErr())
	case <-ctx.Done():
	}
	return s.Shutdown()
}

// Shutdown stops taking requests and lets those in flight finish (30 s at
// most); evaluations in flight are abandoned (their steps are not
// committed, and run again after a restart), so that no expression holds
// the shutdown up.
func (s *Server) Shutdown() error {
	if s.http == nil || s.shutdown {
		return nil
	}
	s.shutdown = true
	s.eng.Halt()
	shutdown, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.http.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

// Close shuts the server down (Shutdown, unless done) and releases all it
// holds, in turn: the schedules, the deletion of old executions, the
// engine (which lets steps in flight commit), the traces, the events'
// delivery, the execution logs, the task runners and the store. It is
// safe to call more than once.
func (s *Server) Close() error {
	var err error
	s.closeOnce.Do(func() {
		err = s.Shutdown()
		if s.wiring != nil {
			s.wiring.Close()
		}
		for _, stop := range []func(){s.stopSchedules, s.stopLate, s.stopRetention, s.releaseInvokes} {
			if stop != nil {
				stop()
			}
		}
		if s.engineStarted {
			s.eng.Stop()
		}
		for _, stop := range []func(){s.stopTracer, s.stopDeliveries} {
			if stop != nil {
				stop()
			}
		}
		if s.logs != nil {
			s.logs.close()
		}
		// After the engine: local functions' processes are stopped after
		// the last task that may use them.
		if s.tasks != nil && s.opts.tasks == nil {
			s.tasks.Close()
		}
		if s.drv != nil && s.opts.store == nil {
			if cerr := s.drv.Close(); err == nil {
				err = cerr
			}
		}
	})
	return err
}

// Reload reads the certificate and the credentials files again (serve
// does on SIGHUP); what does not load is logged, and what the server had
// stays.
func (s *Server) Reload() {
	if s.cert != nil {
		if err := s.cert.Reload(); err != nil {
			s.log.Error("serve: certificate not reloaded, the previous one stays", "error", err)
		} else {
			s.log.Info("serve: certificate reloaded", "certificate", s.cert.Describe(time.Now()))
		}
	}
	if s.gate != nil && s.cfg.Credentials != "" {
		creds, err := loadCredentials(s.cfg.Credentials, s.log)
		if err != nil {
			s.log.Error("serve: credentials not reloaded, the previous ones stay", "error", err)
		} else {
			s.gate.SetCredentials(creds)
			s.log.Info("serve: credentials reloaded", "credentials", s.cfg.Credentials, "access_keys", creds.Len())
		}
	}
}

// Reloadable reports whether Reload has anything to read again: a
// certificate or credentials.
func (s *Server) Reloadable() bool { return s.cert != nil || s.creds != nil }

// Handler serves everything the server serves: the Step Functions and
// Scheduler APIs, the console, the probes and /metrics.
func (s *Server) Handler() http.Handler { return s.handler }

// Service is the Step Functions API in process.
func (s *Server) Service() *service.Service { return s.svc }

// Engine is the server's engine.
func (s *Server) Engine() *engine.Engine { return s.eng }

// Store is the server's store.
func (s *Server) Store() store.Driver { return s.drv }

// Scheduler is the EventBridge Scheduler API in process.
func (s *Server) Scheduler() *scheduler.Service { return s.sched }

// Tracer is the executions' tracer; nil without WithTracing.
func (s *Server) Tracer() *tracing.Tracer { return s.tracer }

// tellFunctions makes the local functions' calls to Step Functions come
// here (AWS_ENDPOINT_URL_SFN), signed with a key the server takes: its
// credentials' default profile's, else their first.
func (s *Server) tellFunctions() {
	if s.local == nil {
		return
	}
	host := s.ln.Addr().String()
	if a, ok := s.ln.Addr().(*net.TCPAddr); ok && a.IP.IsUnspecified() {
		// Listening on every address: the functions call the loopback one.
		host = net.JoinHostPort("127.0.0.1", strconv.Itoa(a.Port))
	}
	var keyID, secret string
	if s.creds != nil {
		ids := s.creds.AccessKeyIDs()
		for _, id := range ids {
			if s.creds.Profile(id) == "default" {
				keyID = id
			}
		}
		if keyID == "" && len(ids) > 0 {
			keyID = ids[0]
		}
		secret, _ = s.creds.Secret(keyID)
	}
	s.local.SetServer(s.scheme+"://"+host, keyID, secret)
}

// Addr is the address the server listens on; nil before Start.
func (s *Server) Addr() net.Addr {
	if s.ln == nil {
		return nil
	}
	return s.ln.Addr()
}

// URL is the server's base URL, http://host:port (https:// with TLS);
// empty before Start.
func (s *Server) URL() string {
	if s.ln == nil {
		return ""
	}
	return s.scheme + "://" + s.ln.Addr().String()
}

// Node is the server's name among the servers of its database.
func (s *Server) Node() string { return s.node }

// Where says where the server's data is: a SQLite file's absolute path,
// or a PostgreSQL URL without its password.
func (s *Server) Where() string { return s.where }

// startRetention runs the deletion of old executions until the returned
// function is called, which waits for a batch under way.
func startRetention(ctx context.Context, cfg *config.Serve, st retention.Store, eng *engine.Engine, met *metrics.Metrics, log *slog.Logger) (stop func(), err error) {
	var onDeleted func(int, time.Duration)
	if met != nil {
		onDeleted = met.RetentionDeleted
	}
	cleaner, err := retention.New(retention.Config{
		OnDeleted: onDeleted,
		Store:     st,
		Period:    cfg.Retention,
		Interval:  cfg.RetentionInterval,
		Ready:     eng.Resumed(),
		Leads:     eng.Leads,
		// Stop dates are stamped in execution time.
		Now:    eng.Now,
		Logger: log,
	})
	if err != nil {
		return nil, err
	}
	log.Info("retention: executions are deleted after they ended", "retention", config.FormatDays(cfg.Retention),
		"interval", config.FormatDays(cfg.RetentionInterval))
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() { cleaner.Run(rctx); close(done) }()
	return func() { cancel(); <-done }, nil
}

// loadCredentials reads a shared-credentials file, and warns when others
// than its owner may read it.
func loadCredentials(path string, log *slog.Logger) (*sigv4auth.Credentials, error) {
	creds, err := sigv4auth.LoadCredentials(path)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o077 != 0 {
		log.Warn("serve: the credentials file can be read by others than its owner", "credentials", path, "mode", fi.Mode().Perm().String())
	}
	return creds, nil
}

// lastFired is the latest slot any schedule fired (zero when none).
func lastFired(ctx context.Context, exec store.ScheduleStore) (time.Time, error) {
	var last time.Time
	p := &store.ScheduleListParams{Limit: 500}
	for {
		rows, err := exec.ScheduleList(ctx, p)
		if err != nil {
			return time.Time{}, err
		}
		for _, row := range rows {
			if row.LastFired != nil && row.LastFired.After(last) {
				last = *row.LastFired
			}
		}
		if len(rows) < p.Limit {
			return last, nil
		}
		p.AfterGroup, p.AfterName = rows[len(rows)-1].GroupName, rows[len(rows)-1].Name
	}
}
